import CFFmpeg
import Foundation
import VFXCore
import VFXPipeline

/// Demuxes a file with libavformat and decodes its video stream with libavcodec, one `AVFrame` at a time.
/// Audio and subtitle packets are kept for an attached writer (`attachTracks`).
///
/// Containers whose timestamps may jump (MPEG-TS, and so TS files joined with `cat`) are read with one
/// running offset that makes every jump of more than a second backwards (or ten seconds forwards) continue
/// where the stream was, as FFmpeg's command does.
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
    /// The first audio stream (the one `audioCodec` names), -1 without audio.
    private let audioIndex: Int32
    /// The audio and subtitle streams, in file order: what `attachTracks` hands to a writer.
    private let passThroughIndices: [Int32]
    /// Streams no writer receives (data, attachments, a second video), for warnings.
    let ignoredStreams: [StreamSummary]
    /// The audio and subtitle streams, in file order.
    var passThroughStreams: [StreamSummary] {
        passThroughIndices.compactMap { index in
            guard let stream = formatContext?.pointee.streams[Int(index)] else { return nil }
            let kind: TrackKind = stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO ? .audio : .subtitle
            return StreamSummary(index: Int(index), kind: kind, codec: String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id)))
        }
    }
    /// The stream's colour tags and sample aspect ratio, and the decoder's own pixel format name.
    let colorTags: ColorTags
    let sampleAspectRatio: SampleAspectRatio?
    /// The file's start time in microseconds (0 when unknown): trimming counts from it, as FFmpeg's `-ss`.
    let startMicroseconds: Int64
    /// True once a seek happened: the packet count no longer tells whether the file is complete.
    private var seeked = false
    /// Packets of kept tracks are delivered when they start within [windowStart, windowEnd) microseconds,
    /// moved by `-shift` microseconds.
    private var windowStart: Int64 = .min
    private var windowEnd: Int64 = .max
    private var shift: Int64 = 0
    /// Timestamp discontinuity correction (MPEG-TS): the offset added, the latest decode time seen in
    /// any stream and in each one, all in microseconds.
    private let correctsDiscontinuities: Bool
    private var discontinuityOffset: Int64 = 0
    private var latestDecodeTime: Int64?
    private var latestDecodeTimes: [Int32: Int64] = [:]
    private let declaredFrameCount: Int
    /// Where the video should end (in `timeBase` ticks), when the container says.
    private let declaredEnd: Int64?
    /// The end of the last decoded frame (timestamp + duration), in `timeBase` ticks.
    private var decodedEnd: Int64?
    private let packet: Packet
    private var videoPacketsRead = 0
    private var draining = false
    private var finished = false
    /// False until the reader's first frame is taken: packets read before that wait in `earlyPackets`.
    private var started = false
    private var earlyPackets: [Packet] = []
    private var tracks: [Int32: SourceTrack] = [:]

    /// Opens `url` (a path, or `pipe:0`); `name` names it in errors. With `seekSeconds`, reading starts at
    /// the key frame before that time (counted from the file's start); the caller skips the frames before it.
    init(url: String, name: String, threads: Int, seekSeconds: Double? = nil) throws {
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
        var passThrough: [Int32] = [], ignored: [StreamSummary] = []
        for index in 0..<Int32(context.pointee.nb_streams) where index != videoIndex {
            guard let other = context.pointee.streams[Int(index)] else { continue }
            let type = other.pointee.codecpar.pointee.codec_type
            if type == AVMEDIA_TYPE_AUDIO || type == AVMEDIA_TYPE_SUBTITLE {
                passThrough.append(index)
            } else {
                let kind: TrackKind = switch type {
                case AVMEDIA_TYPE_VIDEO: .video
                case AVMEDIA_TYPE_ATTACHMENT: .attachment
                default: .data
                }
                // A cover picture (an mp3's or m4a's artwork) is part of the file's tags, not a stream to keep.
                if kind == .video && other.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 { continue }
                ignored.append(StreamSummary(index: Int(index), kind: kind,
                                             codec: String(cString: avcodec_get_name(other.pointee.codecpar.pointee.codec_id))))
            }
        }
        passThroughIndices = passThrough
        ignoredStreams = ignored
        audioIndex = passThrough.first { context.pointee.streams[Int($0)]?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO } ?? -1
        timeBase = stream.pointee.time_base
        containerName = String(cString: context.pointee.iformat.pointee.name)
        correctsDiscontinuities = context.pointee.iformat.pointee.flags & AVFMT_TS_DISCONT != 0
        startMicroseconds = context.pointee.start_time == vfx_nopts_value() ? 0 : context.pointee.start_time
        let parameters = stream.pointee.codecpar.pointee
        colorTags = ColorTags(primaries: parameters.color_primaries, transfer: parameters.color_trc,
                              matrix: parameters.color_space, range: parameters.color_range)
        sampleAspectRatio = SampleAspectRatio(av_guess_sample_aspect_ratio(context, stream, nil))

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
        if let seekSeconds, seekSeconds > 0, !isImage {
            let target = startMicroseconds + Int64(seekSeconds * 1e6)
            if avformat_seek_file(context, -1, .min, target, target, 0) >= 0 { seeked = true }
        }
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
    }

    /// The audio stream's codec name, nil without audio.
    var audioCodec: String? {
        guard audioIndex >= 0, let stream = formatContext?.pointee.streams[Int(audioIndex)] else { return nil }
        return String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id))
    }

    /// Starts keeping the audio and subtitle streams for a writer; empty once frames were taken or when
    /// already attached.
    func attachTracks() -> [SourceTrack] {
        guard !started, tracks.isEmpty, let formatContext else { return [] }
        for index in passThroughIndices {
            guard let stream = formatContext.pointee.streams[Int(index)] else { continue }
            let kind: TrackKind = stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO ? .audio : .subtitle
            if let track = SourceTrack(copying: stream, kind: kind) { tracks[index] = track }
        }
        let early = earlyPackets
        earlyPackets = []
        for packet in early { deliver(packet) }
        return passThroughIndices.compactMap { tracks[$0] }
    }

    /// Keeps only the audio and subtitle packets that start in [`from`, `until`) microseconds of the file's
    /// time line, and moves them to start at zero (`from` becomes 0). Set before the first frame is taken.
    func limitTracks(from: Int64, until: Int64?) {
        windowStart = from
        windowEnd = until ?? .max
        shift = from
    }

    /// Marks the reader's first frame as taken: packets read from now on are kept only for attached tracks.
    func start() {
        guard !started else { return }
        started = true
        earlyPackets = []
    }

    /// Ends reading early (a trimmed range is complete): the audio and subtitle packets still inside the
    /// window are read and delivered, up to a second of file beyond its end, since containers interleave
    /// streams only roughly.
    func stopReading() {
        guard !finished, let formatContext else { return }
        finished = true
        guard !tracks.isEmpty else { return }
        let margin: Int64 = 1_000_000
        while readPacket(formatContext) >= 0 {
            let index = packet.pointer.pointee.stream_index
            if tracks[index] != nil {
                deliver(packet)
            } else {
                let time = microseconds(packet.pointer.pointee.dts, stream: index)
                av_packet_unref(packet.pointer)
                if index == videoIndex, let time, windowEnd != .max, time > windowEnd + margin { return }
            }
        }
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
            let read = readPacket(formatContext)
            if read < 0 {
                if read != vfx_averror_eof() {
                    let atEnd = formatContext.pointee.pb != nil && avio_feof(formatContext.pointee.pb) != 0
                    throw atEnd ? MediaError.truncated(path: name, reason: ffmpegMessage(read))
                        : MediaError.corrupt(path: name, reason: "after frame \(delivered): \(ffmpegMessage(read))")
                }
                if !seeked && declaredFrameCount > 0 && videoPacketsRead < declaredFrameCount {
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
            } else if tracks[index] != nil || (!started && passThroughIndices.contains(index)) {
                keep(packet)
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

    /// Moves the packet in `source` to its attached track (or, before attaching, to the early list).
    private func keep(_ source: Packet) {
        if !tracks.isEmpty {
            deliver(source)
            return
        }
        guard let kept = Packet() else {
            av_packet_unref(source.pointer)
            return
        }
        av_packet_move_ref(kept.pointer, source.pointer)
        earlyPackets.append(kept)
    }

    /// Hands the packet in `source` to its track when it starts inside the window, moved by the shift;
    /// else drops it.
    private func deliver(_ source: Packet) {
        let index = source.pointer.pointee.stream_index
        guard let track = tracks[index] else {
            av_packet_unref(source.pointer)
            return
        }
        if windowStart != .min || windowEnd != .max {
            let time = microseconds(source.pointer.pointee.pts, stream: index)
                ?? microseconds(source.pointer.pointee.dts, stream: index) ?? windowStart
            guard time >= windowStart && time < windowEnd else {
                av_packet_unref(source.pointer)
                return
            }
        }
        guard let kept = Packet() else {
            av_packet_unref(source.pointer)
            return
        }
        av_packet_move_ref(kept.pointer, source.pointer)
        if shift != 0 {
            let ticks = av_rescale_q(shift, vfx_time_base_q(), track.timeBase)
            if kept.pointer.pointee.pts != vfx_nopts_value() { kept.pointer.pointee.pts -= ticks }
            if kept.pointer.pointee.dts != vfx_nopts_value() { kept.pointer.pointee.dts -= ticks }
        }
        track.packets.push(kept)
    }

    /// `ticks` of stream `index` in microseconds, nil when unset.
    private func microseconds(_ ticks: Int64, stream index: Int32) -> Int64? {
        guard ticks != vfx_nopts_value(), let stream = formatContext?.pointee.streams[Int(index)] else { return nil }
        return av_rescale_q(ticks, stream.pointee.time_base, vfx_time_base_q())
    }

    /// `av_read_frame` into `packet`, with timestamp jumps of a discontinuous container (MPEG-TS) removed:
    /// a decode time more than 1 s before the latest one of its own stream, or more than 10 s after it,
    /// moves the running offset so the file continues one frame after the latest time of any stream.
    /// (Each stream is compared with itself: audio may be muxed a second or more away from video.)
    private func readPacket(_ context: UnsafeMutablePointer<AVFormatContext>) -> Int32 {
        let status = av_read_frame(context, packet.pointer)
        guard status >= 0, correctsDiscontinuities else { return status }
        // MPEG-TS marks a packet corrupt when the continuity counter skips, which every join of two files
        // (`cat a.ts b.ts`) does, flagging the complete packet before the join. Damaged data is still
        // caught: the decoder flags frames it had to conceal.
        packet.pointer.pointee.flags &= ~AV_PKT_FLAG_CORRUPT
        let index = packet.pointer.pointee.stream_index
        guard let stream = context.pointee.streams[Int(index)], let raw = microseconds(packet.pointer.pointee.dts, stream: index)
        else { return status }
        var time = raw + discontinuityOffset
        // Sparse streams (subtitles) may go quiet for minutes: only audio and video tell a jump.
        let type = stream.pointee.codecpar.pointee.codec_type
        if type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO, let own = latestDecodeTimes[index], let latest = latestDecodeTime,
           time < own - 1_000_000 || time > own + 10_000_000 {
            let step = frameRate.map { Int64(1e6 / $0.framesPerSecond) } ?? 40_000
            discontinuityOffset += latest + step - time
            time = latest + step
        }
        latestDecodeTimes[index] = time
        latestDecodeTime = max(latestDecodeTime ?? time, time)
        if discontinuityOffset != 0 {
            let ticks = av_rescale_q(discontinuityOffset, vfx_time_base_q(), stream.pointee.time_base)
            packet.pointer.pointee.dts += ticks
            if packet.pointer.pointee.pts != vfx_nopts_value() { packet.pointer.pointee.pts += ticks }
        }
        return status
    }

    /// Reads the packets left after the last video frame for the attached tracks.
    private func finishStream() {
        finished = true
        guard !tracks.isEmpty, let formatContext else { return }
        while readPacket(formatContext) >= 0 {
            if tracks[packet.pointer.pointee.stream_index] != nil { deliver(packet) } else { av_packet_unref(packet.pointer) }
        }
    }
}

/// One non-video stream of an input: its index, kind and codec.
public struct StreamSummary: Sendable, Hashable, CustomStringConvertible {
    /// The stream's index in the input file.
    public let index: Int
    public let kind: TrackKind
    public let codec: String

    public var description: String { "\(kind.rawValue) stream #\(index) (\(codec))" }
}

/// Reads video with libavformat and libavcodec: any container and codec FFmpeg knows, and still images.
///
/// Decoded frames are copied into pool buffers in the nearest VideoFX format (4:2:0 YUV → I420, NV12 →
/// NV12, RGBA → RGBA, BGRA → BGRA, gray → GRAY8); other layouts go through swscale to I420 (subsampled
/// YUV), GRAY8 (other gray) or RGBA (RGB, 4:2:2, 4:4:4, palettes).
final class LibavFrameReader: FrameReading {
    let decoder: LibavDecoder
    let format: FrameFormat
    /// The decoded pixel format's name (`yuv420p10le`, `rgb48be`…) and the most bits any of its
    /// components has: above 8 the frames lose precision.
    let sourcePixelFormat: String
    let sourceBitDepth: Int
    private let pool: BufferPool
    private let converter = ImageConverter()
    /// The first frame, decoded in init to learn the real format (and to fail early on broken files).
    private var primed: VideoFrame?
    private var framesDelivered = 0
    /// Where the frame after the last one delivered starts: the time of a frame that comes without one.
    private var nextTimestamp: MediaTime?

    init(url: String, name: String, threads: Int, seekSeconds: Double?) throws {
        decoder = try LibavDecoder(url: url, name: name, threads: threads, seekSeconds: seekSeconds)
        guard try decoder.receiveFrame(delivered: 0) else {
            throw MediaError.corrupt(path: name, reason: "no decodable video frame")
        }
        let first = decoder.frame.pointer.pointee
        let sourceFormat = AVPixelFormat(rawValue: first.format)
        let pixelFormat = LibavFrameReader.nearestFormat(to: sourceFormat)
        sourcePixelFormat = av_get_pix_fmt_name(sourceFormat).map { String(cString: $0) } ?? "unknown"
        if let descriptor = av_pix_fmt_desc_get(sourceFormat) {
            sourceBitDepth = withUnsafeBytes(of: descriptor.pointee.comp) { components in
                (0..<Int(descriptor.pointee.nb_components)).map {
                    Int(components.load(fromByteOffset: $0 * MemoryLayout<AVComponentDescriptor>.stride, as: AVComponentDescriptor.self).depth)
                }.max() ?? 8
            }
        } else {
            sourceBitDepth = 8
        }
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
        let duration = source.pkt_duration > 0 ? MediaTime(ticks: source.pkt_duration, timeBase: timeBase) : format.frameRate?.frameDuration
        // A frame without a time (the last frame of some AVI files) follows the one before it.
        let timestamp = MediaTime(ticks: source.best_effort_timestamp, timeBase: timeBase)
            ?? nextTimestamp
            ?? format.frameRate.map { MediaTime(value: Int64(framesDelivered) * Int64($0.denominator), timescale: Int32(clamping: $0.numerator)) }
        nextTimestamp = timestamp.flatMap { start in duration.map { start + $0 } }
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
