import Foundation
import Testing
import VFXCore
import VFXPipeline
import VFXTestSupport
@testable import VFXFilters

/// The vector and incremental paths of the geometry, overlay and text stages against independent references: FFmpeg's
/// transpose on sizes that do not fill the 8×8 blocks, the scaling kernels' definition evaluated here in Double, the
/// blend formula, and the text stage's redrawn columns against a box drawn from scratch.
@Suite struct KernelPathTests {
    static func planes(_ frame: VideoFrame) -> [[[UInt8]]] { (0..<frame.planeCount).map { SpatialFixtures.rows(frame, $0) } }

    /// Quarter turns of frames whose planes are not multiples of 8 (the block transpose's edges go through the tiled
    /// path) and sliced over two threads (slices that are not multiples of 8 rows): equal to FFmpeg's transpose
    /// (tolerance 0: both only move samples).
    @Test(arguments: [(90, "transpose=clock"), (270, "transpose=cclock")])
    func quarterTurnsOfUnevenSizesMatchFFmpeg(degrees: Int, ffmpeg: String) throws {
        for (format, name, width, height) in [(PixelFormat.gray8, "gray", 203, 117), (.i420, "yuv420p", 330, 186)] {
            let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: (width, height)),
                                        format: format, width: width, height: height)
            for threads in [1, 2] {
                let ours = try SpatialFixtures.apply("rotate:angle=\(degrees)", to: frame, threads: threads)
                let reference = try SpatialFixtures.ffmpeg(frame, name: name, filter: ffmpeg, size: (height, width))
                #expect(ours.width == height && ours.height == width)
                #expect(Self.planes(ours) == Self.planes(reference), "\(degrees)° \(format) \(width)x\(height), \(threads) threads")
            }
        }
    }

    /// Half a turn is every row reversed, bottom row first, for every pixel size (1, 2 and 4 bytes), exactly.
    @Test(arguments: [PixelFormat.i420, .nv12, .rgba])
    func halfTurnReversesRowsAndPixels(format: PixelFormat) throws {
        let frame = try SpatialFixtures.photo(format)
        let turned = Self.planes(try SpatialFixtures.apply("rotate:angle=180", to: frame))
        for (index, plane) in Self.planes(frame).enumerated() {
            let c = frame.plane(index).bytesPerPixel
            let expected = plane.reversed().map { row in stride(from: row.count - c, through: 0, by: -c).flatMap { row[$0..<($0 + c)] } }
            #expect(turned[index] == expected, "\(format) plane \(index)")
        }
    }

    /// The resampling filter's definition evaluated in Double for one plane: for output sample d, centre
    /// (d + ½)·from/to − ½, taps at every source index within support·max(1, from/to) of it, weights
    /// kernel(distance / max(1, from/to)) normalized to sum 1, indices clamped to the plane; rows, then columns.
    static func resampled(_ rows: [[Double]], channels c: Int, to size: (width: Int, height: Int), kernel: String) -> [[Double]] {
        func weight(_ x: Double) -> Double {
            let x = abs(x)
            switch kernel {
            case "bicubic": return x < 1 ? 1.5 * x * x * x - 2.5 * x * x + 1 : x < 2 ? -0.5 * x * x * x + 2.5 * x * x - 4 * x + 2 : 0
            case "bilinear": return max(0, 1 - x)
            default: return x < 0.5 ? 1 : x == 0.5 ? 0.5 : 0
            }
        }
        let support = kernel == "bicubic" ? 2.0 : kernel == "bilinear" ? 1 : 0.5
        func taps(_ from: Int, _ to: Int) -> [[(Int, Double)]] {
            let ratio = Double(from) / Double(to), stretch = max(1, ratio)
            return (0..<to).map { d in
                let center = (Double(d) + 0.5) * ratio - 0.5
                let first = Int((center - support * stretch).rounded(.up)), last = Int((center + support * stretch).rounded(.down))
                let raw = (first...last).map { i in (min(max(i, 0), from - 1), weight((Double(i) - center) / stretch)) }
                let total = raw.reduce(0) { $0 + $1.1 }
                return raw.map { ($0.0, $0.1 / total) }
            }
        }
        let down = taps(rows.count, size.height), across = taps(rows[0].count / c, size.width)
        let vertical = down.map { row in (0..<rows[0].count).map { x in row.reduce(0) { $0 + rows[$1.0][x] * $1.1 } } }
        return vertical.map { row in
            (0..<(size.width * c)).map { s in across[s / c].reduce(0) { $0 + row[$1.0 * c + s % c] * $1.1 } }
        }
    }

    /// `scale`'s fused vertical + blocked horizontal passes on every plane layout (1, 2 and 4 bytes per pixel,
    /// chroma planes at their own size), shrinking and growing, each kernel: within 1 code of the definition
    /// evaluated in Double (Float sums; a tie may round either way).
    @Test(arguments: [(341, 200, "bicubic"), (700, 600, "bicubic"), (300, 420, "bilinear"), (256, 170, "area")])
    func scaleMatchesItsDefinition(width: Int, height: Int, kernel: String) throws {
        for format in [PixelFormat.gray8, .nv12, .rgba] {
            let frame = try SpatialFixtures.photo(format)
            let ours = try SpatialFixtures.apply("scale:width=\(width):height=\(height):kernel=\(kernel)", to: frame)
            for index in 0..<frame.planeCount {
                let size = format.planeSize(index, width: width, height: height)
                let expected = Self.resampled(SpatialFixtures.doubles(SpatialFixtures.rows(frame, index)),
                                              channels: frame.plane(index).bytesPerPixel, to: size, kernel: kernel).map { $0.map(SpatialFixtures.byte) }
                let worst = SpatialFixtures.maxDifference(SpatialFixtures.doubles(SpatialFixtures.rows(ours, index)), expected)
                #expect(worst <= 1, "\(format) plane \(index) \(width)x\(height) \(kernel): \(worst)")
            }
        }
    }

    /// `scale`'s phase path (widths that change by 3:2, 2:1, 1:2 or not at all, on planes of one byte per sample, in
    /// 16-bit fixed point): gray and I420 frames whose rows are not whole vectors of periods (so the one-by-one tails
    /// and the pads at both edges are used), one and two slices, shrinking and growing heights. Within 1 code of the
    /// definition evaluated in Double: the fixed-point sums stay within 0.25 of a code of it (see `PhaseScaler` and, on
    /// x86-64, `ShuffleScaler`), so a value near a half may round the other way.
    @Test(arguments: [(150, 90, 100, 60, "bicubic"), (150, 90, 100, 135, "bicubic"), (96, 70, 48, 35, "bicubic"),
                      (96, 70, 192, 140, "bicubic"), (96, 70, 96, 50, "bicubic"), (150, 90, 100, 60, "bilinear"),
                      (96, 70, 48, 35, "area")])
    func scalePhasePathMatchesItsDefinition(width: Int, height: Int, toWidth: Int, toHeight: Int, kernel: String) throws {
        for (format, name) in [(PixelFormat.gray8, "gray"), (.i420, "yuv420p")] {
            let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: name, size: (width, height)),
                                        format: format, width: width, height: height)
            for threads in [1, 2] {
                let ours = try SpatialFixtures.apply("scale:width=\(toWidth):height=\(toHeight):kernel=\(kernel)", to: frame,
                                                     threads: threads)
                #expect(ours.width == toWidth && ours.height == toHeight)
                for index in 0..<frame.planeCount {
                    let size = format.planeSize(index, width: toWidth, height: toHeight)
                    let expected = Self.resampled(SpatialFixtures.doubles(SpatialFixtures.rows(frame, index)), channels: 1,
                                                  to: size, kernel: kernel).map { $0.map(SpatialFixtures.byte) }
                    let worst = SpatialFixtures.maxDifference(SpatialFixtures.doubles(SpatialFixtures.rows(ours, index)), expected)
                    #expect(worst <= 1, "\(format) plane \(index) \(width)x\(height) → \(toWidth)x\(toHeight) \(kernel), \(threads) threads: \(worst)")
                }
            }
        }
    }

    /// The phase path's two kernels run directly on the same gray planes: `PhaseScaler` (the portable one, used on every
    /// target) and, in x86-64 release builds, `ShuffleScaler` (AVX2), so that both stay tested where the filter picks the
    /// second. Each within 1 code of the definition evaluated in Double (both stay within 0.25 of a code of the exact sum,
    /// so a value near a half may round either way); widths 3:2, 1:2 and unchanged (`ShuffleScaler` only), heights
    /// shrinking and growing.
    @Test(arguments: [(150, 90, 100, 60), (150, 90, 100, 135), (96, 70, 192, 140), (96, 70, 96, 50)])
    func scalePhaseKernelsMatchTheDefinition(width: Int, height: Int, toWidth: Int, toHeight: Int) throws {
        let source = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: "gray", size: (width, height)),
                                     format: .gray8, width: width, height: height)
        let expected = Self.resampled(SpatialFixtures.doubles(SpatialFixtures.rows(source, 0)), channels: 1,
                                      to: (toWidth, toHeight), kernel: "bicubic").map { $0.map(SpatialFixtures.byte) }
        let across = try #require(PhaseTaps(source: width, destination: toWidth, kernel: .bicubic))
        let down = ResamplingTaps(source: height, destination: toHeight, kernel: .bicubic)
        // PhaseScaler declines an unchanged width (a weight of 1 does not fit its 2¹⁵ scale; the blocked path takes it).
        var kernels: [(String, any PlaneRowScaler)] = []
        if toWidth != width { kernels.append(("PhaseScaler", try #require(PhaseScaler(across: across, down: down, slices: 1)))) }
        #if arch(x86_64) && VFX_HASWELL
        kernels.append(("ShuffleScaler", try #require(ShuffleScaler(across: across, down: down, slices: 1))))
        #endif
        for (name, kernel) in kernels {
            var output = RawFrames.frame([UInt8](repeating: 0, count: toWidth * toHeight), format: .gray8, width: toWidth, height: toHeight)
            output.withMutablePlanes { planes in kernel.run(from: source.plane(0), into: planes[0], rows: 0..<toHeight, slice: 0) }
            let worst = SpatialFixtures.maxDifference(SpatialFixtures.doubles(SpatialFixtures.rows(output, 0)), expected)
            #expect(worst <= 1, "\(name) \(width)x\(height) → \(toWidth)x\(toHeight): \(worst)")
        }
    }

    /// The blend, sixteen bytes at a time, equals `(code · a + frame · (255 − a) + 127) / 255` for every byte of
    /// rows whose length is not a multiple of 16 (tolerance 0: integer arithmetic on both sides).
    @Test func blendIsTheRoundedMix() throws {
        let (width, height) = (53, 7)
        var generator = SystemRandomNumberGenerator()
        let pixels = (0..<(width * height * 4)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let image = FilterImage(width: width, height: height, pixels: pixels)
        let format = FrameFormat(pixelFormat: .gray8, width: 64, height: 16, color: .bt709)
        var layer = LayerCompositor()
        layer.prepare(image, x: 5, y: 3, format: format)
        let background = (0..<(64 * 16)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var frame = RawFrames.frame(background, format: .gray8, width: 64, height: 16)
        frame.withMutablePlanes { planes in layer.blend(into: planes, slices: SliceRunner(threads: 1)) }
        let plane = try #require(layer.planes.first)
        let out = SpatialFixtures.rows(frame, 0)
        for y in 0..<16 {
            for x in 0..<64 {
                let old = Int(background[y * 64 + x])
                var expected = old
                if x >= 5, x < 5 + width, y >= 3, y < 3 + height {
                    let i = (y - 3) * plane.width + x - 5
                    let (code, a) = (Int(plane.codes[i]), Int(plane.alpha[i]))
                    expected = (code * a + old * (255 - a) + 127) / 255
                }
                #expect(Int(out[y][x]) == expected, "(\(x), \(y))")
            }
        }
    }

    /// A running timecode with outline and shadow through one `text` stage, which redraws only the columns of the
    /// digits that changed, equals a fresh stage (which draws the whole box) on every frame, including frames where
    /// the seconds, minutes and hours change (tolerance 0: the same arithmetic on the same pixels).
    @Test(arguments: [PixelFormat.i420, .nv12, .rgba])
    func timecodeRedrawEqualsAFreshDraw(format: PixelFormat) throws {
        let chain = "text:text='TC {timecode}':size=30:outline=2:shadow=3:position=0.05x0.3"
        let base = try SpatialFixtures.photo(format)
        let running = try FilterChain(parsing: chain).makeProcessor(threads: 1)
        _ = try running.configure(for: FrameFormat(of: base))
        let seconds = [0.0, 0.04, 0.08, 0.36, 0.40, 0.96, 1.0, 1.04, 9.96, 10.0, 59.96, 60.0, 3599.96, 3600.0, 3600.04]
        for time in seconds {
            var frame = base
            frame.timestamp = MediaTime(value: Int64((time * 100).rounded()), timescale: 100)
            let fresh = try FilterChain(parsing: chain).makeProcessor(threads: 1)
            _ = try fresh.configure(for: FrameFormat(of: base))
            let expected = try #require(try fresh.frames(from: frame).first)
            let ours = try #require(try running.frames(from: frame).first)
            #expect(Self.planes(ours) == Self.planes(expected), "\(format) at \(time) s")
        }
    }

    /// Pixellate's division by multiply and shift equals the integer definition ⌊(2n + d) / 2d⌋ (the mean rounded
    /// half up), exactly: every n for small blocks, and the extremes and random sums for every block size up to 512².
    @Test func roundedDivisionIsExact() {
        var generator = SystemRandomNumberGenerator()
        for d in [1, 2, 3, 4, 7, 16, 255, 256, 300, 1023, 4096, 65_535, 89_999, 262_143, 262_144] as [UInt64] {
            let division = RoundedDivision(by: d)
            let most = 255 * d
            var samples: [UInt64] = d <= 256 ? Array(0...most) : [0, 1, d / 2 - 1, d / 2, d / 2 + 1, most - 1, most]
            if d > 256 { samples += (0..<20_000).map { _ in UInt64.random(in: 0...most, using: &generator) } }
            for k in UInt64(1)...254 {
                let half = k * d + d / 2   // where rounding turns
                samples += [half, half - 1, half + 1].filter { $0 <= most }
            }
            let wrong = samples.first { division.quotient($0) != (2 * $0 + d) / (2 * d) }
            #expect(wrong == nil, "d = \(d), n = \(wrong ?? 0)")
        }
    }
}
