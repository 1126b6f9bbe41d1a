import Foundation
import Testing

/// `vfx apply` through `interpolate`, which changes the frame rate: the output carries the chain's rate and
/// timestamps, so N frames in give 2N out (`factor=2`) or the new rate's worth (`fps=N`), every timestamp
/// strictly increases, the video lasts as long as the input's and the copied audio stays in place beside
/// it. The reference is ffprobe's view of the packets of input and output.
@Suite struct RateChangingApplyTests {
    /// A 2 s clip (160×120 test pattern at `rate`, a 440 Hz tone in AAC) made by ffmpeg.
    static func clip(rate: String, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("in.mp4").path
        try CommandLineRun.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=\(rate):duration=2", "-f", "lavfi",
                                   "-i", "sine=frequency=440:duration=2", "-c:v", "libx264", "-preset", "ultrafast",
                                   "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path])
        return path
    }

    /// A stream's packets in presentation order: (time, duration) in seconds; a packet without a duration
    /// (some muxers store only the stream's default) gets `fallback`.
    static func packets(_ path: String, stream: String, fallback: Double) throws -> [(time: Double, duration: Double)] {
        let result = try CommandLineRun.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries",
                                                                  "packet=pts_time,duration_time", "-of", "csv=p=0", path])
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard let time = fields.first.flatMap(Double.init) else { return nil }
            return (time, fields.count > 1 ? Double(fields[1]) ?? fallback : fallback)
        }.sorted { $0.time < $1.time }
    }

    /// Where a stream ends: its last packet's time plus duration.
    static func end(_ packets: [(time: Double, duration: Double)]) -> Double {
        packets.map { $0.time + $0.duration }.max() ?? 0
    }

    @Test(arguments: [("25", "mp4"), ("25", "mkv"), ("30000/1001", "mp4"), ("30000/1001", "mkv")])
    func doublingKeepsDurationAndAudio(rate: String, container: String) throws {
        try check(rate: rate, container: container, chain: "interpolate:factor=2", outputRate: nil)
    }

    @Test(arguments: [("25", "mp4"), ("25", "mkv"), ("30000/1001", "mkv")])
    func newRateKeepsDurationAndAudio(rate: String, container: String) throws {
        try check(rate: rate, container: container, chain: "interpolate:fps=60", outputRate: 60)
    }

    /// Runs `chain` into a `container` file and compares its streams with the input's.
    func check(rate: String, container: String, chain: String, outputRate: Double?) throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.clip(rate: rate, in: folder)
        let output = folder.appendingPathComponent("out.\(container)").path
        let result = try CommandLineRun.vfx(["apply", input, "-o", output, "--filter", chain, "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let parts = rate.split(separator: "/").compactMap { Double($0) }
        let inputRate = parts.count == 2 ? parts[0] / parts[1] : parts[0]
        let rateOut = outputRate ?? 2 * inputRate
        let videoIn = try Self.packets(input, stream: "v:0", fallback: 1 / inputRate)
        let videoOut = try Self.packets(output, stream: "v:0", fallback: 1 / rateOut)
        let audioIn = try Self.packets(input, stream: "a:0", fallback: 0)
        let audioOut = try Self.packets(output, stream: "a:0", fallback: 0)
        // Frames: 2N for factor 2; for a new rate, the input's length at that rate (within one frame).
        if outputRate == nil {
            #expect(videoOut.count == 2 * videoIn.count, "\(videoIn.count) frames in, \(videoOut.count) out")
        } else {
            let expected = Self.end(videoIn) * rateOut
            #expect(abs(Double(videoOut.count) - expected) <= 1, "\(videoOut.count) frames, \(expected) expected")
        }
        // Strictly increasing times, spaced one output frame apart (Matroska rounds to the millisecond).
        for (a, b) in zip(videoOut, videoOut.dropFirst()) {
            #expect(b.time > a.time)
            #expect(abs(b.time - a.time - 1 / rateOut) <= 0.0011, "frames at \(a.time) and \(b.time)")
        }
        // The video lasts as long as the input's, and the audio keeps its place beside it: measured from
        // each file's first video frame, where the audio's first and last packets start (a container may
        // shift every stream by the same amount, and Matroska cannot store the shortened length of the
        // last AAC packet, so packet starts are compared, not ends). Within one output frame plus
        // Matroska's millisecond rounding.
        let tolerance = 1 / rateOut + 0.001
        let startIn = videoIn.first?.time ?? 0, startOut = videoOut.first?.time ?? 0
        #expect(abs((Self.end(videoOut) - startOut) - (Self.end(videoIn) - startIn)) <= tolerance,
                "video lasts \(Self.end(videoOut) - startOut) s, the input \(Self.end(videoIn) - startIn) s")
        #expect(!audioOut.isEmpty)
        if let firstIn = audioIn.first, let lastIn = audioIn.last, let firstOut = audioOut.first, let lastOut = audioOut.last {
            #expect(abs((firstOut.time - startOut) - (firstIn.time - startIn)) <= tolerance,
                    "audio starts at \(firstOut.time - startOut) s, in the input at \(firstIn.time - startIn) s")
            #expect(abs((lastOut.time - startOut) - (lastIn.time - startIn)) <= tolerance,
                    "last audio packet at \(lastOut.time - startOut) s, in the input at \(lastIn.time - startIn) s")
        }
    }

    @Test func y4mCarriesTheNewRate() throws {
        let folder = try CommandLineRun.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.clip(rate: "25", in: folder)
        for (chain, frames, header) in [("interpolate:factor=2", 100, "F50:1"), ("interpolate:fps=60", 120, "F60000:1000")] {
            let output = folder.appendingPathComponent("out.y4m").path
            let result = try CommandLineRun.vfx(["apply", "-y", input, "-o", output, "--filter", chain, "--quiet"])
            #expect(result.status == 0, "\(result.stderr)")
            let data = try Data(contentsOf: URL(fileURLWithPath: output))
            let firstLine = String(decoding: data.prefix { $0 != 0x0A }, as: UTF8.self)
            #expect(firstLine.split(separator: " ").contains { $0 == header }, "\(chain): header \(firstLine)")
            #expect(try CommandLineRun.y4mFrames(output).count == frames)
            // ffmpeg reads the file as lasting the input's 2 s.
            let probe = try CommandLineRun.probe(output)["video"]
            #expect(probe?["nb_read_frames"] == "\(frames)")
        }
    }
}
