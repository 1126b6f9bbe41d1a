import Foundation
import Testing

/// `vfx bench --catalog` times each filter on its own number of frames: at least `--frames`, more for a fast filter
/// (`--frames` doubled until VideoFX's pass lasts 0.1 s), never above `--max-frames`, and every row says how many.
/// Small frames and few of them keep it fast; the timings themselves are not checked (a benchmark's numbers, not a
/// test's).
@Suite struct CatalogBenchTests {
    static func entries(only: String = "hue,gaussian-blur", _ extra: [String]) throws -> [[String: Any]] {
        let result = try CommandLineRun.vfx(["bench", "--catalog", "--size", "64x36", "--repeats", "1",
                                             "--only", only, "--json"] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]])
    }

    /// At 64×36 a filter costs microseconds per frame, far from 0.1 s over 6 frames: every row (`hue`,
    /// `gaussian-blur`, `hue-blend`) doubles 2 → 4 → 8 and stops at the cap of 6. The fields the catalog had before
    /// are all still there.
    @Test func fastFiltersGetTheMostFrames() throws {
        let rows = try Self.entries(["--frames", "2", "--max-frames", "6"])
        #expect(Set(rows.compactMap { $0["name"] as? String }).isSuperset(of: ["hue", "gaussian-blur"]), "\(rows)")
        for row in rows {
            let frames = try #require(row["frames"] as? Int, "\(row)")
            #expect(frames >= 2 && frames <= 6, "\(row)")
            #expect(frames == 6, "\(row)")
            for key in ["name", "family", "chain", "vfxMillisecondsPerFrame"] {
                #expect(row[key] != nil, "\(key) missing in \(row)")
            }
        }
        #expect(rows.first { $0["name"] as? String == "hue" }?["ffmpegGraph"] as? String == "hue=h=90.0", "\(rows)")
    }

    /// `--frames` is the least every filter gets, even when `--max-frames` is set below it.
    @Test func framesIsTheLeast() throws {
        let rows = try Self.entries(["--frames", "3", "--max-frames", "2"])
        #expect(!rows.isEmpty)
        for row in rows { #expect(row["frames"] as? Int == 3, "\(row)") }
    }

    /// The Markdown table has a frames column holding each row's count.
    @Test func tableSaysTheFrames() throws {
        let result = try CommandLineRun.vfx(["bench", "--catalog", "--size", "64x36", "--repeats", "1", "--only", "hue",
                                             "--frames", "2", "--max-frames", "4"])
        #expect(result.status == 0, "\(result.stderr)")
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(text.contains("| filter | family | frames | vfx ms/frame |"), "\(text)")
        #expect(text.contains("| hue | color-adjustment | 4 |"), "\(text)")
    }

    /// An example that does not fit a small frame (`crop` starts 100 pixels in; the frame is 64 wide) is left out with
    /// one line on stderr that names it and says why; the other filters are still timed and the run succeeds.
    @Test func exampleTooBigForTheFrameIsLeftOut() throws {
        let result = try CommandLineRun.vfx(["bench", "--catalog", "--size", "64x36", "--repeats", "1", "--only", "crop,hue",
                                             "--frames", "2", "--max-frames", "2", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]])
        let names = Set(rows.compactMap { $0["name"] as? String })
        #expect(names.contains("hue") && !names.contains("crop"), "\(names)")
        let stderr = result.stderr
        #expect(stderr.contains("vfx: crop left out at 64x36: crop: x must be less than the frame width 64"), "\(stderr)")
    }

    /// A filter that does not take I420 (`mask-to-alpha`: RGBA and BGRA only) is timed on the clip's frames converted to
    /// its first format, says so in its row (`pixelFormat`, and "(rgba)" in the table), and has no FFmpeg ratio (FFmpeg
    /// reads the I420 clip); an I420 filter's row says `i420`.
    @Test func filterWithoutI420IsTimedOnItsOwnFormat() throws {
        let rows = try Self.entries(only: "mask-to-alpha,hue", ["--frames", "2", "--max-frames", "4"])
        let mask = try #require(rows.first { $0["name"] as? String == "mask-to-alpha" }, "\(rows)")
        #expect(mask["pixelFormat"] as? String == "rgba", "\(mask)")
        #expect(mask["ratio"] == nil && mask["ffmpegGraph"] == nil, "\(mask)")
        #expect((mask["vfxMillisecondsPerFrame"] as? Double ?? 0) > 0, "\(mask)")
        #expect(rows.first { $0["name"] as? String == "hue" }?["pixelFormat"] as? String == "i420", "\(rows)")
        let table = try CommandLineRun.vfx(["bench", "--catalog", "--size", "64x36", "--repeats", "1", "--only", "mask-to-alpha",
                                            "--frames", "2", "--max-frames", "2"])
        #expect(String(decoding: table.stdout, as: UTF8.self).contains("| mask-to-alpha (rgba) | color-effect | 2 |"),
                "\(table.stdout)")
    }
}
