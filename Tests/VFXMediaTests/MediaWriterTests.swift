import Foundation
import Testing
import VFXCore
@testable import VFXMedia

/// Round trips through the writers, checked with ffprobe and FFmpeg's decode as the reference.
@Suite struct MediaWriterTests {
    /// Reads `input` and writes every frame to `output` with its audio; returns the writer.
    @discardableResult
    static func copy(_ input: String, to output: String) throws -> MediaWriter {
        let reader = try MediaReader(path: input)
        let writer = try MediaWriter(path: output, frameRate: reader.format.frameRate, audioFrom: reader)
        do {
            while let frame = try reader.nextFrame() { try writer.write(frame) }
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
        return writer
    }

    /// A 320×180 copy of bigbuckbunny.mp4 with its AAC audio (small enough to encode quickly).
    static func smallClipWithAudio(in folder: ScratchFolder) throws -> String {
        let path = folder.path("bunny-small.mp4")
        try Tool.run("ffmpeg", ["-nostdin", "-i", SampleMedia.path("bigbuckbunny.mp4"), "-vf", "scale=320:180",
                                "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "copy", path])
        return path
    }

    /// Frame count and size exact; duration within one frame (40 ms at 25 fps); every packet time equal
    /// to the source's within 1 ms (the timescale may change, the times may not).
    @Test(arguments: ["mp4", "mkv"])
    func videoRoundTripKeepsFramesAndTimes(ext: String) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = SampleMedia.path("bikes.mp4")
        let output = folder.path("bikes.\(ext)")
        try Self.copy(source, to: output)
        let ours = try Tool.probe(output, stream: "v:0")
        let theirs = try Tool.probe(source, stream: "v:0")
        #expect(ours["codec_name"] == "h264")
        #expect(ours["width"] == "640" && ours["height"] == "272")
        #expect(ours["nb_read_packets"] == "250")
        let ourTimes = try Tool.packetTimes(output, stream: "v:0")
        let sourceTimes = try Tool.packetTimes(source, stream: "v:0")
        #expect(ourTimes.count == sourceTimes.count)
        for (a, b) in zip(ourTimes, sourceTimes) { #expect(abs(a - b) < 0.001) }
        if ext == "mp4" {
            #expect(abs((Double(ours["duration"] ?? "") ?? 0) - (Double(theirs["duration"] ?? "") ?? 0)) <= 0.04)
        }
        #expect(folder.contents == ["bikes.\(ext)"])
    }

    /// mp4 and mkv take AAC as it is: the same packets (count and times) come out.
    @Test(arguments: ["mp4", "mkv"])
    func audioIsCopied(ext: String) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = try Self.smallClipWithAudio(in: folder)
        let output = folder.path("copy.\(ext)")
        let writer = try Self.copy(source, to: output)
        #expect(writer.audio == .copied(codec: "aac"))
        let audio = try Tool.probe(output, stream: "a:0")
        #expect(audio["codec_name"] == "aac")
        #expect(audio["nb_read_packets"] == (try Tool.probe(source, stream: "a:0"))["nb_read_packets"])
        let ourTimes = try Tool.packetTimes(output, stream: "a:0")
        let sourceTimes = try Tool.packetTimes(source, stream: "a:0")
        #expect(abs((ourTimes.last ?? 0) - (sourceTimes.last ?? 0)) < 0.001)
        #expect(try Tool.probe(output, stream: "v:0")["nb_read_packets"] == "132")
    }

    /// WebM cannot hold AAC: the audio is re-encoded (Opus) and lasts as long as the source's, within
    /// 30 ms (encoder priming and the last partial frame).
    @Test func webmReencodesAudio() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = try Self.smallClipWithAudio(in: folder)
        let output = folder.path("bunny.webm")
        let writer = try Self.copy(source, to: output)
        guard case .reencoded(from: "aac", to: let encoder) = writer.audio else {
            Issue.record("audio was \(writer.audio)")
            return
        }
        #expect(encoder == "libopus" || encoder == "libvorbis")
        let video = try Tool.probe(output, stream: "v:0")
        #expect(video["codec_name"] == "vp9" || video["codec_name"] == "vp8")
        #expect(video["nb_read_packets"] == "132")
        let decodedSeconds = try Tool.rawAudioSeconds(output)
        let sourceSeconds = try Tool.rawAudioSeconds(source)
        #expect(abs(decodedSeconds - sourceSeconds) < 0.03, "webm audio \(decodedSeconds) s, source \(sourceSeconds) s")
    }

    /// y4m written here, decoded by FFmpeg: the bytes of the frames that went in (lossless format).
    @Test func y4mWriteThenFFmpegReadIsExact() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = SampleMedia.path("carphone_pristine.mp4")
        let output = folder.path("carphone.y4m")
        try Self.copy(source, to: output)
        #expect(try Tool.rawFrames(output) == (try Tool.rawFrames(source)))
        let probe = try Tool.probe(output, stream: "v:0")
        #expect(probe["width"] == "176" && probe["height"] == "144")
    }

    /// RGBA frames (and converted NV12 ones) become I420 in y4m, as FFmpeg converts them (PSNR ≥ 45 dB:
    /// both are swscale with the same matrix; filter and rounding flags differ slightly).
    @Test func y4mConvertsRGBFrames() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = SampleMedia.path("astronaut.png")
        let output = folder.path("astronaut.y4m")
        try Self.copy(source, to: output)
        let ours = try Tool.rawFrames(output)
        let theirs = try Tool.rawFrames(source, pixelFormat: "yuv420p", filter: "scale=out_color_matrix=bt601:out_range=limited")
        #expect(ours.count == theirs.count)
        #expect(Self.psnr(ours, theirs) >= 45)
    }

    /// PNG in, PNG out: same size, RGB (no alpha added, no chroma subsampling), identical pixels.
    @Test func pngRoundTripIsExact() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = SampleMedia.path("astronaut.png")
        let output = folder.path("astronaut.png")
        try Self.copy(source, to: output)
        let probe = try Tool.probe(output, stream: "v:0")
        #expect(probe["codec_name"] == "png")
        #expect(probe["pix_fmt"] == "rgb24")
        #expect(probe["width"] == "512" && probe["height"] == "512")
        #expect(try Tool.rawFrames(output, pixelFormat: "rgb24") == (try Tool.rawFrames(source, pixelFormat: "rgb24")))
    }

    /// JPEG out: same size, decodes close to the PNG (PSNR ≥ 35 dB at quality 2 with 4:4:4 chroma).
    @Test func jpegWrite() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = SampleMedia.path("astronaut.png")
        let output = folder.path("astronaut.jpg")
        try Self.copy(source, to: output)
        let probe = try Tool.probe(output, stream: "v:0")
        #expect(probe["codec_name"] == "mjpeg")
        #expect(probe["width"] == "512" && probe["height"] == "512")
        #expect(Self.psnr(try Tool.rawFrames(output, pixelFormat: "rgb24"), try Tool.rawFrames(source, pixelFormat: "rgb24")) >= 35)
    }

    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return 0 }
        var sum = 0.0
        for index in a.indices {
            let difference = Double(a[index]) - Double(b[index])
            sum += difference * difference
        }
        return sum == 0 ? .infinity : 10 * log10(255 * 255 / (sum / Double(a.count)))
    }
}

extension Tool {
    /// `ffmpeg -f rawvideo` with a filter (for conversions done the same way on both sides).
    static func rawFrames(_ path: String, pixelFormat: String, filter: String) throws -> [UInt8] {
        [UInt8](try run("ffmpeg", ["-nostdin", "-i", path, "-vf", filter, "-f", "rawvideo", "-pix_fmt", pixelFormat, "-"]))
    }

    /// Seconds of audio FFmpeg decodes from the first audio stream (48 kHz mono float samples counted).
    static func rawAudioSeconds(_ path: String) throws -> Double {
        let bytes = try run("ffmpeg", ["-nostdin", "-i", path, "-vn", "-ac", "1", "-ar", "48000", "-f", "f32le", "-"])
        return Double(bytes.count / 4) / 48000
    }
}
