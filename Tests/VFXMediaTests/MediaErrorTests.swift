import Foundation
import VFXTestSupport
import Testing
import CFFmpeg
import VFXCore
@testable import VFXMedia

/// Every bad input or output gives the right `MediaError`, a one-line description naming the file, and
/// leaves nothing in the output folder.
@Suite struct MediaErrorTests {
    /// Runs a read → write copy and returns the error it throws (nil when it succeeds).
    static func copyError(_ input: String, to output: String) -> MediaError? {
        do {
            try MediaWriterTests.copy(input, to: output)
            return nil
        } catch let error as MediaError {
            return error
        } catch {
            Issue.record("not a MediaError: \(error)")
            return nil
        }
    }

    static func expectOneLine(_ error: MediaError?, naming path: String) {
        let text = error.map { "\($0)" } ?? ""
        #expect(!text.contains("\n"))
        #expect(text.hasPrefix(path + ": "))
    }

    @Test func missingFile() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let input = folder.path("nothing.mp4")
        let error = Self.copyError(input, to: folder.path("out.mp4"))
        #expect(error == .missingFile(path: input))
        Self.expectOneLine(error, naming: input)
        #expect(folder.contents.isEmpty)
    }

    @Test func emptyFile() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let input = folder.path("empty.mp4")
        #expect(FileManager.default.createFile(atPath: input, contents: Data()))
        let error = Self.copyError(input, to: folder.path("out.mp4"))
        #expect(error == .emptyFile(path: input))
        #expect(folder.contents == ["empty.mp4"])
    }

    /// An mp4 cut before its index (moov at the end, as most cameras write) cannot be opened at all.
    @Test func mp4WithoutItsIndex() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let input = folder.path("cut.mp4")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: TestMedia.path("bikes.mp4")))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: input))
        let error = Self.copyError(input, to: folder.path("out.mp4"))
        guard case .corrupt(path: input, _)? = error else {
            Issue.record("expected corrupt, got \(String(describing: error))")
            return
        }
        Self.expectOneLine(error, naming: input)
        #expect(folder.contents == ["cut.mp4"])
    }

    /// A file cut in the middle of its frames: an error mid-stream, not a short video, and no output
    /// left. mp4 with its index first flags the cut frame; Matroska just ends, and the reader compares
    /// the end of the last frame with the duration the file declares. (FFmpeg's CLI writes 227 of 250
    /// frames of the cut mp4 without failing.)
    @Test(arguments: ["mp4", "mkv"])
    func fileCutMidStream(ext: String) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let whole = folder.path("whole.\(ext)")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("bikes.mp4"), "-c", "copy", "-movflags", "+faststart", whole])
        let input = folder.path("cut.\(ext)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: input))
        try FileManager.default.removeItem(atPath: whole)
        let error = Self.copyError(input, to: folder.path("out.mp4"))
        guard case .truncated(path: input, _)? = error else {
            Issue.record("expected truncated, got \(String(describing: error))")
            return
        }
        Self.expectOneLine(error, naming: input)
        #expect(folder.contents == ["cut.\(ext)"])
    }

    /// Bytes overwritten in the middle of an mp4: the decoder's error surfaces with the frame number.
    @Test func garbledMp4() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: TestMedia.path("bikes.mp4")))
        for index in stride(from: bytes.count / 3, to: bytes.count / 3 + 20000, by: 7) { bytes[index] = 0xFF }
        let input = folder.path("garbled.mp4")
        try bytes.write(to: URL(fileURLWithPath: input))
        let error = Self.copyError(input, to: folder.path("out.mp4"))
        guard case .corrupt(path: input, let reason)? = error else {
            Issue.record("expected corrupt, got \(String(describing: error))")
            return
        }
        #expect(reason.hasPrefix("frame "))
        #expect(folder.contents == ["garbled.mp4"])
    }

    /// Not media at all, and a folder instead of a file.
    @Test func notMedia() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let text = folder.path("text.mp4")
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: text))
        guard case .corrupt(path: text, _)? = Self.copyError(text, to: folder.path("out.mp4")) else {
            Issue.record("text must be corrupt")
            return
        }
        let subfolder = folder.path("sub")
        try FileManager.default.createDirectory(atPath: subfolder, withIntermediateDirectories: false)
        #expect(Self.copyError(subfolder, to: folder.path("out.mp4")) == .unreadable(path: subfolder, reason: "it is a folder"))
        #expect(folder.contents == ["sub", "text.mp4"])
    }

    /// A cut-off JPEG decodes without an error in FFmpeg (it logs "EOI missing, emulating"); the reader
    /// finds the missing end-of-image marker. A whole JPEG passes.
    @Test func truncatedJPEG() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let whole = folder.path("whole.jpg")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("astronaut.png"), whole])
        #expect(try MediaReader(path: whole).nextFrame() != nil)
        let input = folder.path("cut.jpg")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count * 9 / 10).write(to: URL(fileURLWithPath: input))
        let error = Self.copyError(input, to: folder.path("out.png"))
        #expect(error == .truncated(path: input, reason: "the JPEG data ends before its end-of-image marker"))
        #expect(folder.contents == ["cut.jpg", "whole.jpg"])
    }

    /// The end-marker rule on hand-made marker sequences: an EXIF thumbnail's end marker does not count
    /// for the main image; several scans (progressive JPEG) need one end marker after the last.
    @Test func jpegEndMarkerRule() {
        func check(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBufferPointer { buffer in
                var packet = AVPacket()
                packet.data = UnsafeMutablePointer(mutating: buffer.baseAddress)
                packet.size = Int32(buffer.count)
                return LibavDecoder.endsWithEndOfImage(packet)
            }
        }
        let thumbnail: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDA, 1, 2, 0xFF, 0x00, 3, 0xFF, 0xD9]
        #expect(check([0xFF, 0xD8] + thumbnail + [0xFF, 0xDA, 4, 5, 0xFF, 0xD0, 6, 0xFF, 0xD9]))
        #expect(!check([0xFF, 0xD8] + thumbnail + [0xFF, 0xDA, 4, 5, 0xFF, 0xD0, 6]))
        #expect(check([0xFF, 0xD8, 0xFF, 0xDA, 1, 0xFF, 0xDA, 2, 0xFF, 0xDA, 3, 0xFF, 0xD9]))
        #expect(!check([0xFF, 0xD8, 0xFF, 0xDA, 1, 0xFF, 0xD9, 0xFF, 0xDA, 3]))
        #expect(!check([0xFF, 0xD8, 1, 2]))
    }

    /// y4m: a bad signature, a bad FRAME marker and a partial last frame.
    @Test func brokenY4M() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let good = try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), "-frames:v", "3",
                                           "-f", "yuv4mpegpipe", "-"])
        let headerEnd = try #require(good.firstIndex(of: 10)) + 1
        let frameBytes = 176 * 144 * 3 / 2

        let partial = folder.path("partial.y4m")
        try good.prefix(good.count - 100).write(to: URL(fileURLWithPath: partial))
        let truncated = Self.copyError(partial, to: folder.path("out.y4m"))
        #expect(truncated == .truncated(path: partial, reason: "frame 3 has \(frameBytes - 100) of \(frameBytes) bytes"))

        let marker = folder.path("marker.y4m")
        var badMarker = good
        badMarker[headerEnd + 6 + frameBytes] = UInt8(ascii: "X")   // the second frame's "FRAME"
        try badMarker.write(to: URL(fileURLWithPath: marker))
        #expect(Self.copyError(marker, to: folder.path("out.y4m"))
            == .corrupt(path: marker, reason: "frame 2 does not start with FRAME"))

        let size = folder.path("size.y4m")
        try Data("YUV4MPEG2 W0 H144 F25:1 C420jpeg\nFRAME\n".utf8).write(to: URL(fileURLWithPath: size))
        guard case .corrupt(path: size, _)? = Self.copyError(size, to: folder.path("out.y4m")) else {
            Issue.record("a zero width must be corrupt")
            return
        }
        #expect(folder.contents == ["marker.y4m", "partial.y4m", "size.y4m"])
    }

    @Test func noVideoStream() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let input = folder.path("audio.m4a")
        try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("bigbuckbunny.mp4"), "-vn", "-c:a", "copy", input])
        #expect(Self.copyError(input, to: folder.path("out.mp4")) == .noVideoStream(path: input))
        #expect(folder.contents == ["audio.m4a"])
    }

    /// Output errors come from `init`, before anything is read or created.
    @Test func badOutputs() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let unknown = folder.path("out.xyz")
        #expect(throws: MediaError.unknownOutputExtension(path: unknown)) { try MediaWriter(path: unknown) }
        let noExtension = folder.path("out")
        #expect(throws: MediaError.unknownOutputExtension(path: noExtension)) { try MediaWriter(path: noExtension) }
        let missing = folder.path("missing/out.mp4")
        #expect(throws: MediaError.missingOutputFolder(path: missing, folder: folder.path("missing"))) {
            try MediaWriter(path: missing)
        }
        #expect(throws: MediaError.codecNotInContainer(path: "x.webm", codec: "h264", container: "webm", supported: ["vp9", "av1"])) {
            try MediaWriter(path: "x.webm", source: nil, options: EncodingOptions(codec: .h264))
        }
        #expect(folder.contents.isEmpty)
    }

    /// The output exists under its name only after `finish`; before, a hidden partial file in the same
    /// folder holds what was written, and `cancel` removes it.
    @Test func outputAppearsOnlyWhenFinished() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let frame = VideoFrame(format: .i420, width: 64, height: 48)
        for finishing in [true, false] {
            let writer = try MediaWriter(path: folder.path("out.y4m"))
            try writer.write(frame)
            let partial = folder.contents
            #expect(partial.count == 1)
            #expect(partial.first?.hasPrefix(".out.partial-") == true && partial.first?.hasSuffix(".y4m") == true)
            if finishing {
                try writer.finish()
                #expect(folder.contents == ["out.y4m"])
                try FileManager.default.removeItem(atPath: folder.path("out.y4m"))
            } else {
                writer.cancel()
                #expect(folder.contents.isEmpty)
            }
        }
    }

    /// Frames that do not fit: a second frame for an image, a size change in a video, odd sizes for H.264.
    @Test func unsupportedFrames() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let frame = VideoFrame(format: .i420, width: 64, height: 48)
        let image = try MediaWriter(path: folder.path("one.png"))
        try image.write(frame)
        #expect(throws: MediaError.self) { try image.write(frame) }
        image.cancel()
        let video = try MediaWriter(path: folder.path("sizes.mp4"))
        try video.write(frame)
        #expect(throws: MediaError.self) { try video.write(VideoFrame(format: .i420, width: 32, height: 32)) }
        video.cancel()
        let odd = try MediaWriter(path: folder.path("odd.mp4"))
        #expect(throws: MediaError.self) { try odd.write(VideoFrame(format: .i420, width: 33, height: 33)) }
        odd.cancel()
        #expect(folder.contents.isEmpty)
    }
}
