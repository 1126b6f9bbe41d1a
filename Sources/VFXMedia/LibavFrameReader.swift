import CFFmpeg
import Foundation
import VFXCore
import VFXPipeline

/// Demuxes a file with libavformat and decodes its video stream with libavcodec, one `AVFrame` at a time.
/// Audio packets are kept for an attached writer (`attachAudio`).
final class LibavDecoder {
    let name: String
    let containerName: String
    /// From the stream's display matrix; for an image, from its first frame's (a JPEG's EXIF orientation).
    private(set) var rotation: Rotation
    let timeBase: AVRational
    let frameRate: FrameRate?
    let duration: MediaTime?
    let expectedFrameCount: Int?
    let isImage: Bool
    /// A JPEG photo: FFmpeg decodes a cut-off one without an error, so the reader checks its end marker.
    private let isJPEG: Bool
    /// The frame `receiveFrame` fills.
    let frame: Frame

    private var formatContext: UnsafeMutablePointer<AVFormatContext>?
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private let videoIndex: Int32
    private let audioIndex: Int32
    private let declaredFrameCount: Int
    /// Where the video should end (in `timeBase` ticks), when the container says.
    private let declaredEnd: Int64?
    /// The end of the last decoded frame (timestamp + duration), in `timeBase` ticks.
    private var decodedEnd: Int64?
    private let packet: Packet
    private var videoPacketsRead = 0
    private var draining = false
    private var finished = false
    /// False until the reader's first frame is taken: audio read before that waits in `earlyAudio`.
    private var started = false
    private var earlyAudio: [Packet] = []
    private var audioTrack: AudioTrack?

    /// Opens `url` (a path, or `pipe:0`); `name` names it in errors.
    init(url: String, name: String, threads: Int) throws {
        FFmpegLog.configure()
        self.name = name
        guard let packet = Packet(), let frame = Frame() else {
            throw MediaError.unreadable(path: name, reason: "out of memory")
        }
        self.packet = packet
        self.frame = frame
        var context: UnsafeMutablePointer<AVFormatContext>?
        var status = avformat_open_input(&context, url, nil, nil)
        guard status >= 0, let context else {
            throw MediaError.corrupt(path: name, reason: ffmpegMessage(status))
        }
        formatContext = context
        status = avformat_find_stream_info(context, nil)
        guard status >= 0 else {
            avformat_close_input(&formatContext)
            throw MediaError.corrupt(path: name, reason: ffmpegMessage(status))
        }
        var codec: UnsafePointer<AVCodec>?
        let videoIndex = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)
        guard videoIndex >= 0, let codec, let stream = context.pointee.streams[Int(videoIndex)] else {
            avformat_close_input(&formatContext)
            throw videoIndex == averrorDecoderNotFound
                ? MediaError.unsupportedInput(path: name, reason: "no decoder for its video codec")
                : MediaError.noVideoStream(path: name)
        }
        self.videoIndex = videoIndex
        audioIndex = max(-1, av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, videoIndex, nil, 0))
        timeBase = stream.pointee.time_base
        containerName = String(cString: context.pointee.iformat.pointee.name)

        guard let decoder = avcodec_alloc_context3(codec) else {
            avformat_close_input(&formatContext)
            throw MediaError.unreadable(path: name, reason: "out of memory")
        }
        self.decoder = decoder
        avcodec_parameters_to_context(decoder, stream.pointee.codecpar)
        decoder.pointee.thread_count = Int32(clamping: threads)
        decoder.pointee.pkt_timebase = timeBase
        status = avcodec_open2(decoder, codec, nil)
        guard status >= 0 else {
            avcodec_free_context(&self.decoder)
            avformat_close_input(&formatContext)
            throw MediaError.unsupportedInput(path: name, reason: "cannot open the video decoder: \(ffmpegMessage(status))")
        }

        if let matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, nil) {
            rotation = Rotation(displayMatrix: UnsafeRawPointer(matrix).assumingMemoryBound(to: Int32.self))
        } else {
            rotation = .none
        }
        isImage = containerName.hasSuffix("_pipe") || containerName == "image2"
        isJPEG = isImage && stream.pointee.codecpar.pointee.codec_id == AV_CODEC_ID_MJPEG
        frameRate = isImage ? nil : (FrameRate(stream.pointee.avg_frame_rate) ?? FrameRate(stream.pointee.r_frame_rate))
        if let streamDuration = MediaTime(ticks: stream.pointee.duration, timeBase: timeBase), streamDuration.value > 0 {
            duration = streamDuration
        } else if context.pointee.duration > 0 {
            duration = MediaTime(value: context.pointee.duration, timescale: AV_TIME_BASE)
        } else {
            duration = nil
        }
        declaredFrameCount = Int(stream.pointee.nb_frames)
        declaredEnd = isImage ? nil : LibavDecoder.declaredEnd(of: stream, in: context, timeBase: timeBase)
        if isImage {
            expectedFrameCount = 1
        } else if declaredFrameCount > 0 {
            expectedFrameCount = declaredFrameCount
        } else if let duration, let frameRate {
            expectedFrameCount = Int((duration.seconds * frameRate.framesPerSecond).rounded())
        } else {
            expectedFrameCount = nil
        }
    }

    deinit {
        avcodec_free_context(&decoder)
        avformat_close_input(&formatContext)
        audioTrack?.packets.close()
    }

    /// The audio stream's codec name, nil without audio.
    var audioCodec: String? {
        guard audioIndex >= 0, let stream = formatContext?.pointee.streams[Int(audioIndex)] else { return nil }
        return String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id))
    }

    /// Starts keeping the audio track for a writer; nil without audio or once frames were taken.
    func attachAudio() -> AudioTrack? {
        guard audioIndex >= 0, !started, audioTrack == nil, let formatContext,
              let stream = formatContext.pointee.streams[Int(audioIndex)],
              let track = AudioTrack(copying: stream.pointee.codecpar, timeBase: stream.pointee.time_base) else { return nil }
        for packet in earlyAudio { track.packets.push(packet) }
        earlyAudio = []
        audioTrack = track
        return track
    }

    /// Marks the reader's first frame as taken: audio read from now on is kept only for an attached track.
    func start() {
        guard !started else { return }
        started = true
        earlyAudio = []
    }

    /// Decodes until a frame is in `frame`; false at the end of the stream. `delivered` counts the frames
    /// returned so far, for error messages.
    func receiveFrame(delivered: Int) throws -> Bool {
        guard let decoder, let formatContext, !finished else { return false }
        while true {
            let received = avcodec_receive_frame(decoder, frame.pointer)
            if received >= 0 {
                // The decoder hid damaged data (error concealment) or marks the frame corrupt: a broken
                // file, even if the picture came out.
                if frame.pointer.pointee.decode_error_flags != 0 || frame.pointer.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 {
                    av_frame_unref(frame.pointer)
                    throw MediaError.corrupt(path: name, reason: "frame \(delivered + 1) has damaged data")
                }
                if isImage, rotation == .none,
                   let matrix = av_frame_get_side_data(frame.pointer, AV_FRAME_DATA_DISPLAYMATRIX), matrix.pointee.size >= 36 {
                    rotation = Rotation(displayMatrix: UnsafeRawPointer(matrix.pointee.data).assumingMemoryBound(to: Int32.self))
                }
                noteFrameEnd()
                return true
            }
            // A draining decoder never asks for more input; treat it as the end rather than loop.
            if received == vfx_averror_eof() || (draining && received == vfx_averror_eagain()) {
                finishStream()
                try checkCompleteness()
                return false
            }
            guard received == vfx_averror_eagain() else {
                throw MediaError.corrupt(path: name, reason: "frame \(delivered + 1): \(ffmpegMessage(received))")
            }
            let read = av_read_frame(formatContext, packet.pointer)
            if read < 0 {
                if read != vfx_averror_eof() {
                    let atEnd = formatContext.pointee.pb != nil && avio_feof(formatContext.pointee.pb) != 0
                    throw atEnd ? MediaError.truncated(path: name, reason: ffmpegMessage(read))
                        : MediaError.corrupt(path: name, reason: "after frame \(delivered): \(ffmpegMessage(read))")
                }
                if declaredFrameCount > 0 && videoPacketsRead < declaredFrameCount {
                    throw MediaError.truncated(path: name, reason: "\(videoPacketsRead) of \(declaredFrameCount) frames present")
                }
                draining = true
                avcodec_send_packet(decoder, nil)
                continue
            }
            let index = packet.pointer.pointee.stream_index
            if index == videoIndex {
                videoPacketsRead += 1
                if isJPEG && !LibavDecoder.endsWithEndOfImage(packet.pointer.pointee) {
                    av_packet_unref(packet.pointer)
                    throw MediaError.truncated(path: name, reason: "the JPEG data ends before its end-of-image marker")
                }
                if packet.pointer.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 {
                    av_packet_unref(packet.pointer)
                    throw MediaError.truncated(path: name, reason: "frame \(videoPacketsRead) is incomplete")
                }
                let sent = avcodec_send_packet(decoder, packet.pointer)
                av_packet_unref(packet.pointer)
                if sent < 0 && sent != vfx_averror_eagain() {
                    throw MediaError.corrupt(path: name, reason: "frame \(videoPacketsRead): \(ffmpegMessage(sent))")
                }
            } else if index == audioIndex && (audioTrack != nil || !started) {
                keepAudio(packet)
            } else {
                av_packet_unref(packet.pointer)
            }
        }
    }

    private func noteFrameEnd() {
        let start = frame.pointer.pointee.best_effort_timestamp
        guard start != vfx_nopts_value() else { return }
        let length = frame.pointer.pointee.pkt_duration > 0 ? frame.pointer.pointee.pkt_duration
            : frameRate.map { av_rescale_q(1, AVRational(num: Int32(clamping: $0.denominator), den: Int32(clamping: $0.numerator)), timeBase) } ?? 0
        decodedEnd = max(decodedEnd ?? .min, start + length)
    }

    /// At the end of the stream: a video that stops well before the end its container declares was cut
    /// off (Matroska and others end a partial file without an error). Tolerance: two frames or 50 ms.
    private func checkCompleteness() throws {
        if let pb = formatContext?.pointee.pb, pb.pointee.error < 0 {
            throw MediaError.truncated(path: name, reason: ffmpegMessage(pb.pointee.error))
        }
        guard let declaredEnd, let decodedEnd, let frameRate else { return }
        let twoFrames = av_rescale_q(2, AVRational(num: Int32(clamping: frameRate.denominator), den: Int32(clamping: frameRate.numerator)),
                                     timeBase)
        let fiftyMilliseconds = av_rescale_q(50, AVRational(num: 1, den: 1000), timeBase)
        if decodedEnd < declaredEnd - max(twoFrames, fiftyMilliseconds) {
            let have = MediaTime(ticks: decodedEnd, timeBase: timeBase)?.seconds ?? 0
            let want = MediaTime(ticks: declaredEnd, timeBase: timeBase)?.seconds ?? 0
            throw MediaError.truncated(path: name, reason: String(format: "the video stops at %.2f s of %.2f s", have, want))
        }
    }

    /// The end time of the video stream the container declares, in `timeBase` ticks: the stream's own
    /// duration, Matroska's per-stream DURATION tag, or the file's duration when video is its only stream.
    /// A positive start time is not added: FFmpeg's Matroska muxer writes the end time as DURATION (a
    /// file trimmed to start at 1.74 s declares 8.70 s, not 10.44 s), so adding it would call complete
    /// files truncated; leaving it out only makes the check more lenient.
    private static func declaredEnd(of stream: UnsafeMutablePointer<AVStream>, in context: UnsafeMutablePointer<AVFormatContext>,
                                    timeBase: AVRational) -> Int64? {
        let start = stream.pointee.start_time == vfx_nopts_value() ? 0 : min(stream.pointee.start_time, 0)
        if stream.pointee.duration > 0 && stream.pointee.duration != vfx_nopts_value() {
            return start + stream.pointee.duration
        }
        if let tag = av_dict_get(stream.pointee.metadata, "DURATION", nil, 0), let value = tag.pointee.value {
            let parts = String(cString: value).split(separator: ":").compactMap { Double($0) }
            if parts.count == 3 {
                let seconds = parts[0] * 3600 + parts[1] * 60 + parts[2]
                return start + av_rescale_q(Int64(seconds * 1e6), AVRational(num: 1, den: 1_000_000), timeBase)
            }
        }
        if context.pointee.nb_streams == 1 && context.pointee.duration > 0 {
            return start + av_rescale_q(context.pointee.duration, vfx_time_base_q(), timeBase)
        }
        return nil
    }

    /// True when a JPEG's last scan is followed by an end-of-image marker (FF D9). Inside a scan an FF
    /// byte is always followed by 00 or a restart marker, so the first FF D9 after the last start-of-scan
    /// (FF DA) is the real end; a cut-off file has none. (An EXIF thumbnail's own markers come earlier.)
    static func endsWithEndOfImage(_ packet: AVPacket) -> Bool {
        guard let data = packet.data, packet.size >= 4 else { return false }
        let bytes = UnsafeBufferPointer(start: data, count: Int(packet.size))
        var lastScan = -1
        for index in 0..<(bytes.count - 1) where bytes[index] == 0xFF && bytes[index + 1] == 0xDA { lastScan = index }
        guard lastScan >= 0 else { return false }
        for index in (lastScan + 2)..<(bytes.count - 1) where bytes[index] == 0xFF && bytes[index + 1] == 0xD9 { return true }
        return false
    }

    /// Moves the audio packet in `source` to the attached track (or the early list).
    private func keepAudio(_ source: Packet) {
        guard let kept = Packet() else {
            av_packet_unref(source.pointer)
            return
        }
        av_packet_move_ref(kept.pointer, source.pointer)
        if let audioTrack { audioTrack.packets.push(kept) } else { earlyAudio.append(kept) }
    }

    /// Reads the audio packets left after the last video frame, then closes the audio track.
    private func finishStream() {
        finished = true
        guard let audioTrack, let formatContext else { return }
        while av_read_frame(formatContext, packet.pointer) >= 0 {
            if packet.pointer.pointee.stream_index == audioIndex { keepAudio(packet) } else { av_packet_unref(packet.pointer) }
        }
        audioTrack.packets.close()
    }
}

/// Reads video with libavformat and libavcodec: any container and codec FFmpeg knows, and still images.
///
/// Decoded frames are copied into pool buffers in the nearest VideoFX format (4:2:0 YUV → I420, NV12 →
/// NV12, RGBA → RGBA, BGRA → BGRA, gray → GRAY8); other layouts go through swscale to I420 (subsampled
/// YUV), GRAY8 (other gray) or RGBA (RGB, 4:2:2, 4:4:4, palettes).
final class LibavFrameReader: FrameReading {
    let decoder: LibavDecoder
    let format: FrameFormat
    private let pool: BufferPool
    private let converter = ImageConverter()
    /// The first frame, decoded in init to learn the real format (and to fail early on broken files).
    private var primed: VideoFrame?
    private var framesDelivered = 0

    init(url: String, name: String, threads: Int) throws {
        decoder = try LibavDecoder(url: url, name: name, threads: threads)
        guard try decoder.receiveFrame(delivered: 0) else {
            throw MediaError.corrupt(path: name, reason: "no decodable video frame")
        }
        let first = decoder.frame.pointer.pointee
        let sourceFormat = AVPixelFormat(rawValue: first.format)
        let pixelFormat = LibavFrameReader.nearestFormat(to: sourceFormat)
        let width = Int(first.width)
        let height = Int(first.height)
        var color = ColorDescription(space: first.colorspace, range: first.color_range,
                                     fallback: .typical(width: width, height: height))
        if [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P].contains(sourceFormat) || !pixelFormat.isYUV {
            color.range = .full
        }
        format = FrameFormat(pixelFormat: pixelFormat, width: width, height: height, color: color, frameRate: decoder.frameRate)
        pool = BufferPool(format: pixelFormat, width: width, height: height)
        primed = try makeVideoFrame()
    }

    var expectedFrameCount: Int? { decoder.expectedFrameCount }
    var bufferAllocations: Int { pool.allocationCount }

    func nextFrame() throws -> VideoFrame? {
        decoder.start()
        if let primed {
            self.primed = nil
            return primed
        }
        guard try decoder.receiveFrame(delivered: framesDelivered) else { return nil }
        return try makeVideoFrame()
    }

    /// Copies (or converts) `decoded` into a pool buffer.
    private func makeVideoFrame() throws -> VideoFrame {
        let decoded = decoder.frame
        let name = decoder.name
        let source = decoded.pointer.pointee
        let sourceFormat = AVPixelFormat(rawValue: source.format)
        let buffer = pool.makeBuffer()
        let sameLayout = LibavFrameReader.nearestFormat(to: sourceFormat) == format.pixelFormat
            && LibavFrameReader.isNative(sourceFormat) && Int(source.width) == format.width && Int(source.height) == format.height
        if sameLayout {
            for (index, plane) in buffer.planes.enumerated() {
                let (data, bytesPerRow) = decoded.plane(index)
                guard let data else { throw MediaError.corrupt(path: name, reason: "frame \(framesDelivered + 1) has no pixels") }
                let rowBytes = plane.width * plane.bytesPerPixel
                for y in 0..<plane.height {
                    plane.row(y).update(from: data + y * bytesPerRow, count: rowBytes)
                }
            }
        } else {
            let fallback = ColorDescription.typical(width: Int(source.width), height: Int(source.height))
            let sourceColor = ColorDescription(space: source.colorspace, range: source.color_range, fallback: fallback)
            let converted = converter.convert(
                .init(planes: ScalePlanes(decoded), format: sourceFormat, width: Int(source.width), height: Int(source.height),
                      color: sourceColor),
                into: .init(planes: ScalePlanes(buffer.planes), format: format.pixelFormat.ffmpeg, width: format.width,
                            height: format.height, color: format.color))
            guard converted else {
                let formatName = av_get_pix_fmt_name(sourceFormat).map { String(cString: $0) } ?? "unknown"
                throw MediaError.unsupportedInput(path: name, reason: "pixel format \(formatName)")
            }
        }
        let timeBase = decoder.timeBase
        let timestamp = MediaTime(ticks: source.best_effort_timestamp, timeBase: timeBase)
            ?? format.frameRate.map { MediaTime(value: Int64(framesDelivered) * Int64($0.denominator), timescale: Int32(clamping: $0.numerator)) }
        let duration = source.pkt_duration > 0 ? MediaTime(ticks: source.pkt_duration, timeBase: timeBase) : format.frameRate?.frameDuration
        framesDelivered += 1
        av_frame_unref(decoded.pointer)
        return VideoFrame(buffer: buffer, timestamp: timestamp, duration: duration, rotation: decoder.rotation, color: format.color)
    }

    /// FFmpeg formats copied without conversion.
    static func isNative(_ format: AVPixelFormat) -> Bool {
        [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_NV12, AV_PIX_FMT_RGBA, AV_PIX_FMT_BGRA, AV_PIX_FMT_GRAY8]
            .contains(format)
    }

    /// The VideoFX format closest to an FFmpeg format.
    static func nearestFormat(to format: AVPixelFormat) -> PixelFormat {
        switch format {
        case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P: return .i420
        case AV_PIX_FMT_NV12: return .nv12
        case AV_PIX_FMT_BGRA: return .bgra
        case AV_PIX_FMT_RGBA: return .rgba
        case AV_PIX_FMT_GRAY8: return .gray8
        default: break
        }
        guard let descriptor = av_pix_fmt_desc_get(format) else { return .rgba }
        let flags = descriptor.pointee.flags
        if descriptor.pointee.nb_components <= 2 && flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0
            && flags & UInt64(AV_PIX_FMT_FLAG_PAL) == 0 {
            return .gray8
        }
        if flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0 && flags & UInt64(AV_PIX_FMT_FLAG_PAL) == 0
            && descriptor.pointee.log2_chroma_w == 1 && descriptor.pointee.log2_chroma_h == 1 {
            return .i420
        }
        return .rgba
    }
}
