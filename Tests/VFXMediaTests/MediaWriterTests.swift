import Foundation
import VFXTestSupport
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
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("bigbuckbunny.mp4"), "-vf", "scale=320:180",
                                "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "copy", path])
        return path
    }

    /// Frame count and size exact; duration within one frame (40 ms at 25 fps); every packet time equal
    /// to the source's within 1 ms (the timescale may change, the times may not).
    @Test(arguments: ["mp4", "mkv"])
    func videoRoundTripKeepsFramesAndTimes(ext: String) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = TestMedia.path("bikes.mp4")
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
        #expect(try Self.countFrames(output) == 250)   // and the reader's completeness check accepts it
    }

    /// Names with a colon are files, not FFmpeg protocols: `take:1.mp4` in the current folder would
    /// otherwise be the unknown protocol "take". (Relative names without a folder, so the files are made in
    /// the current folder and removed.)
    @Test func namesWithColons() throws {
        let tag = UUID().uuidString.prefix(8)
        let input = ".vfx-test-take:\(tag).mp4"
        let output = ".vfx-test-out:\(tag).mp4"
        defer {
            unlink(input)
            unlink(output)
        }
        try FileManager.default.copyItem(atPath: TestMedia.path("carphone_pristine.mp4"), toPath: input)
        try Self.copy(input, to: output)
        #expect(try Self.countFrames(output) == 120)
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

    /// WebM cannot hold AAC: the audio is re-encoded (Opus) and decodes to as many seconds as the source,
    /// within one 20 ms Opus frame (the last frame is padded; measured equal).
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
        #expect(try Self.countFrames(output) == 132)
        let decodedSeconds = try Tool.rawAudioSeconds(output)
        let sourceSeconds = try Tool.rawAudioSeconds(source)
        #expect(abs(decodedSeconds - sourceSeconds) <= 0.02, "webm audio \(decodedSeconds) s, source \(sourceSeconds) s")
    }

    /// PCM audio cannot go into mp4 and is re-encoded to AAC; mov takes it as it is. The re-encoded track
    /// decodes to the source's length within one 1024-sample AAC frame (21 ms at 48 kHz).
    @Test(arguments: [("mp4", AudioOutcome.reencoded(from: "pcm_s16le", to: "aac")), ("mov", .copied(codec: "pcm_s16le"))])
    func pcmAudio(ext: String, outcome: AudioOutcome) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = folder.path("pcm.mkv")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("bigbuckbunny.mp4"), "-vf", "scale=320:180", "-c:v", "libx264",
                                "-preset", "ultrafast", "-c:a", "pcm_s16le", source])
        let output = folder.path("out.\(ext)")
        let writer = try Self.copy(source, to: output)
        #expect(writer.audio == outcome)
        #expect(try Tool.probe(output, stream: "v:0")["nb_read_packets"] == "132")
        let seconds = try Tool.rawAudioSeconds(output)
        let sourceSeconds = try Tool.rawAudioSeconds(source)
        #expect(abs(seconds - sourceSeconds) <= 0.0214, "\(seconds) s against \(sourceSeconds) s")
    }

    /// Re-encoding keeps every channel: 5.1 AAC into WebM becomes 6-channel Opus of the same length
    /// (within one 20 ms Opus frame).
    @Test func surroundAudioKeepsItsChannels() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = folder.path("surround.mp4")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), "-f", "lavfi", "-i",
                                "sine=frequency=440:duration=4,aformat=channel_layouts=5.1", "-c:v", "copy", "-c:a", "aac",
                                "-shortest", source])
        #expect(try Tool.probe(source, stream: "a:0")["channels"] == "6")
        let output = folder.path("surround.webm")
        let writer = try Self.copy(source, to: output)
        #expect(writer.audio == .reencoded(from: "aac", to: "libopus"))
        #expect(try Tool.probe(output, stream: "a:0")["channels"] == "6")
        #expect(abs((try Tool.rawAudioSeconds(output)) - (try Tool.rawAudioSeconds(source))) <= 0.02)
    }

    /// y4m written here, decoded by FFmpeg: the bytes of the frames that went in (lossless format).
    @Test func y4mWriteThenFFmpegReadIsExact() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = TestMedia.path("carphone_pristine.mp4")
        let output = folder.path("carphone.y4m")
        try Self.copy(source, to: output)
        #expect(try Tool.rawFrames(output) == (try Tool.rawFrames(source)))
        let probe = try Tool.probe(output, stream: "v:0")
        #expect(probe["width"] == "176" && probe["height"] == "144")
    }

    /// RGBA frames become I420 in y4m, as FFmpeg converts them: PSNR ≥ 50 dB (measured 60: both are
    /// swscale with the same matrix; the rounding and chroma filter flags differ).
    @Test func y4mConvertsRGBFrames() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = TestMedia.path("astronaut.png")
        let output = folder.path("astronaut.y4m")
        try Self.copy(source, to: output)
        let ours = try Tool.rawFrames(output)
        let theirs = try Tool.rawFrames(source, pixelFormat: "yuv420p", filter: "scale=out_color_matrix=bt601:out_range=limited")
        #expect(ours.count == theirs.count)
        #expect(Self.psnr(ours, theirs) >= 50)
    }

    /// PNG in, PNG out: same size, RGB (no alpha added, no chroma subsampling), identical pixels.
    @Test func pngRoundTripIsExact() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = TestMedia.path("astronaut.png")
        let output = folder.path("astronaut.png")
        try Self.copy(source, to: output)
        let probe = try Tool.probe(output, stream: "v:0")
        #expect(probe["codec_name"] == "png")
        #expect(probe["pix_fmt"] == "rgb24")
        #expect(probe["width"] == "512" && probe["height"] == "512")
        #expect(try Tool.rawFrames(output, pixelFormat: "rgb24") == (try Tool.rawFrames(source, pixelFormat: "rgb24")))
    }

    /// JPEG out: same size, decodes close to the PNG: PSNR ≥ 38 dB (measured 40.2 at quality 2 with 4:4:4
    /// chroma; a lossy codec, so only a floor).
    @Test func jpegWrite() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = TestMedia.path("astronaut.png")
        let output = folder.path("astronaut.jpg")
        try Self.copy(source, to: output)
        let probe = try Tool.probe(output, stream: "v:0")
        #expect(probe["codec_name"] == "mjpeg")
        #expect(probe["width"] == "512" && probe["height"] == "512")
        #expect(Self.psnr(try Tool.rawFrames(output, pixelFormat: "rgb24"), try Tool.rawFrames(source, pixelFormat: "rgb24")) >= 38)
    }

    /// y4m to a pipe (what `-` writes to standard output): FFmpeg decodes the frames that went in.
    @Test func y4mToPipe() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = TestMedia.path("carphone_pristine.mp4")
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let readEnd = descriptors[0]
        let received = LockedData()
        let collector = Thread {
            let handle = FileHandle(fileDescriptor: readEnd, closeOnDealloc: true)
            received.set(handle.readDataToEndOfFile())
        }
        collector.start()
        let reader = try MediaReader(path: source)
        let writer = Y4MFrameWriter(descriptor: descriptors[1], ownsDescriptor: true, name: "standard output",
                                    frameRate: reader.format.frameRate)
        while let frame = try reader.nextFrame() { try writer.write(frame) }
        try writer.finish()
        received.wait()
        let output = folder.path("piped.y4m")
        try received.data.write(to: URL(fileURLWithPath: output))
        #expect(try Tool.rawFrames(output) == (try Tool.rawFrames(source)))
    }

    /// Frames come from the reader's pool: reading a whole clip while releasing each frame allocates only
    /// a few buffers (the first frame, the one in hand and the decoder's look-ahead), not one per frame.
    @Test(arguments: ["bikes.mp4", "carphone.y4m"])
    func readersReuseBuffers(name: String) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        var path = TestMedia.path(name)
        if name.hasSuffix(".y4m") {
            path = folder.path(name)
            try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), path])
        }
        let reader = try MediaReader(path: path)
        var frames = 0
        while try reader.nextFrame() != nil { frames += 1 }
        #expect(frames >= 120)
        #expect(reader.bufferAllocations <= 3)
    }

    static func countFrames(_ path: String) throws -> Int {
        let reader = try MediaReader(path: path)
        var count = 0
        while try reader.nextFrame() != nil { count += 1 }
        return count
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
