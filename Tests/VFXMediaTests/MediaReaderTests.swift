import Foundation
import VFXTestSupport
import Testing
import VFXCore
@testable import VFXMedia

/// Reading real clips, checked against FFmpeg's own command-line decode and ffprobe.
@Suite struct MediaReaderTests {
    /// Decoded pixels must equal `ffmpeg -f rawvideo -pix_fmt yuv420p` byte for byte: both use the same
    /// libavcodec decoder, and I420 output is a plain copy of its planes (tolerance 0).
    @Test(arguments: ["carphone_pristine.mp4", "bikes.mp4"])
    func decodedPixelsEqualFFmpeg(name: String) throws {
        let path = TestMedia.path(name)
        let reader = try MediaReader(path: path)
        var bytes: [UInt8] = []
        var count = 0
        while let frame = try reader.nextFrame() {
            #expect(frame.format == .i420)
            bytes += frame.packedBytes
            count += 1
        }
        let reference = try Tool.rawFrames(path)
        #expect(count == reader.expectedFrameCount)
        #expect(bytes.count == reference.count)
        #expect(bytes == reference)
    }

    /// Other containers and codecs FFmpeg makes (mkv/H.264, webm/VP9, mov/H.264, avi/MPEG-4 part 2): the
    /// frame count the reader expects and delivers, and pixels equal to FFmpeg's decode (tolerance 0).
    @Test(arguments: ["mkv", "webm", "mov", "avi"])
    func otherContainersDecodeLikeFFmpeg(ext: String) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let path = folder.path("carphone.\(ext)")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), "-frames:v", "60", path])
        let reader = try MediaReader(path: path)
        var bytes: [UInt8] = []
        var count = 0
        while let frame = try reader.nextFrame() {
            bytes += frame.packedBytes
            count += 1
        }
        #expect(count == 60)
        #expect(reader.expectedFrameCount == 60)
        #expect(bytes == (try Tool.rawFrames(path)))
    }

    /// MPEG-4 part 2 with B-frames in AVI: FFmpeg gives the last frame no time (ffprobe prints N/A). It follows
    /// the frame before it by one frame duration, so times stay strictly increasing (tolerance: 1 µs of rounding).
    @Test func aFrameWithoutATimeFollowsTheOneBefore() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let path = folder.path("bframes.avi")
        try Tool.run("ffmpeg", ["-nostdin", "-f", "lavfi", "-i", "testsrc2=size=128x96:rate=25", "-frames:v", "12",
                                "-c:v", "mpeg4", "-bf", "2", path])
        let stamps = String(decoding: try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v",
                                                               "-show_entries", "frame=best_effort_timestamp_time",
                                                               "-of", "csv=p=0", path]), as: UTF8.self)
        let reference = stamps.split(separator: "\n")
        #expect(reference.last == "N/A")
        let reader = try MediaReader(path: path)
        var times: [Double] = []
        while let frame = try reader.nextFrame() { times.append(try #require(frame.timestamp).seconds) }
        #expect(times.count == 12 && reference.count == 12)
        for (time, stamp) in zip(times, reference.dropLast()) { #expect(abs(time - (Double(stamp) ?? -1)) < 1e-6) }
        #expect(abs(times[11] - times[10] - 0.04) < 1e-6)
    }

    /// Files trimmed by stream copy start late (here at 1.74 s) and must not look truncated: every frame
    /// FFmpeg decodes is delivered, with its timestamp, and no error.
    @Test(arguments: ["mp4", "mkv"])
    func trimmedFilesAreComplete(ext: String) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let path = folder.path("trimmed.\(ext)")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("bikes.mp4"), "-ss", "1.3", "-c", "copy", path])
        let reader = try MediaReader(path: path)
        var times: [Double] = []
        while let frame = try reader.nextFrame() { times.append(try #require(frame.timestamp).seconds) }
        let reference = try Tool.packetTimes(path, stream: "v:0")
        #expect(times.count == reference.count)
        #expect(times.count == (try Tool.rawFrames(path)).count / (640 * 272 * 3 / 2))
        for (ours, theirs) in zip(times, reference) { #expect(abs(ours - theirs) < 1e-5) }
    }

    /// Format, frame count, duration and every timestamp as ffprobe reports them (timestamps exact: the
    /// reader converts the stream's ticks without rounding; ffprobe prints 6 decimals).
    @Test func metadataMatchesFFprobe() throws {
        let path = TestMedia.path("carphone_pristine.mp4")
        let reader = try MediaReader(path: path)
        let probe = try Tool.probe(path, stream: "v:0")
        #expect(reader.format.width == 176 && reader.format.height == 144)
        #expect(reader.format.frameRate == FrameRate(30000, 1001))
        #expect(reader.expectedFrameCount == 120)
        #expect(reader.containerName.contains("mp4"))
        #expect(!reader.hasAudio)
        let duration = try #require(reader.duration)
        #expect(abs(duration.seconds - (Double(probe["duration"] ?? "") ?? 0)) < 1e-6)
        var times: [Double] = []
        while let frame = try reader.nextFrame() {
            times.append(try #require(frame.timestamp).seconds)
            #expect(frame.duration == FrameRate(30000, 1001).frameDuration)
        }
        let reference = try Tool.packetTimes(path, stream: "v:0")
        #expect(times.count == reference.count)
        for (ours, theirs) in zip(times, reference) { #expect(abs(ours - theirs) < 1e-5) }
    }

    @Test func audioIsReported() throws {
        let reader = try MediaReader(path: TestMedia.path("bigbuckbunny.mp4"))
        #expect(reader.hasAudio)
        #expect(reader.format.width == 1280 && reader.format.height == 720)
        #expect(reader.format.color.matrix == .bt709)   // untagged HD: the usual BT.709 guess
        #expect(reader.expectedFrameCount == 132)
    }

    /// A PNG is one RGBA frame whose RGB equals FFmpeg's rgb24 decode exactly (alpha opaque).
    @Test func pngIsOneRGBAFrame() throws {
        let path = TestMedia.path("astronaut.png")
        let reader = try MediaReader(path: path)
        #expect(reader.format.pixelFormat == .rgba)
        #expect(reader.format.width == 512 && reader.format.height == 512)
        #expect(reader.expectedFrameCount == 1)
        let frame = try #require(try reader.nextFrame())
        #expect(try reader.nextFrame() == nil)
        let reference = try Tool.rawFrames(path, pixelFormat: "rgba")
        #expect(frame.packedBytes == reference)
    }

    /// A JPEG decodes to full-range I420 (FFmpeg's yuvj420p), equal to FFmpeg's decode.
    @Test func jpegIsFullRangeI420() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let jpeg = folder.path("astronaut.jpg")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("astronaut.png"), "-pix_fmt", "yuvj420p", jpeg])
        let reader = try MediaReader(path: jpeg)
        #expect(reader.format.pixelFormat == .i420)
        #expect(reader.format.color.range == .full)
        let frame = try #require(try reader.nextFrame())
        #expect(frame.packedBytes == (try Tool.rawFrames(jpeg, pixelFormat: "yuvj420p")))
    }

    /// The display matrix becomes the frame's rotation, and a writer stores it again. ffprobe's `rotation`
    /// is FFmpeg's counterclockwise angle of the display matrix; `Rotation` counts clockwise.
    @Test func rotationComesFromTheDisplayMatrix() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let rotated = folder.path("rotated.mp4")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), "-c", "copy",
                                "-metadata:s:v:0", "rotate=90", rotated])
        let counterclockwise = try Tool.rotation(rotated)
        #expect(counterclockwise != 0)
        let reader = try MediaReader(path: rotated)
        let frame = try #require(try reader.nextFrame())
        #expect(frame.rotation.rawValue == (360 - counterclockwise) % 360)
        let output = folder.path("again.mp4")
        try MediaWriterTests.copy(rotated, to: output)
        #expect(try Tool.rotation(output) == counterclockwise)
    }

    /// y4m written by FFmpeg, read by the own y4m reader: same bytes as FFmpeg's decode of the source.
    @Test func y4mFileIsReadExactly() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = TestMedia.path("carphone_pristine.mp4")
        let y4m = folder.path("clip.y4m")
        try Tool.run("ffmpeg", ["-nostdin", "-i", source, "-f", "yuv4mpegpipe", y4m])
        let reader = try MediaReader(path: y4m)
        #expect(reader.containerName == "yuv4mpegpipe")
        #expect(reader.expectedFrameCount == 120)
        #expect(reader.format.frameRate == FrameRate(30000, 1001))
        var bytes: [UInt8] = []
        var last: MediaTime?
        while let frame = try reader.nextFrame() {
            bytes += frame.packedBytes
            last = frame.timestamp
        }
        #expect(bytes == (try Tool.rawFrames(source)))
        #expect(last == MediaTime(value: 119 * 1001, timescale: 30000))
    }

    /// A named pipe (what a shell's `<(…)` gives) is read as a y4m stream: it cannot be peeked at and
    /// reopened like a file.
    @Test func namedPipeIsReadAsY4M() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = TestMedia.path("carphone_pristine.mp4")
        let stream = try Tool.run("ffmpeg", ["-nostdin", "-i", source, "-f", "yuv4mpegpipe", "-"])
        let fifo = folder.path("frames")
        #expect(mkfifo(fifo, 0o600) == 0)
        let feeder = Thread {
            let descriptor = open(fifo, O_WRONLY)
            stream.withUnsafeBytes { bytes in
                var offset = 0
                while descriptor >= 0 && offset < bytes.count {
                    let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if written <= 0 { break }
                    offset += written
                }
            }
            close(descriptor)
        }
        feeder.start()
        let reader = try MediaReader(path: fifo)
        #expect(reader.containerName == "yuv4mpegpipe")
        #expect(reader.expectedFrameCount == nil)
        var bytes: [UInt8] = []
        while let frame = try reader.nextFrame() { bytes += frame.packedBytes }
        #expect(bytes == (try Tool.rawFrames(source)))
    }

    /// The y4m reader on a pipe (what `-` reads from standard input): same frames, no frame count.
    @Test func y4mPipeIsReadExactly() throws {
        let source = TestMedia.path("carphone_pristine.mp4")
        let stream = try Tool.run("ffmpeg", ["-nostdin", "-i", source, "-f", "yuv4mpegpipe", "-"])
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let writeEnd = descriptors[1]
        let feeder = Thread {
            stream.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(writeEnd, bytes.baseAddress! + offset, bytes.count - offset)
                    if written <= 0 { break }
                    offset += written
                }
            }
            close(writeEnd)
        }
        feeder.start()
        let input = FileInput(descriptor: descriptors[0], name: "standard input", ownsDescriptor: true)
        let reader = try Y4MFrameReader(input: input, fileSize: nil)
        #expect(reader.expectedFrameCount == nil)
        var bytes: [UInt8] = []
        while let frame = try reader.nextFrame() { bytes += frame.packedBytes }
        #expect(bytes == (try Tool.rawFrames(source)))
    }
}

/// Pixel layouts that are not VideoFX formats, converted by swscale; and gray.
@Suite struct MediaReaderConversionTests {
    /// 4:4:4 (here in y4m, which the own reader leaves to FFmpeg) becomes RGBA like FFmpeg's own
    /// conversion: PSNR ≥ 50 dB (measured identical: both are swscale with BT.601 limited input; the
    /// flags differ, so exact equality is not promised).
    @Test func yuv444BecomesRGBA() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let path = folder.path("c444.y4m")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), "-pix_fmt", "yuv444p",
                                "-frames:v", "5", path])
        let reader = try MediaReader(path: path)
        #expect(reader.format.pixelFormat == .rgba)
        #expect(reader.containerName == "yuv4mpegpipe")
        var bytes: [UInt8] = []
        while let frame = try reader.nextFrame() { bytes += frame.packedBytes }
        let reference = try Tool.rawFrames(path, pixelFormat: "rgba")
        #expect(bytes.count == reference.count)
        #expect(MediaWriterTests.psnr(bytes, reference) >= 50)
    }

    /// NV12 video (raw in avi) stays NV12, byte for byte, and a 10-bit 4:2:0 H.264 becomes I420 like
    /// FFmpeg's own conversion to yuv420p (PSNR ≥ 50 dB: both swscale, flags differ).
    @Test func nv12AndTenBitVideo() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let nv12 = folder.path("nv12.avi")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), "-frames:v", "10",
                                "-c:v", "rawvideo", "-pix_fmt", "nv12", nv12])
        let reader = try MediaReader(path: nv12)
        #expect(reader.format.pixelFormat == .nv12)
        var bytes: [UInt8] = []
        while let frame = try reader.nextFrame() { bytes += frame.packedBytes }
        #expect(bytes == (try Tool.rawFrames(nv12, pixelFormat: "nv12")))

        let tenBit = folder.path("ten.mkv")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), "-frames:v", "10",
                                "-c:v", "libx264", "-pix_fmt", "yuv420p10le", tenBit])
        let deep = try MediaReader(path: tenBit)
        #expect(deep.format.pixelFormat == .i420)
        var converted: [UInt8] = []
        while let frame = try deep.nextFrame() { converted += frame.packedBytes }
        let reference = try Tool.rawFrames(tenBit)
        #expect(converted.count == reference.count)
        #expect(MediaWriterTests.psnr(converted, reference) >= 50)
    }

    /// A gray PNG is a GRAY8 frame equal to FFmpeg's decode, and stays gray when written as PNG.
    @Test func grayPNG() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = TestMedia.path("camera.png")
        let reader = try MediaReader(path: source)
        #expect(reader.format.pixelFormat == .gray8)
        let frame = try #require(try reader.nextFrame())
        #expect(frame.packedBytes == (try Tool.rawFrames(source, pixelFormat: "gray")))
        let output = folder.path("camera.png")
        try MediaWriterTests.copy(source, to: output)
        #expect(try Tool.probe(output, stream: "v:0")["pix_fmt"] == "gray")
        #expect(try Tool.rawFrames(output, pixelFormat: "gray") == (try Tool.rawFrames(source, pixelFormat: "gray")))
        // JPEG has no gray mode in FFmpeg's encoder: gray goes out as 4:2:0 with neutral chroma, its luma
        // close to the source (PSNR ≥ 38 dB at quality 2).
        let jpeg = folder.path("camera.jpg")
        try MediaWriterTests.copy(source, to: jpeg)
        #expect(MediaWriterTests.psnr(try Tool.rawFrames(jpeg, pixelFormat: "gray"), try Tool.rawFrames(source, pixelFormat: "gray")) >= 38)
    }

    /// A PNG with transparency keeps its alpha channel byte for byte.
    @Test func pngAlphaIsKept() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let source = folder.path("translucent.png")
        try Tool.run("ffmpeg", ["-nostdin", "-f", "lavfi", "-i", "color=c=red@0.5:s=64x48,format=rgba", "-frames:v", "1", source])
        let output = folder.path("copy.png")
        try MediaWriterTests.copy(source, to: output)
        #expect(try Tool.probe(output, stream: "v:0")["pix_fmt"] == "rgba")
        #expect(try Tool.rawFrames(output, pixelFormat: "rgba") == (try Tool.rawFrames(source, pixelFormat: "rgba")))
    }
}
