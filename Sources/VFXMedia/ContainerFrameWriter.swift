import CFFmpeg
import VFXCore

/// Writes video, and the source's audio and subtitle streams, into a container with libavformat: mp4,
/// mov, mkv, WebM, MPEG-TS, AVI or GIF, in any codec of `VideoCodec` the container holds.
///
/// Everything a caller can get wrong (a codec the container cannot hold, a pixel format or setting the
/// encoder lacks) is checked in `init`; the encoder opens with the first frame (its size and timescale).
/// Each audio or subtitle stream is copied when the container takes its codec, else re-encoded (audio to
/// the container's usual codec, text subtitles to its text format), else dropped and named in `tracks`.
/// Packets are taken from the streams' queues each time a frame is written and handed to
/// `av_interleaved_write_frame`, which orders them by timestamp.
final class ContainerFrameWriter: FrameWriting {
    /// What goes into one kind of container: the muxer, its usual video codec, the audio encoders to try
    /// (best first) and the text subtitle encoder for codecs it cannot hold.
    struct Recipe {
        var muxer: String
        var defaultCodec: VideoCodec
        var audioEncoders: [String]
        var subtitleEncoder: String?
        /// Codecs a muxer without a codec table (MPEG-TS) is known to take, by FFmpeg's codec name.
        var knownCodecs: Set<String> = []
        /// Codecs the muxer's table lists but its header writing refuses (FLAC in mp4 is "experimental";
        /// mov takes Opus and FLAC "only in MP4").
        var refusedCodecs: Set<String> = []
    }

    static let mp4 = Recipe(muxer: "mp4", defaultCodec: .h264, audioEncoders: ["aac"], subtitleEncoder: "mov_text",
                            refusedCodecs: ["flac"])
    static let mov = Recipe(muxer: "mov", defaultCodec: .h264, audioEncoders: ["aac"], subtitleEncoder: "mov_text",
                            refusedCodecs: ["flac", "opus"])
    static let matroska = Recipe(muxer: "matroska", defaultCodec: .h264, audioEncoders: ["libopus", "aac"], subtitleEncoder: "subrip")
    static let webm = Recipe(muxer: "webm", defaultCodec: .vp9, audioEncoders: ["libopus", "libvorbis"], subtitleEncoder: "webvtt")
    static let mpegts = Recipe(muxer: "mpegts", defaultCodec: .h264, audioEncoders: ["aac"], subtitleEncoder: nil,
                               knownCodecs: ["h264", "hevc", "aac", "mp3", "mp2", "ac3", "eac3", "opus", "dvb_subtitle", "dvb_teletext"])
    static let avi = Recipe(muxer: "avi", defaultCodec: .h264, audioEncoders: ["libmp3lame", "aac"], subtitleEncoder: nil)
    static let gif = Recipe(muxer: "gif", defaultCodec: .gif, audioEncoders: [], subtitleEncoder: nil)

    /// What happens to each audio and subtitle stream of the source, in file order.
    let tracks: [TrackOutcome]
    private let name: String
    private let recipe: Recipe
    private let videoCodec: UnsafePointer<AVCodec>
    private let encoderName: String
    private let settings: [(String, String)]
    private let bitrate: Int?
    /// The encoded pixel format; nil: chosen from the first frame (`defaultPixelFormat`).
    private var pixelFormat: AVPixelFormat?
    private let sourcePixelFormat: AVPixelFormat
    private let colorTags: ColorTags
    private let sampleAspectRatio: SampleAspectRatio
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var videoStream: UnsafeMutablePointer<AVStream>?
    private var outputTracks: [OutputTrack]
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

    /// Prepares writing to `url`: checks the codec against the container, the settings against the
    /// encoder, and plans the `tracks`; opens the encoder with the first frame.
    ///
    /// - Parameters:
    ///   - frameRate: the nominal rate (the time base when frames carry no timestamps).
    ///   - sourcePixelFormat: the source's pixel format, kept when the encoder takes it and `options` names none.
    ///   - colorTags: the source's tags, written where the frames keep its matrix (see `encoderColor`).
    ///   - extraSettings: encoder options (FFmpeg's names) set on top of `options` (a live stream's low-latency ones).
    init(url: String, name: String, recipe: Recipe, options: EncodingOptions, frameRate: FrameRate?, tracks sources: [SourceTrack],
         sourcePixelFormat: String = "yuv420p", colorTags: ColorTags = .unspecified,
         sampleAspectRatio: SampleAspectRatio = .square, extraSettings: [(String, String)] = []) throws {
        FFmpegLog.configure()
        self.name = name
        self.recipe = recipe
        requestedRate = frameRate
        threads = options.threads
        self.colorTags = colorTags
        self.sampleAspectRatio = sampleAspectRatio
        self.sourcePixelFormat = av_get_pix_fmt(sourcePixelFormat)
        let codec = options.codec ?? recipe.defaultCodec
        guard let encoder = codec.encoders.lazy.compactMap({ avcodec_find_encoder_by_name($0) }).first else {
            throw MediaError.encoderUnavailable(path: name, encoder: codec.encoders[0])
        }
        videoCodec = encoder
        encoderName = String(cString: encoder.pointee.name)
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
        do {
            let accepts = { (id: AVCodecID) in ContainerFrameWriter.accepts(context, recipe: recipe, codec: id) }
            guard accepts(encoder.pointee.id) else {
                let supported = VideoCodec.allCases.filter { candidate in
                    candidate.encoders.lazy.compactMap { avcodec_find_encoder_by_name($0) }.first.map { accepts($0.pointee.id) } ?? false
                }
                throw MediaError.codecNotInContainer(path: name, codec: codec.rawValue, container: recipe.muxer,
                                                     supported: supported.map(\.rawValue))
            }
            pixelFormat = try ContainerFrameWriter.checkedPixelFormat(options.pixelFormat, encoder: encoder, name: name)
            let (chosen, rate) = try ContainerFrameWriter.settings(options, encoder: encoder, name: name)
            settings = chosen.filter { setting in !extraSettings.contains { $0.0 == setting.0 } } + extraSettings
            bitrate = rate
            var planned: [OutputTrack] = []
            var outcomes: [TrackOutcome] = []
            for source in sources {
                let (track, outcome) = ContainerFrameWriter.plan(source, recipe: recipe, keepsAudio: options.keepsAudio, accepts: accepts)
                outcomes.append(outcome)
                if let track { planned.append(track) }
            }
            outputTracks = planned
            tracks = outcomes
        } catch {
            avformat_free_context(context)
            self.context = nil
            throw error
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
        guard let encoder, let pixelFormat, frame.width == width, frame.height == height else {
            throw MediaError.unsupportedFrame(path: name, reason: "frame \(frameCount + 1) is \(frame.width)x\(frame.height), "
                + "the video is \(width)x\(height)")
        }
        let input: Frame
        if frame.format.ffmpeg == pixelFormat {
            pointing.point(at: frame.planes, format: frame.format, width: width, height: height)
            input = pointing
        } else {
            guard av_frame_make_writable(converted.pointer) >= 0 else {
                throw MediaError.writeFailed(path: name, reason: "out of memory")
            }
            guard converter.convert(.init(planes: ScalePlanes(frame.planes), format: frame.format.ffmpeg, width: width,
                                          height: height, color: frame.color),
                                    into: .init(planes: ScalePlanes(converted), format: pixelFormat, width: width,
                                                height: height, color: ContainerFrameWriter.yuvColor(for: frame))) else {
                throw MediaError.unsupportedFrame(path: name, reason: "cannot convert \(frame.format) frames to \(pixelFormatName(pixelFormat))")
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
        try writeTrackPackets(final: false)
    }

    func finish() throws {
        if let openingError { throw openingError }
        guard headerWritten, let encoder, let context else {
            throw MediaError.unsupportedFrame(path: name, reason: "no frames were written")
        }
        avcodec_send_frame(encoder, nil)
        try writeVideoPackets()
        try writeTrackPackets(final: true)
        let status = av_write_trailer(context)
        guard status >= 0 else { throw MediaError.writeFailed(path: name, reason: ffmpegMessage(status)) }
        close()
    }

    /// Frees the encoders and the muxer (and closes the file).
    /// The encoded pixel format has alpha (for ProRes, also the 4444 profiles: the others leave it out).
    var keepsAlpha: Bool {
        guard let pixelFormat, let descriptor = av_pix_fmt_desc_get(pixelFormat),
              descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0 else { return false }
        return encoderName != "prores_ks" || settings.contains { $0.0 == "profile" && $0.1.hasPrefix("4444") }
    }

    func close() {
        avcodec_free_context(&encoder)
        for track in outputTracks { track.release() }
        if let context {
            if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
            avformat_free_context(context)
            self.context = nil
        }
    }

    /// True when the container takes `codec`: libavformat's answer, or for muxers that cannot say (MPEG-TS,
    /// GIF) the recipe's list.
    private static func accepts(_ context: UnsafeMutablePointer<AVFormatContext>, recipe: Recipe, codec: AVCodecID) -> Bool {
        let codecName = String(cString: avcodec_get_name(codec))
        if recipe.refusedCodecs.contains(codecName) { return false }
        let answer = avformat_query_codec(context.pointee.oformat, codec, FF_COMPLIANCE_NORMAL)
        if answer >= 0 { return answer == 1 }
        return recipe.knownCodecs.contains(codecName)
    }

    /// The pixel format named by the caller, checked against what the encoder takes.
    private static func checkedPixelFormat(_ requested: String?, encoder: UnsafePointer<AVCodec>, name: String) throws -> AVPixelFormat? {
        guard let requested else { return nil }
        let format = av_get_pix_fmt(requested)
        let encoderName = String(cString: encoder.pointee.name)
        guard format != AV_PIX_FMT_NONE else {
            throw MediaError.invalidSetting(path: name, reason: "unknown pixel format '\(requested)' (ffmpeg -pix_fmts lists them)")
        }
        let supported = supportedPixelFormats(encoder)
        guard supported.isEmpty || supported.contains(format) else {
            throw MediaError.invalidSetting(path: name, reason: "the \(encoderName) encoder does not take \(requested) "
                + "(it takes \(supported.map(pixelFormatName).joined(separator: ", ")))")
        }
        return format
    }

    /// The encoder options for `options` on top of the codec's defaults, and the bit rate; throws for a
    /// setting the encoder does not have or a value outside its range.
    private static func settings(_ options: EncodingOptions, encoder: UnsafePointer<AVCodec>,
                                 name: String) throws -> ([(String, String)], Int?) {
        let encoderName = String(cString: encoder.pointee.name)
        var settings = VideoCodec.defaults(for: encoderName)
        func set(_ key: String, _ value: String) {
            settings.removeAll { $0.0 == key }
            settings.append((key, value))
        }
        if let bitrate = options.bitrate {
            guard encoderName != "ffv1" && encoderName != "gif" else {
                throw MediaError.invalidSetting(path: name, reason: "--bitrate: the \(encoderName) encoder is lossless and has no bit rate")
            }
            guard encoderName != "prores_ks" else {
                throw MediaError.invalidSetting(path: name, reason: "--bitrate: ProRes sets its bit rate by profile (--preset proxy, lt, "
                    + "standard, hq, 4444)")
            }
            guard bitrate > 0 else { throw MediaError.invalidSetting(path: name, reason: "--bitrate must be positive") }
            // A bit rate without a CRF asks for average-bit-rate mode: drop the default CRF (and VP9's b=0).
            if options.crf == nil { settings.removeAll { $0.0 == "crf" } }
            settings.removeAll { $0.0 == "b" }
        }
        if let crf = options.crf {
            guard let option = findOption("crf", in: encoder) else {
                throw MediaError.invalidSetting(path: name, reason: "--crf: the \(encoderName) encoder has no CRF"
                    + (encoderName == "ffv1" || encoderName == "gif" ? " (it is lossless)"
                        : encoderName == "prores_ks" ? " (--preset picks its profile)" : " (use --bitrate)"))
            }
            let text = crf == crf.rounded() ? String(Int(crf)) : String(crf)
            // x264 and x265 declare any float but use 0…51 (x264 clamps, x265 refuses to open).
            let declared = option.pointee.min...min(option.pointee.max, 63)
            let range = encoderName == "libx264" || encoderName == "libx265" ? 0...51 : declared
            guard range.contains(crf) else {
                let low = range.lowerBound, high = range.upperBound
                // The value is not repeated: only the caller has it as it was typed.
                throw MediaError.invalidSetting(path: name, reason: "--crf is outside the \(encoderName) encoder's range "
                    + "\(Int(low))...\(Int(high))")
            }
            set("crf", text)
        }
        // ProRes writes alpha only in its 4444 profiles: a pixel format with alpha and no profile asked for gets 4444.
        if encoderName == "prores_ks", options.preset == nil, let requested = options.pixelFormat,
           let descriptor = av_pix_fmt_desc_get(av_get_pix_fmt(requested)), descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0 {
            set("profile", "4444")
        }
        if let preset = options.preset {
            switch encoderName {
            case "libx264", "libx265":
                let names = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
                guard names.contains(preset) else {
                    throw MediaError.invalidSetting(path: name, reason: "--preset: the \(encoderName) encoder has no preset '\(preset)' "
                        + "(it has \(names.joined(separator: ", ")))")
                }
                set("preset", preset)
            case "prores_ks":
                let profiles = ["proxy", "lt", "standard", "hq", "4444", "4444xq"]
                guard profiles.contains(preset) else {
                    throw MediaError.invalidSetting(path: name, reason: "--preset: ProRes profiles are \(profiles.joined(separator: ", ")), "
                        + "not '\(preset)'")
                }
                set("profile", preset)
            default:
                let key = findOption("preset", in: encoder) != nil ? "preset" : "cpu-used"
                guard let option = findOption(key, in: encoder) else {
                    throw MediaError.invalidSetting(path: name, reason: "--preset: the \(encoderName) encoder has no presets")
                }
                guard let value = Int(preset), Double(value) >= option.pointee.min, Double(value) <= option.pointee.max else {
                    throw MediaError.invalidSetting(path: name, reason: "--preset for \(encoderName) is its \(key), an integer in "
                        + "\(Int(option.pointee.min))...\(Int(option.pointee.max)), not '\(preset)'")
                }
                set(key, preset)
            }
        }
        return (settings, options.bitrate)
    }

    /// The encoder's private option `name`, nil when it has none.
    private static func findOption(_ name: String, in encoder: UnsafePointer<AVCodec>) -> UnsafePointer<AVOption>? {
        guard var privateClass = encoder.pointee.priv_class else { return nil }
        return withUnsafeMutablePointer(to: &privateClass) { pointer in
            av_opt_find(UnsafeMutableRawPointer(pointer), name, nil, 0, AV_OPT_SEARCH_FAKE_OBJ)
        }
    }

    /// The pixel formats an encoder lists (empty: it does not say).
    private static func supportedPixelFormats(_ encoder: UnsafePointer<AVCodec>) -> [AVPixelFormat] {
        guard var entry = encoder.pointee.pix_fmts else { return [] }
        var formats: [AVPixelFormat] = []
        while entry.pointee != AV_PIX_FMT_NONE {
            formats.append(entry.pointee)
            entry += 1
        }
        return formats
    }

    /// The encoded format when the caller names none: the source's if it is planar YUV and the encoder
    /// takes it (10-bit and 4:2:2 video stay so), else the codec's usual one, else the encoder's first.
    private func defaultPixelFormat() -> AVPixelFormat {
        let supported = ContainerFrameWriter.supportedPixelFormats(videoCodec)
        var source = sourcePixelFormat
        // The deprecated full-range "yuvj" formats are the plain ones with a full-range tag.
        let fullRangeTwins = [AV_PIX_FMT_YUVJ420P: AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ422P: AV_PIX_FMT_YUV422P,
                              AV_PIX_FMT_YUVJ444P: AV_PIX_FMT_YUV444P]
        source = fullRangeTwins[source] ?? source
        if let descriptor = av_pix_fmt_desc_get(source), descriptor.pointee.nb_components >= 3,
           descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL) == 0,
           descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) != 0, supported.contains(source) {
            return source
        }
        let usual: AVPixelFormat = switch encoderName {
        case "prores_ks": AV_PIX_FMT_YUV422P10LE
        case "gif": AV_PIX_FMT_RGB8
        default: AV_PIX_FMT_YUV420P
        }
        return supported.isEmpty || supported.contains(usual) ? usual : supported[0]
    }

    /// The colour a frame is converted to YUV with: its own matrix and, for YUV, its range; RGB frames
    /// become limited-range video, as encoders expect.
    private static func yuvColor(for frame: VideoFrame) -> ColorDescription {
        frame.format.isYUV ? frame.color : ColorDescription(matrix: frame.color.matrix, range: .limited)
    }

    /// Opens the video encoder for `frame`'s size and timing, adds the streams, writes the header.
    private func open(for frame: VideoFrame) throws {
        guard let context, let encoder = avcodec_alloc_context3(videoCodec) else {
            throw MediaError.writeFailed(path: name, reason: "out of memory")
        }
        self.encoder = encoder
        width = frame.width
        height = frame.height
        let format = pixelFormat ?? defaultPixelFormat()
        pixelFormat = format
        let formatName = pixelFormatName(format)
        if encoderName == "libx264" || encoderName == "libx265",
           let descriptor = av_pix_fmt_desc_get(format), descriptor.pointee.log2_chroma_w > 0 || descriptor.pointee.log2_chroma_h > 0,
           width % 2 != 0 || height % 2 != 0 {
            throw MediaError.encoderRefused(path: name, encoder: encoderName,
                                            reason: "\(width)x\(height) \(formatName) frames: chroma subsampling needs an even width and height")
        }
        let rate = requestedRate ?? frame.duration.flatMap { duration in
            duration.value > 0 ? FrameRate(Int(duration.timescale), Int(duration.value)) : nil
        } ?? FrameRate(25)
        let timeBase = frame.timestamp.map { AVRational(num: 1, den: $0.timescale) } ?? AVRational(num: Int32(clamping: rate.denominator),
                                                                                                  den: Int32(clamping: rate.numerator))
        frameTicks = max(1, av_rescale_q(1, AVRational(num: Int32(clamping: rate.denominator), den: Int32(clamping: rate.numerator)),
                                         timeBase))
        encoder.pointee.width = Int32(width)
        encoder.pointee.height = Int32(height)
        encoder.pointee.pix_fmt = format
        encoder.pointee.time_base = timeBase
        encoder.pointee.framerate = rate.rational
        encoder.pointee.sample_aspect_ratio = sampleAspectRatio.rational
        setColorTags(on: encoder, for: frame, format: format)
        encoder.pointee.thread_count = Int32(clamping: threads)
        if let bitrate { encoder.pointee.bit_rate = Int64(bitrate) }
        if context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            encoder.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        var options: OpaquePointer?
        for (key, value) in settings { av_dict_set(&options, key, value, 0) }
        // SVT-AV1 prints its banner and settings on standard error itself (not through FFmpeg's log) unless
        // its own SVT_LOG level says fatal errors only; a level the user set is kept.
        if encoderName == "libsvtav1" && !FFmpegLog.isVerbose { setenv("SVT_LOG", "0", 0) }
        FFmpegLog.clearLastError()
        let status = avcodec_open2(encoder, videoCodec, &options)
        av_dict_free(&options)
        guard status >= 0 else {
            let why = FFmpegLog.takeLastError() ?? ffmpegMessage(status)
            throw MediaError.encoderRefused(path: name, encoder: encoderName, reason: "\(width)x\(height) \(formatName) frames (\(why))")
        }
        guard let stream = avformat_new_stream(context, nil) else {
            throw MediaError.writeFailed(path: name, reason: "out of memory")
        }
        videoStream = stream
        avcodec_parameters_from_context(stream.pointee.codecpar, encoder)
        stream.pointee.time_base = timeBase
        stream.pointee.avg_frame_rate = rate.rational
        stream.pointee.sample_aspect_ratio = sampleAspectRatio.rational
        if frame.rotation != .none, let matrix = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, 36) {
            frame.rotation.writeDisplayMatrix(UnsafeMutableRawPointer(matrix).assumingMemoryBound(to: Int32.self))
        }
        if frame.format.ffmpeg != format {
            converted.pointer.pointee.format = format.rawValue
            converted.pointer.pointee.width = Int32(width)
            converted.pointer.pointee.height = Int32(height)
            guard av_frame_get_buffer(converted.pointer, 0) >= 0 else {
                throw MediaError.writeFailed(path: name, reason: "out of memory")
            }
        }
        let globalHeader = context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0
        for track in outputTracks { try track.addStream(to: context, globalHeader: globalHeader, name: name) }
        var io: UnsafeMutablePointer<AVIOContext>?
        let opened = avio_open(&io, context.pointee.url, AVIO_FLAG_WRITE)
        guard opened >= 0 else { throw MediaError.writeFailed(path: name, reason: ffmpegMessage(opened)) }
        context.pointee.pb = io
        FFmpegLog.clearLastError()
        let written = avformat_write_header(context, nil)
        guard written >= 0 else {
            throw MediaError.writeFailed(path: name, reason: FFmpegLog.takeLastError() ?? ffmpegMessage(written))
        }
        headerWritten = true
    }

    /// Writes the source's colour tags where the frames still use the matrix the reader mapped them to;
    /// otherwise (or for tags the source left unspecified) the tags of the frames' own description.
    private func setColorTags(on encoder: UnsafeMutablePointer<AVCodecContext>, for frame: VideoFrame, format: AVPixelFormat) {
        let isRGB = av_pix_fmt_desc_get(format).map { $0.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL) != 0 } ?? false
        if isRGB {
            encoder.pointee.colorspace = AVCOL_SPC_RGB
            encoder.pointee.color_range = AVCOL_RANGE_JPEG
        } else {
            let color = ContainerFrameWriter.yuvColor(for: frame)
            let keepsMatrix = colorTags.ffmpegMatrix != AVCOL_SPC_UNSPECIFIED
                && ColorDescription(space: colorTags.ffmpegMatrix, range: colorTags.ffmpegRange, fallback: color).matrix == color.matrix
            encoder.pointee.colorspace = keepsMatrix ? colorTags.ffmpegMatrix : color.ffmpegSpace
            encoder.pointee.color_range = color.ffmpegRange
        }
        let derived = ColorDescription(matrix: frame.color.matrix, range: frame.color.range)
        encoder.pointee.color_primaries = colorTags.ffmpegPrimaries != AVCOL_PRI_UNSPECIFIED ? colorTags.ffmpegPrimaries : derived.ffmpegPrimaries
        encoder.pointee.color_trc = colorTags.ffmpegTransfer != AVCOL_TRC_UNSPECIFIED ? colorTags.ffmpegTransfer : derived.ffmpegTransfer
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

    /// Muxes the audio and subtitle packets the reader has queued (and flushes re-encoders when `final`).
    private func writeTrackPackets(final: Bool) throws {
        guard let context else { return }
        for track in outputTracks {
            try track.write(final: final) { packet in
                let status = av_interleaved_write_frame(context, packet.pointer)
                guard status >= 0 else {
                    throw MediaError.writeFailed(path: self.name, reason: "\(track.source.kind.rawValue): \(ffmpegMessage(status))")
                }
            }
        }
    }

    /// What to do with `source` in this container: copy, re-encode (with which encoder) or drop.
    private static func plan(_ source: SourceTrack, recipe: Recipe, keepsAudio: Bool,
                             accepts: (AVCodecID) -> Bool) -> (OutputTrack?, TrackOutcome) {
        func outcome(_ action: TrackOutcome.Action) -> TrackOutcome {
            TrackOutcome(kind: source.kind, index: source.inputIndex, codec: source.codecName, action: action)
        }
        guard keepsAudio || source.kind != .audio else { return (nil, outcome(.dropped(reason: "audio not wanted"))) }
        if accepts(source.parameters.pointee.codec_id) {
            return (OutputTrack(source: source, encoder: nil), outcome(.copied))
        }
        if source.kind == .audio, avcodec_find_decoder(source.parameters.pointee.codec_id) == nil {
            // Neither copied nor re-encoded: the video is written alone, with a warning.
            return (nil, outcome(.dropped(reason: "no decoder for it, and \(recipe.muxer) cannot hold it as it is")))
        }
        let encoders = source.kind == .audio ? recipe.audioEncoders
            : source.isTextSubtitle ? [recipe.subtitleEncoder].compactMap { $0 } : []
        for encoderName in encoders {
            if let encoder = avcodec_find_encoder_by_name(encoderName), accepts(encoder.pointee.id) {
                return (OutputTrack(source: source, encoder: encoder), outcome(.reencoded(to: encoderName)))
            }
        }
        let what = source.kind == .audio ? "audio" : "subtitles"
        let reason = encoders.isEmpty && (source.kind == .audio || recipe.subtitleEncoder == nil)
            ? "\(recipe.muxer) cannot hold \(source.codecName) \(what)" : "\(recipe.muxer) cannot hold \(source.codecName)"
        return (nil, outcome(.dropped(reason: reason)))
    }
}

/// One audio or subtitle stream on its way into the container: copied, or through a re-encoder.
final class OutputTrack {
    let source: SourceTrack
    private let encoderCodec: UnsafePointer<AVCodec>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var audio: AudioTranscoder?
    private var subtitles: SubtitleTranscoder?

    init(source: SourceTrack, encoder: UnsafePointer<AVCodec>?) {
        self.source = source
        encoderCodec = encoder
    }

    /// Adds the output stream (and opens the re-encoder), with the source's language, title and disposition.
    func addStream(to context: UnsafeMutablePointer<AVFormatContext>, globalHeader: Bool, name: String) throws {
        guard let stream = avformat_new_stream(context, nil) else { throw MediaError.writeFailed(path: name, reason: "out of memory") }
        self.stream = stream
        if let encoderCodec, source.kind == .audio {
            let transcoder = try AudioTranscoder(track: source, codec: encoderCodec, globalHeader: globalHeader, name: name)
            avcodec_parameters_from_context(stream.pointee.codecpar, transcoder.encoder)
            stream.pointee.time_base = transcoder.encoder.pointee.time_base
            audio = transcoder
        } else if let encoderCodec {
            let transcoder = try SubtitleTranscoder(track: source, codec: encoderCodec, name: name)
            avcodec_parameters_from_context(stream.pointee.codecpar, transcoder.encoder)
            stream.pointee.time_base = source.timeBase
            subtitles = transcoder
        } else {
            avcodec_parameters_copy(stream.pointee.codecpar, source.parameters)
            stream.pointee.codecpar.pointee.codec_tag = 0
            stream.pointee.time_base = source.timeBase
        }
        av_dict_copy(&stream.pointee.metadata, source.metadata, 0)
        stream.pointee.disposition = source.disposition
    }

    /// Passes the queued packets (ready for the muxer, in the stream's time base) to `emit`; flushes the
    /// re-encoder when `final`.
    func write(final: Bool, emit: (Packet) throws -> Void) throws {
        guard let stream else { return }
        let index = stream.pointee.index
        let streamTimeBase = stream.pointee.time_base
        let sourceTimeBase = source.timeBase
        func send(_ packet: Packet, from timeBase: AVRational) throws {
            packet.pointer.pointee.stream_index = index
            packet.pointer.pointee.pos = -1
            av_packet_rescale_ts(packet.pointer, timeBase, streamTimeBase)
            try emit(packet)
        }
        for packet in source.packets.takeAll() {
            if let audio {
                try audio.transcode(packet) { try send($0, from: audio.encoder.pointee.time_base) }
            } else if let subtitles {
                try subtitles.transcode(packet) { try send($0, from: sourceTimeBase) }
            } else {
                try send(packet, from: sourceTimeBase)
            }
        }
        if final, let audio {
            try audio.finish { try send($0, from: audio.encoder.pointee.time_base) }
        }
    }

    func release() {
        audio = nil
        subtitles = nil
        stream = nil
    }
}

/// What a `MediaWriter` did with one audio or subtitle stream of its source.
///
/// ```swift
/// for track in writer.tracks { print(track) }   // "subtitle stream #2 (subrip) re-encoded to mov_text"
/// ```
public struct TrackOutcome: Sendable, Equatable, CustomStringConvertible {
    public enum Action: Sendable, Equatable {
        /// Packets copied unchanged.
        case copied
        /// Decoded and encoded again with the named encoder (the container cannot hold the codec).
        case reencoded(to: String)
        /// Not in the output, for the reason given.
        case dropped(reason: String)
    }

    public let kind: TrackKind
    /// The stream's index in the input file.
    public let index: Int
    public let codec: String
    public let action: Action

    public var description: String {
        let stream = "\(kind.rawValue) stream #\(index) (\(codec))"
        return switch action {
        case .copied: "\(stream) copied"
        case .reencoded(let encoder): "\(stream) re-encoded to \(encoder)"
        case .dropped(let reason): "\(stream) dropped: \(reason)"
        }
    }
}

/// FFmpeg's name of a pixel format.
func pixelFormatName(_ format: AVPixelFormat) -> String {
    av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "unknown"
}
