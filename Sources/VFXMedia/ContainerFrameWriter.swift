import CFFmpeg
import VFXCore

/// Writes video (and the source's audio) into a container with libavformat: H.264 (libx264) in mp4,
/// mov and mkv, VP9 (libvpx) in WebM.
///
/// The encoder opens with the first frame (its size, color and timescale). Audio packets are taken from
/// the attached `AudioTrack` each time a frame is written and muxed with it (`av_interleaved_write_frame`
/// orders them by timestamp): copied when the container accepts the codec, else re-encoded.
final class ContainerFrameWriter: FrameWriting {
    /// What goes into one kind of container: the muxer and the encoders to try, best first.
    struct Recipe {
        var muxer: String
        var videoEncoders: [String]
        var audioEncoders: [String]
        var videoOptions: [String: String]
    }

    static let mp4 = Recipe(muxer: "mp4", videoEncoders: ["libx264"], audioEncoders: ["aac"],
                            videoOptions: ["preset": "faster", "crf": "20"])
    static let mov = Recipe(muxer: "mov", videoEncoders: ["libx264"], audioEncoders: ["aac"],
                            videoOptions: ["preset": "faster", "crf": "20"])
    static let matroska = Recipe(muxer: "matroska", videoEncoders: ["libx264"], audioEncoders: ["libopus", "aac"],
                                 videoOptions: ["preset": "faster", "crf": "20"])
    static let webm = Recipe(muxer: "webm", videoEncoders: ["libvpx-vp9", "libvpx"], audioEncoders: ["libopus", "libvorbis"],
                             videoOptions: ["crf": "32", "b": "0", "deadline": "good", "cpu-used": "4", "row-mt": "1"])

    let audio: AudioOutcome
    private let name: String
    private let recipe: Recipe
    private let videoCodec: UnsafePointer<AVCodec>
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var videoStream: UnsafeMutablePointer<AVStream>?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private let audioTrack: AudioTrack?
    private var transcoder: AudioTranscoder?
    private let audioEncoderCodec: UnsafePointer<AVCodec>?
    private let requestedRate: FrameRate?
    private let threads: Int
    private let packet: Packet
    private let pointing: Frame
    private let converted: Frame
    private let converter = ImageConverter()
    private var frameTicks: Int64 = 1
    private var frameCount = 0
    private var lastPts: Int64 = .min
    private var headerWritten = false
    private var openingError: (any Error)?
    private var width = 0
    private var height = 0

    /// Prepares writing to `url`; checks the encoders now, opens them with the first frame.
    init(url: String, name: String, recipe: Recipe, frameRate: FrameRate?, audio track: AudioTrack?, threads: Int) throws {
        FFmpegLog.configure()
        self.name = name
        self.recipe = recipe
        requestedRate = frameRate
        self.threads = threads
        guard let codec = recipe.videoEncoders.lazy.compactMap({ avcodec_find_encoder_by_name($0) }).first else {
            throw MediaError.encoderUnavailable(path: name, encoder: recipe.videoEncoders[0])
        }
        videoCodec = codec
        guard let packet = Packet(), let pointing = Frame(), let converted = Frame() else {
            throw MediaError.writeFailed(path: name, reason: "out of memory")
        }
        self.packet = packet
        self.pointing = pointing
        self.converted = converted
        var context: UnsafeMutablePointer<AVFormatContext>?
        let status = avformat_alloc_output_context2(&context, nil, recipe.muxer, url)
        guard status >= 0, let context else {
            throw MediaError.writeFailed(path: name, reason: "no \(recipe.muxer) muxer: \(ffmpegMessage(status))")
        }
        self.context = context
        audioTrack = track
        if let track {
            let codecID = track.parameters.pointee.codec_id
            if avformat_query_codec(context.pointee.oformat, codecID, FF_COMPLIANCE_NORMAL) == 1 {
                audioEncoderCodec = nil
                audio = .copied(codec: track.codecName)
            } else {
                guard let codec = recipe.audioEncoders.lazy.compactMap({ avcodec_find_encoder_by_name($0) }).first else {
                    avformat_free_context(context)
                    self.context = nil
                    throw MediaError.encoderUnavailable(path: name, encoder: recipe.audioEncoders[0])
                }
                audioEncoderCodec = codec
                audio = .reencoded(from: track.codecName, to: String(cString: codec.pointee.name))
            }
        } else {
            audioEncoderCodec = nil
            audio = .none
        }
    }

    deinit { close() }

    func write(_ frame: VideoFrame) throws {
        if let openingError { throw openingError }
        if !headerWritten {
            do {
                try open(for: frame)
            } catch {
                // A half-opened muxer cannot be retried: keep the error for later calls.
                close()
                openingError = error
                throw error
            }
        }
        guard let encoder, frame.width == width, frame.height == height else {
            throw MediaError.unsupportedFrame(path: name, reason: "frame \(frameCount + 1) is \(frame.width)x\(frame.height), "
                + "the video is \(width)x\(height)")
        }
        let input: Frame
        if frame.format == .i420 {
            pointing.point(at: frame.planes, format: .i420, width: width, height: height)
            input = pointing
        } else {
            guard av_frame_make_writable(converted.pointer) >= 0 else {
                throw MediaError.writeFailed(path: name, reason: "out of memory")
            }
            let target = targetColor(for: frame)
            guard converter.convert(.init(planes: ScalePlanes(frame.planes), format: frame.format.ffmpeg, width: width,
                                          height: height, color: frame.color),
                                    into: .init(planes: ScalePlanes(converted), format: AV_PIX_FMT_YUV420P, width: width,
                                                height: height, color: target)) else {
                throw MediaError.unsupportedFrame(path: name, reason: "cannot convert \(frame.format) frames to yuv420p")
            }
            input = converted
        }
        var pts = frame.timestamp.map { $0.ticks(in: encoder.pointee.time_base) } ?? Int64(frameCount) * frameTicks
        if pts <= lastPts { pts = lastPts + 1 }
        lastPts = pts
        input.pointer.pointee.pts = pts
        let sent = avcodec_send_frame(encoder, input.pointer)
        guard sent >= 0 else { throw MediaError.writeFailed(path: name, reason: "video encoder: \(ffmpegMessage(sent))") }
        frameCount += 1
        try writeVideoPackets()
        try writeAudioPackets(final: false)
    }

    func finish() throws {
        if let openingError { throw openingError }
        guard headerWritten, let encoder, let context else {
            throw MediaError.unsupportedFrame(path: name, reason: "no frames were written")
        }
        avcodec_send_frame(encoder, nil)
        try writeVideoPackets()
        try writeAudioPackets(final: true)
        let status = av_write_trailer(context)
        guard status >= 0 else { throw MediaError.writeFailed(path: name, reason: ffmpegMessage(status)) }
        close()
    }

    /// Frees the encoder and the muxer (and closes the file).
    func close() {
        avcodec_free_context(&encoder)
        transcoder = nil
        if let context {
            if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
            avformat_free_context(context)
            self.context = nil
        }
    }

    /// The color a converted frame gets: the frame's own for YUV, the usual one for its size for RGB.
    private func targetColor(for frame: VideoFrame) -> ColorDescription {
        frame.format.isYUV ? frame.color : .typical(width: frame.width, height: frame.height)
    }

    /// Opens the video encoder for `frame`'s size and timing, adds the streams, writes the header.
    private func open(for frame: VideoFrame) throws {
        guard let context, let encoder = avcodec_alloc_context3(videoCodec) else {
            throw MediaError.writeFailed(path: name, reason: "out of memory")
        }
        self.encoder = encoder
        width = frame.width
        height = frame.height
        let codecName = String(cString: videoCodec.pointee.name)
        if codecName.hasPrefix("libx264") && (width % 2 != 0 || height % 2 != 0) {
            throw MediaError.unsupportedFrame(path: name, reason: "H.264 in 4:2:0 needs an even width and height, "
                + "the frames are \(width)x\(height)")
        }
        let rate = requestedRate ?? frame.duration.flatMap { duration in
            duration.value > 0 ? FrameRate(Int(duration.timescale), Int(duration.value)) : nil
        } ?? FrameRate(25)
        let timeBase = frame.timestamp.map { AVRational(num: 1, den: $0.timescale) } ?? AVRational(num: Int32(clamping: rate.denominator),
                                                                                                  den: Int32(clamping: rate.numerator))
        frameTicks = max(1, av_rescale_q(1, AVRational(num: Int32(clamping: rate.denominator), den: Int32(clamping: rate.numerator)),
                                         timeBase))
        let color = targetColor(for: frame)
        encoder.pointee.width = Int32(width)
        encoder.pointee.height = Int32(height)
        encoder.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        encoder.pointee.time_base = timeBase
        encoder.pointee.framerate = rate.rational
        encoder.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        encoder.pointee.colorspace = color.ffmpegSpace
        encoder.pointee.color_range = color.ffmpegRange
        encoder.pointee.color_primaries = color.ffmpegPrimaries
        encoder.pointee.color_trc = color.ffmpegTransfer
        encoder.pointee.thread_count = Int32(clamping: threads)
        if context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            encoder.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        var options: OpaquePointer?
        for (key, value) in recipe.videoOptions { av_dict_set(&options, key, value, 0) }
        let status = avcodec_open2(encoder, videoCodec, &options)
        av_dict_free(&options)
        guard status >= 0 else {
            throw MediaError.encoderUnavailable(path: name, encoder: "\(codecName) (\(ffmpegMessage(status)))")
        }
        guard let stream = avformat_new_stream(context, nil) else {
            throw MediaError.writeFailed(path: name, reason: "out of memory")
        }
        videoStream = stream
        avcodec_parameters_from_context(stream.pointee.codecpar, encoder)
        stream.pointee.time_base = timeBase
        stream.pointee.avg_frame_rate = rate.rational
        if frame.rotation != .none, let matrix = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, 36) {
            frame.rotation.writeDisplayMatrix(UnsafeMutableRawPointer(matrix).assumingMemoryBound(to: Int32.self))
        }
        if frame.format != .i420 {
            converted.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            converted.pointer.pointee.width = Int32(width)
            converted.pointer.pointee.height = Int32(height)
            guard av_frame_get_buffer(converted.pointer, 0) >= 0 else {
                throw MediaError.writeFailed(path: name, reason: "out of memory")
            }
        }
        try addAudioStream(to: context)
        var io: UnsafeMutablePointer<AVIOContext>?
        let opened = avio_open(&io, context.pointee.url, AVIO_FLAG_WRITE)
        guard opened >= 0 else { throw MediaError.writeFailed(path: name, reason: ffmpegMessage(opened)) }
        context.pointee.pb = io
        let written = avformat_write_header(context, nil)
        guard written >= 0 else { throw MediaError.writeFailed(path: name, reason: ffmpegMessage(written)) }
        headerWritten = true
    }

    private func addAudioStream(to context: UnsafeMutablePointer<AVFormatContext>) throws {
        guard let audioTrack, let stream = avformat_new_stream(context, nil) else { return }
        audioStream = stream
        if let audioEncoderCodec {
            let transcoder = try AudioTranscoder(track: audioTrack, codec: audioEncoderCodec,
                                                 globalHeader: context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0,
                                                 name: name)
            avcodec_parameters_from_context(stream.pointee.codecpar, transcoder.encoder)
            stream.pointee.time_base = transcoder.encoder.pointee.time_base
            self.transcoder = transcoder
        } else {
            avcodec_parameters_copy(stream.pointee.codecpar, audioTrack.parameters)
            stream.pointee.codecpar.pointee.codec_tag = 0
            stream.pointee.time_base = audioTrack.timeBase
        }
    }

    private func writeVideoPackets() throws {
        guard let encoder, let context, let videoStream else { return }
        while true {
            let received = avcodec_receive_packet(encoder, packet.pointer)
            if received == vfx_averror_eagain() || received == vfx_averror_eof() { return }
            guard received >= 0 else { throw MediaError.writeFailed(path: name, reason: "video encoder: \(ffmpegMessage(received))") }
            packet.pointer.pointee.stream_index = videoStream.pointee.index
            // Encoders leave the duration at 0; mp4 then cuts the last frame with an edit list.
            if packet.pointer.pointee.duration <= 0 { packet.pointer.pointee.duration = frameTicks }
            av_packet_rescale_ts(packet.pointer, encoder.pointee.time_base, videoStream.pointee.time_base)
            let status = av_interleaved_write_frame(context, packet.pointer)
            guard status >= 0 else { throw MediaError.writeFailed(path: name, reason: ffmpegMessage(status)) }
        }
    }

    /// Muxes the audio packets the reader has queued (all of them when `final`).
    private func writeAudioPackets(final: Bool) throws {
        guard let audioTrack, let audioStream, let context else { return }
        let index = audioStream.pointee.index
        let streamTimeBase = audioStream.pointee.time_base
        let emit: (Packet) throws -> Void = { packet in
            packet.pointer.pointee.stream_index = index
            packet.pointer.pointee.pos = -1
            let status = av_interleaved_write_frame(context, packet.pointer)
            guard status >= 0 else { throw MediaError.writeFailed(path: self.name, reason: "audio: \(ffmpegMessage(status))") }
        }
        for packet in audioTrack.packets.takeAll() {
            if let transcoder {
                try transcoder.transcode(packet) { encoded in
                    av_packet_rescale_ts(encoded.pointer, transcoder.encoder.pointee.time_base, streamTimeBase)
                    try emit(encoded)
                }
            } else {
                av_packet_rescale_ts(packet.pointer, audioTrack.timeBase, streamTimeBase)
                try emit(packet)
            }
        }
        if final, let transcoder {
            try transcoder.finish { encoded in
                av_packet_rescale_ts(encoded.pointer, transcoder.encoder.pointee.time_base, streamTimeBase)
                try emit(encoded)
            }
        }
    }
}
