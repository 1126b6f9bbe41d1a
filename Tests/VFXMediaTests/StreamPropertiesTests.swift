import Foundation
import VFXTestSupport
import Testing
import VFXCore
@testable import VFXMedia

/// What the reader keeps beside the frames (colour tags, sample aspect, the other streams) and what the
/// writer does with it, through the library's API; references: ffprobe and the ffmpeg command.
@Suite struct StreamPropertiesTests {
    /// A 1 s 160×120 mkv: 10-bit H.264 tagged BT.2020/PQ with 4:3 samples, AAC, SubRip and an attached font.
    static func clip(in folder: ScratchFolder) throws -> String {
        let subtitles = folder.path("cues.srt"), font = folder.path("font.ttf"), path = folder.path("tagged.mkv")
        try "1\n00:00:00,000 --> 00:00:00,500\nHi\n".write(toFile: subtitles, atomically: true, encoding: .utf8)
        try Data(repeating: 7, count: 64).write(to: URL(fileURLWithPath: font))
        try Tool.run("ffmpeg", ["-nostdin", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=1", "-f", "lavfi",
                                "-i", "sine=duration=1", "-i", subtitles, "-map", "0", "-map", "1", "-map", "2",
                                "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020",
                                "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-color_range", "tv", "-aspect", "16:9",
                                "-c:a", "aac", "-c:s", "subrip", "-attach", font, "-metadata:s:t", "mimetype=application/x-truetype-font", path])
        return path
    }

    @Test func readerReportsWhatTheFramesCannotCarry() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let reader = try MediaReader(path: try Self.clip(in: folder))
        #expect(reader.colorTags.primaries == "bt2020" && reader.colorTags.transfer == "smpte2084")
        #expect(reader.colorTags.matrix == "bt2020nc" && reader.colorTags.range == "tv" && reader.colorTags.isHDR)
        #expect(reader.sampleAspectRatio == SampleAspectRatio(4, 3))
        #expect(reader.sourcePixelFormat == "yuv420p10le" && reader.sourceBitDepth == 10)
        #expect(reader.passThroughStreams.map(\.description) == ["audio stream #1 (aac)", "subtitle stream #2 (subrip)"])
        #expect(reader.ignoredStreams.map(\.description) == ["attachment stream #3 (ttf)"])
        #expect(reader.format.pixelFormat == .i420)
    }

    /// The writer's plan per container, as `tracks` reports it, and ffprobe's view of the result.
    @Test(arguments: [("mp4", ["audio stream #1 (aac) copied", "subtitle stream #2 (subrip) re-encoded to mov_text"]),
                      ("webm", ["audio stream #1 (aac) re-encoded to libopus", "subtitle stream #2 (subrip) re-encoded to webvtt"]),
                      ("avi", ["audio stream #1 (aac) copied", "subtitle stream #2 (subrip) dropped: avi cannot hold subrip subtitles"])])
    func writerPlansEveryStream(ext: String, expected: [String]) throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let reader = try MediaReader(path: try Self.clip(in: folder))
        let output = folder.path("out.\(ext)")
        let writer = try MediaWriter(path: output, source: reader)
        #expect(writer.tracks.map(\.description) == expected)
        while let frame = try reader.nextFrame() { try writer.write(frame) }
        try writer.finish()
        let kept = expected.filter { !$0.contains("dropped") }.count
        let probed = try Tool.run("ffprobe", ["-show_entries", "stream=codec_type", "-of", "csv=p=0", output])
        let types = String(decoding: probed, as: UTF8.self).split(separator: "\n").map { $0.trimmingCharacters(in: .punctuationCharacters) }
        #expect(types.count == 1 + kept && types.first == "video", "\(types)")
    }

    /// A trimmed read: the frames FFmpeg's `trim` filter keeps (0.4 s from 0.4 s of a 29.97 fps clip: frames
    /// 12…23, the first at 0.4004 s), byte for byte; timestamps from the window's start (the first within
    /// one frame of zero); and `expectedFrameCount` saying how many beforehand.
    @Test func trimmedRead() throws {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let reader = try MediaReader(path: TestMedia.path("carphone_pristine.mp4"), trim: Trim(start: 0.4, duration: 0.4))
        #expect(reader.expectedFrameCount == 12)
        var bytes: [UInt8] = [], times: [Double] = []
        while let frame = try reader.nextFrame() {
            bytes += frame.packedBytes
            times.append(frame.timestamp?.seconds ?? -1)
        }
        let reference = [UInt8](try Tool.run("ffmpeg", ["-nostdin", "-i", TestMedia.path("carphone_pristine.mp4"), "-vf",
                                                        "trim=start=0.4:duration=0.4", "-vsync", "passthrough", "-f", "rawvideo", "-"]))
        #expect(bytes == reference && times.count == 12)
        #expect((times.first ?? -1) >= 0 && (times.first ?? 1) < 1.001 / 30, "\(times)")
    }

    /// The temporary name stays within NAME_MAX (255 bytes) for every legal name, keeps the extension, and
    /// cuts multi-byte names on a character boundary.
    @Test func temporaryNamesStayLegal() {
        for name in ["out.mp4", String(repeating: "a", count: 251) + ".mp4", String(repeating: "é", count: 125) + "x.mp4",
                     String(repeating: "😀", count: 62) + "ab.mp4", "noext"] {
            let temporary = MediaWriter.temporaryName(for: name)
            #expect(temporary.utf8.count <= 255, "\(temporary.utf8.count)")
            #expect(temporary.hasPrefix(".") && temporary.contains(".partial-"))
            #expect(name.contains(".") ? temporary.hasSuffix(".mp4") : !temporary.hasSuffix("."))
            #expect(!temporary.contains("/") && !temporary.contains("\0"))
        }
    }

    /// The rate converter against FFmpeg's `fps` filter rule on timestamps alone: 25 → 10 fps shows input
    /// frames 1, 3, 6, 8, 11, 13, 16, 18, 21, 23 (slot n shows the last frame i with round(i × 10 / 25) ≤ n,
    /// halves rounding up), ten frames for the one second.
    @Test func frameRateConverterRounding() throws {
        var converter = FrameRateConverter(rate: FrameRate(10))
        let frames = (0..<25).map { index in
            var frame = VideoFrame(format: .gray8, width: 2, height: 2, timestamp: MediaTime(value: Int64(index), timescale: 25))
            frame.duration = MediaTime(value: 1, timescale: 25)
            return frame
        }
        var shown: [ObjectIdentifier] = []
        for frame in frames { try converter.push(frame) { shown.append(ObjectIdentifier($0.buffer)) } }
        try converter.finish { shown.append(ObjectIdentifier($0.buffer)) }
        let picked = shown.map { id in frames.firstIndex { ObjectIdentifier($0.buffer) == id } ?? -1 }
        let expected = (0..<10).map { n in (0..<25).last { i in (Double(i) * 10 / 25 + 0.5).rounded(.down) <= Double(n) } ?? -1 }
        #expect(expected == [1, 3, 6, 8, 11, 13, 16, 18, 21, 23])
        #expect(picked == expected, "\(picked)")
    }
}
