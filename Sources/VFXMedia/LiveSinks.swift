import CFFmpeg
import Foundation
import VFXCore
import VFXPipeline

/// A sink that keeps nothing: `vfx live … -o null` measures the chain alone.
///
/// ```swift
/// let stats = try runner.run(into: NullSink())
/// ```
public final class NullSink: FrameSink {
    public private(set) var framesWritten = 0
    public init() {}
    public func write(_ frame: consuming VideoFrame) throws { framesWritten += 1 }
    public func finish() throws {}
    public func cancel() {}
}

/// A live stream to a server: H.264 with low-latency settings in MPEG-TS for `udp://` and `srt://`, in FLV for
/// `rtmp://`: libx264 `ultrafast` with the `zerolatency` tune (no look-ahead, no frame threads: each frame is
/// sent as soon as it is encoded), no B-frames, one encoder thread, and a keyframe every second, so a viewer who
/// joins or loses packets has a picture again within a second. The connection opens with the first frame; a
/// server that goes away makes `write` throw.
///
/// ```swift
/// let stream = try StreamSink(url: "srt://127.0.0.1:9000", frameRate: FrameRate(30))
/// try stream.write(frame)
/// ```
public final class StreamSink: FrameSink {
    public let url: String
    private let writer: ContainerFrameWriter
    private var done = false

    static let flv = ContainerFrameWriter.Recipe(muxer: "flv", defaultCodec: .h264, audioEncoders: ["aac"], subtitleEncoder: nil)

    public convenience init(url: String, frameRate: FrameRate?) throws {
        try self.init(url: url, frameRate: frameRate, tracks: [])
    }

    /// `tracks`: tracks fed while the video is written (a live run's audio, `LiveAudioTrack`).
    init(url: String, frameRate: FrameRate?, tracks: [SourceTrack]) throws {
        FFmpegLog.configure()
        avformat_network_init()
        let scheme = url.split(separator: ":").first.map { $0.lowercased() } ?? ""
        let recipe: ContainerFrameWriter.Recipe
        switch scheme {
        case "udp", "srt", "tcp": recipe = ContainerFrameWriter.mpegts
        case "rtmp": recipe = StreamSink.flv
        default: throw MediaError.unsupportedInput(path: url, reason: "stream scheme '\(scheme)' (udp, srt, rtmp)")
        }
        self.url = url
        let rate = frameRate ?? FrameRate(30)
        writer = try ContainerFrameWriter(url: url, name: url, recipe: recipe,
                                          options: EncodingOptions(codec: .h264, preset: "ultrafast", threads: 1),
                                          frameRate: rate, tracks: tracks, extraSettings: StreamSink.lowLatency(rate))
    }

    /// libx264's low-latency options: the `zerolatency` tune, no B-frames, a keyframe every second (`g`).
    static func lowLatency(_ rate: FrameRate) -> [(String, String)] {
        let perSecond = max(1, Int(rate.framesPerSecond.rounded()))
        return [("tune", "zerolatency"), ("bf", "0"), ("g", String(perSecond))]
    }

    public func write(_ frame: consuming VideoFrame) throws {
        try writer.write(frame)
    }

    public func finish() throws {
        guard !done else { return }
        done = true
        try writer.finish()
    }

    public func cancel() {
        done = true
        writer.close()
    }
}

/// A V4L2 output device (a v4l2loopback virtual camera) through libavdevice's v4l2 output: raw I420
/// (`YU12`), which browsers and call apps take from a loopback device made with `exclusive_caps=1`.
///
/// ```swift
/// let camera = try VirtualCameraSink(device: "/dev/video10")
/// try camera.write(frame)
/// ```
public final class VirtualCameraSink: FrameSink {
    public let device: String
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private let packet: Packet
    private let converter = ImageConverter()
    private var pool: BufferPool?
    private var size: (width: Int, height: Int)?
    private var frameIndex: Int64 = 0

    public init(device: String) throws {
        FFmpegLog.configure()
        avdevice_register_all()
        self.device = device
        guard FileManager.default.fileExists(atPath: device) else { throw MediaError.missingFile(path: device) }
        guard let packet = Packet() else { throw MediaError.writeFailed(path: device, reason: "out of memory") }
        self.packet = packet
        var context: UnsafeMutablePointer<AVFormatContext>?
        let status = avformat_alloc_output_context2(&context, nil, "video4linux2", device)
        guard status >= 0, let context else {
            throw MediaError.writeFailed(path: device, reason: "no v4l2 output device: \(ffmpegMessage(status))")
        }
        self.context = context
    }

    deinit { cancel() }

    public func write(_ frame: consuming VideoFrame) throws {
        guard let context else { throw MediaError.writeFailed(path: device, reason: "the device is closed") }
        if size == nil { try open(context, width: frame.width, height: frame.height) }
        guard let size, let stream, frame.width == size.width, frame.height == size.height else {
            throw MediaError.unsupportedFrame(path: device, reason: "a frame is \(frame.width)x\(frame.height)")
        }
        let i420: VideoFrame
        if frame.format == .i420 {
            i420 = frame
        } else {
            let pool = self.pool ?? BufferPool(format: .i420, width: size.width, height: size.height, capacity: 2)
            self.pool = pool
            let target = pool.makeBuffer()
            guard converter.convert(.init(planes: ScalePlanes(frame.planes), format: frame.format.ffmpeg, width: size.width,
                                          height: size.height, color: frame.color),
                                    into: .init(planes: ScalePlanes(target.planes), format: AV_PIX_FMT_YUV420P, width: size.width,
                                                height: size.height, color: .typical(width: size.width, height: size.height))) else {
                throw MediaError.unsupportedFrame(path: device, reason: "cannot convert \(frame.format) to I420")
            }
            i420 = VideoFrame(buffer: target, metadataFrom: frame)
        }
        // The device takes one tightly packed frame per write.
        let byteCount = i420.planes.reduce(0) { $0 + $1.width * $1.height }
        guard av_new_packet(packet.pointer, Int32(byteCount)) >= 0, let data = packet.pointer.pointee.data else {
            throw MediaError.writeFailed(path: device, reason: "out of memory")
        }
        defer { av_packet_unref(packet.pointer) }
        var offset = 0
        for plane in i420.planes {
            for y in 0..<plane.height {
                (data + offset).update(from: plane.row(y), count: plane.width)
                offset += plane.width
            }
        }
        packet.pointer.pointee.stream_index = stream.pointee.index
        packet.pointer.pointee.pts = frameIndex
        frameIndex += 1
        let status = av_write_frame(context, packet.pointer)
        guard status >= 0 else { throw MediaError.writeFailed(path: device, reason: ffmpegMessage(status)) }
    }

    private func open(_ context: UnsafeMutablePointer<AVFormatContext>, width: Int, height: Int) throws {
        guard let stream = avformat_new_stream(context, nil) else { throw MediaError.writeFailed(path: device, reason: "out of memory") }
        stream.pointee.codecpar.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        stream.pointee.codecpar.pointee.codec_id = AV_CODEC_ID_RAWVIDEO
        stream.pointee.codecpar.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        stream.pointee.codecpar.pointee.width = Int32(width)
        stream.pointee.codecpar.pointee.height = Int32(height)
        stream.pointee.time_base = AVRational(num: 1, den: 30)
        let status = avformat_write_header(context, nil)
        guard status >= 0 else { throw MediaError.writeFailed(path: device, reason: ffmpegMessage(status)) }
        self.stream = stream
        size = (width, height)
    }

    public func finish() throws {
        if let context, stream != nil { av_write_trailer(context) }
        cancel()
    }

    public func cancel() {
        if let context { avformat_free_context(context) }
        context = nil
        stream = nil
    }
}
