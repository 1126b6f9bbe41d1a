import CFFmpeg
import Foundation
import VFXCore
import VFXPipeline

/// A generated test pattern (`testsrc:size=1280x720:rate=30`): color bars over a luma ramp, a bright square
/// that moves one step per frame, and the frame number written in binary as 24 black or white blocks along
/// the top edge (block i is white when bit i is set), so a reader can check order and loss. I420, BT.709
/// limited range for HD sizes (BT.601 below). No FFmpeg is needed.
///
/// ```swift
/// let pattern = try TestPatternSource(parsing: "testsrc:size=1920x1080:rate=30")
/// let frame = try pattern.nextFrame()      // frame 0 at 0 s, then 1/30 s, …
/// ```
public final class TestPatternSource: FrameSource {
    public let format: FrameFormat
    /// Frames to make; nil for no end.
    public let frameLimit: Int?
    private let background: PixelBuffer
    private let pool: BufferPool
    private var index = 0
    /// Width of one bit block (also its height).
    private let block: Int

    /// `size` must be even in both directions (4:2:0) and at least 64×64.
    public init(width: Int, height: Int, rate: FrameRate, frameLimit: Int? = nil) throws {
        guard width >= 64, height >= 64, width <= 8192, height <= 8192, width % 2 == 0, height % 2 == 0 else {
            throw MediaError.unsupportedInput(path: "testsrc", reason: "size \(width)x\(height) (even sizes from 64x64 to 8192x8192)")
        }
        guard rate.numerator > 0, rate.denominator > 0, rate.framesPerSecond <= 240 else {
            throw MediaError.unsupportedInput(path: "testsrc", reason: "rate \(rate) (1 to 240 frames per second)")
        }
        format = FrameFormat(pixelFormat: .i420, width: width, height: height, frameRate: rate)
        self.frameLimit = frameLimit
        block = max(2, (width / 24) & ~1)
        pool = BufferPool(format: .i420, width: width, height: height, capacity: 4)
        background = PixelBuffer(format: .i420, width: width, height: height)
        TestPatternSource.drawBackground(background)
    }

    /// Parses `testsrc[:size=WxH][:rate=N[/D]][:frames=N]` (defaults 1280x720, 30, endless).
    public convenience init(parsing text: String) throws {
        var width = 1280, height = 720, rate = FrameRate(30), limit: Int?
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).dropFirst()
        for part in parts {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { throw MediaError.unsupportedInput(path: text, reason: "expected key=value, got '\(part)'") }
            switch pair[0] {
            case "size", "s":
                let dims = pair[1].lowercased().split(separator: "x").compactMap { Int($0) }
                guard dims.count == 2 else { throw MediaError.unsupportedInput(path: text, reason: "size '\(pair[1])' (WxH)") }
                (width, height) = (dims[0], dims[1])
            case "rate", "r":
                let nums = pair[1].split(separator: "/").compactMap { Int($0) }
                guard (nums.count == 1 || nums.count == 2), nums.allSatisfy({ $0 > 0 }) else {
                    throw MediaError.unsupportedInput(path: text, reason: "rate '\(pair[1])' (N or N/D)")
                }
                rate = FrameRate(nums[0], nums.count == 2 ? nums[1] : 1)
            case "frames", "n":
                guard let count = Int(pair[1]), count > 0 else {
                    throw MediaError.unsupportedInput(path: text, reason: "frames '\(pair[1])' (a positive count)")
                }
                limit = count
            default:
                throw MediaError.unsupportedInput(path: text, reason: "unknown option '\(pair[0])' (size, rate, frames)")
            }
        }
        try self.init(width: width, height: height, rate: rate, frameLimit: limit)
    }

    public var expectedFrameCount: Int? { frameLimit }

    public func nextFrame() throws -> VideoFrame? {
        if let frameLimit, index >= frameLimit { return nil }
        let buffer = pool.makeBuffer()
        for (source, target) in zip(background.planes, buffer.planes) { source.copy(to: target) }
        let luma = buffer.planes[0]
        // The moving square: 1/8 of the height, one block per frame along a line.
        let side = max(8, format.height / 8) & ~1
        let travel = max(1, format.width - side)
        let x0 = (index * block / 2) % travel & ~1
        let y0 = format.height / 2 - side / 2
        for y in y0..<(y0 + side) { luma.row(y).advanced(by: x0).update(repeating: 235, count: side) }
        // The frame number in 24 bits along the top.
        for bit in 0..<24 {
            let value: UInt8 = (index >> bit) & 1 == 1 ? 235 : 16
            for y in 0..<block { luma.row(y).advanced(by: bit * block).update(repeating: value, count: block) }
        }
        let rate = format.frameRate ?? FrameRate(30)
        let timestamp = MediaTime(value: Int64(index) * Int64(rate.denominator), timescale: Int32(clamping: rate.numerator))
        index += 1
        return VideoFrame(buffer: buffer, timestamp: timestamp, duration: rate.frameDuration, color: format.color)
    }

    /// Bars of seven colors over the top two thirds, a gray ramp below.
    private static func drawBackground(_ buffer: PixelBuffer) {
        // Y, U, V of white, yellow, cyan, green, magenta, red, blue at 75 % (limited range, BT.709-like).
        let bars: [(UInt8, UInt8, UInt8)] = [(180, 128, 128), (168, 44, 136), (145, 147, 44), (133, 63, 52),
                                             (63, 193, 204), (51, 109, 212), (28, 212, 120)]
        let luma = buffer.planes[0], cb = buffer.planes[1], cr = buffer.planes[2]
        let barRows = luma.height * 2 / 3
        for y in 0..<luma.height {
            let row = luma.row(y)
            for x in 0..<luma.width {
                row[x] = y < barRows ? bars[x * 7 / luma.width].0 : UInt8(16 + x * 219 / max(1, luma.width - 1))
            }
        }
        for y in 0..<cb.height {
            let u = cb.row(y), v = cr.row(y)
            for x in 0..<cb.width {
                let bar = bars[x * 7 / cb.width]
                u[x] = y * 2 < barRows ? bar.1 : 128
                v[x] = y * 2 < barRows ? bar.2 : 128
            }
        }
    }
}

/// A V4L2 camera through libavdevice (`v4l2:/dev/video0`, options `size`, `rate`, `format` = `mjpeg` or
/// `yuyv422`): frames are decoded (MJPEG) or unpacked (YUYV) and converted to I420 in pool buffers, with
/// timestamps from the driver, relative to the first frame.
///
/// ```swift
/// let camera = try CameraSource(device: "/dev/video0", size: (1280, 720), rate: FrameRate(30), pixelFormat: "mjpeg")
/// ```
public final class CameraSource: FrameSource {
    public let device: String
    public let format: FrameFormat
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private let streamIndex: Int32
    private let timeBase: AVRational
    private let packet: Packet
    private let decoded: Frame
    private let pool: BufferPool
    private let converter = ImageConverter()
    private var firstTicks: Int64?
    private var lastTimestamp: MediaTime?

    public var expectedFrameCount: Int? { nil }

    public init(device: String, size: (width: Int, height: Int)? = nil, rate: FrameRate? = nil, pixelFormat: String? = nil) throws {
        FFmpegLog.configure()
        avdevice_register_all()
        self.device = device
        guard FileManager.default.fileExists(atPath: device) else { throw MediaError.missingFile(path: device) }
        guard let input = av_find_input_format("video4linux2") else {
            throw MediaError.unsupportedInput(path: device, reason: "this FFmpeg has no v4l2 input device")
        }
        guard let packet = Packet(), let decoded = Frame() else { throw MediaError.unreadable(path: device, reason: "out of memory") }
        self.packet = packet
        self.decoded = decoded
        var options: OpaquePointer?
        if let size { av_dict_set(&options, "video_size", "\(size.width)x\(size.height)", 0) }
        if let rate { av_dict_set(&options, "framerate", "\(rate.numerator)/\(rate.denominator)", 0) }
        if let pixelFormat { av_dict_set(&options, "input_format", pixelFormat, 0) }
        var context: UnsafeMutablePointer<AVFormatContext>?
        var status = avformat_open_input(&context, device, input, &options)
        av_dict_free(&options)
        guard status >= 0, let context else { throw MediaError.unreadable(path: device, reason: ffmpegMessage(status)) }
        self.context = context
        status = avformat_find_stream_info(context, nil)
        var codec: UnsafePointer<AVCodec>?
        let index = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)
        guard status >= 0, index >= 0, let codec, let stream = context.pointee.streams[Int(index)],
              let decoder = avcodec_alloc_context3(codec) else {
            avformat_close_input(&self.context)
            throw MediaError.noVideoStream(path: device)
        }
        self.decoder = decoder
        streamIndex = index
        timeBase = stream.pointee.time_base
        avcodec_parameters_to_context(decoder, stream.pointee.codecpar)
        decoder.pointee.thread_count = 1
        status = avcodec_open2(decoder, codec, nil)
        guard status >= 0 else {
            avcodec_free_context(&self.decoder)
            avformat_close_input(&self.context)
            throw MediaError.unsupportedInput(path: device, reason: "cannot open the camera's decoder: \(ffmpegMessage(status))")
        }
        let parameters = stream.pointee.codecpar.pointee
        let width = Int(parameters.width), height = Int(parameters.height)
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            avcodec_free_context(&self.decoder)
            avformat_close_input(&self.context)
            throw MediaError.unsupportedInput(path: device, reason: "frame size \(width)x\(height)")
        }
        let frameRate = FrameRate(stream.pointee.avg_frame_rate) ?? FrameRate(stream.pointee.r_frame_rate) ?? rate
        format = FrameFormat(pixelFormat: .i420, width: width, height: height, frameRate: frameRate)
        pool = BufferPool(format: .i420, width: width, height: height, capacity: 4)
    }

    deinit {
        avcodec_free_context(&decoder)
        avformat_close_input(&context)
    }

    public func nextFrame() throws -> VideoFrame? {
        guard let context, let decoder else { return nil }
        while true {
            let received = avcodec_receive_frame(decoder, decoded.pointer)
            if received >= 0 { return try makeFrame() }
            guard received == vfx_averror_eagain() else {
                if received == vfx_averror_eof() { return nil }
                throw MediaError.corrupt(path: device, reason: ffmpegMessage(received))
            }
            let read = av_read_frame(context, packet.pointer)
            if read == vfx_averror_eof() { return nil }
            guard read >= 0 else { throw MediaError.unreadable(path: device, reason: ffmpegMessage(read)) }
            defer { av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }
            let sent = avcodec_send_packet(decoder, packet.pointer)
            guard sent >= 0 || sent == vfx_averror_eagain() else {
                throw MediaError.corrupt(path: device, reason: ffmpegMessage(sent))
            }
        }
    }

    private func makeFrame() throws -> VideoFrame {
        defer { av_frame_unref(decoded.pointer) }
        let source = decoded.pointer.pointee
        let buffer = pool.makeBuffer()
        let sourceFormat = AVPixelFormat(rawValue: source.format)
        let sourceColor = ColorDescription(space: source.colorspace, range: source.color_range, fallback: format.color)
        guard converter.convert(.init(planes: ScalePlanes(decoded), format: sourceFormat, width: Int(source.width),
                                      height: Int(source.height), color: sourceColor),
                                into: .init(planes: ScalePlanes(buffer.planes), format: AV_PIX_FMT_YUV420P, width: format.width,
                                            height: format.height, color: format.color)) else {
            throw MediaError.unsupportedInput(path: device, reason: "cannot convert the camera's pixel format")
        }
        // Driver timestamps, relative to the first frame and kept increasing.
        let ticks = source.best_effort_timestamp
        let first = firstTicks ?? ticks
        firstTicks = first
        var timestamp = MediaTime(ticks: ticks - first, timeBase: timeBase) ?? MediaTime.zero
        if let lastTimestamp, !(lastTimestamp < timestamp) {
            timestamp = lastTimestamp + MediaTime(value: 1, timescale: 1_000_000)
        }
        lastTimestamp = timestamp
        return VideoFrame(buffer: buffer, timestamp: timestamp, duration: format.frameRate?.frameDuration, color: format.color)
    }
}
