import Foundation
import Testing
import VFXCore
import VFXFilters
import VFXTestSupport

/// motion-blur and zoom-blur on small frames of noise in every layout (I420, NV12, RGBA, BGRA, gray; odd sizes, so
/// chroma planes are odd too and rows end in a partial vector block), against their definitions evaluated here in
/// Double plane by plane (chroma planes at their own resolution: radius scaled by the plane's width, as the filters do).
@Suite struct DirectionalBlurTests {
    static let formats: [PixelFormat] = [.i420, .nv12, .rgba, .bgra, .gray8]

    /// A frame of pseudo-random bytes (a fixed linear congruential sequence): every sample differs from its
    /// neighbours, so a wrong tap, weight or clamp shows.
    static func noise(_ format: PixelFormat, width: Int, height: Int) -> VideoFrame {
        var frame = VideoFrame(format: format, width: width, height: height)
        var state: UInt32 = 12345
        frame.withMutablePlanes { planes in
            for plane in planes {
                for y in 0..<plane.height {
                    for i in 0..<(plane.width * plane.bytesPerPixel) {
                        state = state &* 1_664_525 &+ 1_013_904_223
                        plane.row(y)[i] = UInt8(truncatingIfNeeded: state >> 24)
                    }
                }
            }
        }
        return frame
    }

    /// The motion-blur definition on one plane of `channels` interleaved samples: the mean of 2K+1 samples one pixel
    /// apart along the major axis, linear across it, coordinates clamped (FilterSpec.motionBlur).
    static func motionBlur(_ rows: [[UInt8]], channels c: Int, radius: Double, degrees: Double) -> [[Double]] {
        let height = rows.count, width = rows[0].count / c
        let angle = degrees * .pi / 180
        let horizontal = abs(cos(angle)) >= abs(sin(angle))
        let t = horizontal ? sin(angle) / cos(angle) : cos(angle) / sin(angle)
        let steps = Int((radius / (1 + t * t).squareRoot()).rounded())
        let majorCount = horizontal ? width : height, minorCount = horizontal ? height : width
        func sample(_ major: Int, _ minor: Double, _ k: Int) -> Double {
            let m = min(max(major, 0), majorCount - 1)
            let p = min(max(minor, 0), Double(minorCount - 1))
            let lower = Int(p), upper = min(lower + 1, minorCount - 1)
            let f = p - Double(lower)
            let a = Double(horizontal ? rows[lower][m * c + k] : rows[m][lower * c + k])
            let b = Double(horizontal ? rows[upper][m * c + k] : rows[m][upper * c + k])
            return a + (b - a) * f
        }
        return (0..<height).map { y in
            (0..<(width * c)).map { i in
                let (x, k) = (i / c, i % c)
                let (major, minor) = horizontal ? (x, Double(y)) : (y, Double(x))
                let total = (-steps...steps).reduce(0.0) { $0 + sample(major + $1, minor + Double($1) * t, k) }
                return SpatialFixtures.byte(total / Double(2 * steps + 1))
            }
        }
    }

    /// Tolerance 1 code: the kernel sums the taps exactly in integers, with integer weights that put the sum within
    /// 0.07 of a code of the exact mean, so only a value that close to a rounding boundary can round the other way.
    /// Angles along both axes (0°, 90°: the running sums), the diagonal, 30°, steep ones either way (−70°, 100°) and
    /// one past a half turn (200°); radius 9, and 60 — longer than every frame here, so most taps clamp. Two slices.
    @Test(arguments: [0.0, 90.0, 45.0, 30.0, -70.0, 100.0, 200.0])
    func motionBlurFollowsItsDefinition(degrees: Double) throws {
        for format in Self.formats {
            for (width, height, radius) in [(37, 23, 9.0), (29, 41, 60.0)] {
                let frame = Self.noise(format, width: width, height: height)
                let output = try SpatialFixtures.apply("motion-blur:radius=\(radius):angle=\(degrees)", to: frame)
                for index in 0..<frame.planeCount {
                    let source = SpatialFixtures.rows(frame, index), c = frame.plane(index).bytesPerPixel
                    let planeRadius = radius * Double(source[0].count / c) / Double(width)
                    let expected = Self.motionBlur(source, channels: c, radius: planeRadius, degrees: degrees)
                    let result = SpatialFixtures.doubles(SpatialFixtures.rows(output, index))
                    let difference = SpatialFixtures.maxDifference(result, expected)
                    #expect(difference <= 1, "\(format) \(width)x\(height) radius \(radius) angle \(degrees) plane \(index)")
                }
            }
        }
    }

    /// The long-line kernel as documented (`PlaneLineSums`), in Double and not rounded: in line coordinates (rows along
    /// the major axis, columns across), R(k) = the sum over the window's 2K+1 rows ρ of the bilinear sample at column
    /// k/P + ρ·t, and each pixel mixes R at the two grid points around its own z·P = (x − j·t)·P linearly; P = 16, or
    /// 8 from K = 96 on.
    static func motionBlurPhases(_ rows: [[UInt8]], channels c: Int, radius: Double, degrees: Double) -> [[Double]] {
        let height = rows.count, width = rows[0].count / c
        let angle = degrees * .pi / 180
        let horizontal = abs(cos(angle)) >= abs(sin(angle))
        let t = horizontal ? sin(angle) / cos(angle) : cos(angle) / sin(angle)
        let steps = Int((radius / (1 + t * t).squareRoot()).rounded())
        let (lineRows, lineColumns) = horizontal ? (width, height) : (height, width)
        let phases = steps >= 96 ? 8 : 16
        func value(_ along: Int, _ across: Int, _ k: Int) -> Double {
            Double(horizontal ? rows[across][along * c + k] : rows[along][across * c + k])
        }
        func bilinear(_ along: Int, _ position: Double, _ k: Int) -> Double {
            let r = min(max(along, 0), lineRows - 1), p = min(max(position, 0), Double(lineColumns - 1))
            let lower = Int(p), upper = min(lower + 1, lineColumns - 1), f = p - Double(lower)
            return value(r, lower, k) + (value(r, upper, k) - value(r, lower, k)) * f
        }
        var result = rows.map { $0.map { _ in 0.0 } }
        let count = Double(2 * steps + 1), grid = Double(phases)
        for j in 0..<lineRows {
            for x in 0..<lineColumns {
                let z = (Double(x) - Double(j) * t) * grid, lower = z.rounded(.down), w = z - lower
                for k in 0..<c {
                    func sum(_ point: Double) -> Double {
                        (-steps...steps).reduce(0.0) { $0 + bilinear(j + $1, point / grid + Double(j + $1) * t, k) }
                    }
                    let mean = ((1 - w) * sum(lower) + w * sum(lower + 1)) / count
                    if horizontal { result[x][j * c + k] = mean } else { result[j][x * c + k] = mean }
                }
            }
        }
        return result
    }

    /// Long lines off the axes (K ≥ 32 along y, 40 along x: the grid of phases): within 0.55 of the kernel as documented evaluated
    /// in Double (rounding half a code, plus at most 255/8192 from weights rounded to 2^−12), and within one code of the
    /// definition (the grid lines bracket a kink of the bilinear sample for 1/P of the samples, each then off by at most
    /// |second difference across the line| / 4P; on noise, the worst case for that, the mean stays within a third of a
    /// code of the definition's). Angles either side of each axis, the diagonal, slopes 1/2 (26.57°: every phase on the
    /// grid) and 1/3, and one past a half turn; odd sizes, radius 80 (16 phases, most of the line inside the frame),
    /// 110 on a wide frame (8 phases along x) and 200 (mostly clamped). Two slices.
    @Test(arguments: [30.0, -20.0, 45.0, 26.565051177077990, 18.434948822922010, 63.0, -80.0, 100.0, 200.0])
    func longMotionBlurFollowsItsDefinition(degrees: Double) throws {
        for format in Self.formats {
            for (width, height, radius) in [(83, 47, 80.0), (247, 40, 110.0), (39, 71, 200.0)] {
                try Self.checkLongMotionBlur(format, width: width, height: height, radius: radius, degrees: degrees, threads: 2)
            }
        }
    }

    /// Long lines along x on frames wider than the ring of transposed line rows each slice keeps (the window's 2K + 2
    /// rows and up to 63 more, in tiles of 64): rows leave the ring and others take their places, so a row read after
    /// its place was taken would show. 300×20 at radius 60 (16 phases; K = 52 and 56, rings of 192 rows) and 400×16 at
    /// radius 120 (8 phases, rings of 320; the chroma planes, 200 wide at radius 60, wrap their rings of 192 too), at
    /// 30° and −20°, three slices (bands cut by the frame's edges in different places). Tolerances as above.
    @Test(arguments: [30.0, -20.0])
    func longMotionBlurAlongXOnFramesWiderThanItsRing(degrees: Double) throws {
        for format in Self.formats {
            for (width, height, radius) in [(300, 20, 60.0), (400, 16, 120.0)] {
                try Self.checkLongMotionBlur(format, width: width, height: height, radius: radius, degrees: degrees, threads: 3)
            }
        }
    }

    /// motion-blur on noise against the definition (within one code) and, on planes whose line takes the grid of
    /// phases, against the kernel as documented (within 0.55), plane by plane.
    static func checkLongMotionBlur(_ format: PixelFormat, width: Int, height: Int, radius: Double, degrees: Double,
                                    threads: Int) throws {
        let frame = Self.noise(format, width: width, height: height)
        let output = try SpatialFixtures.apply("motion-blur:radius=\(radius):angle=\(degrees)", to: frame, threads: threads)
        for index in 0..<frame.planeCount {
            let source = SpatialFixtures.rows(frame, index), c = frame.plane(index).bytesPerPixel
            let planeRadius = radius * Double(source[0].count / c) / Double(width)
            let result = SpatialFixtures.doubles(SpatialFixtures.rows(output, index))
            let label = "\(format) \(width)x\(height) radius \(radius) angle \(degrees) plane \(index)"
            let kernel = Self.motionBlurPhases(source, channels: c, radius: planeRadius, degrees: degrees)
            let expected = Self.motionBlur(source, channels: c, radius: planeRadius, degrees: degrees)
            let toKernel = SpatialFixtures.maxDifference(result, kernel)
            let toDefinition = SpatialFixtures.maxDifference(result, expected)
            #expect(toDefinition <= 1, "\(label): \(toDefinition) from the definition")
            // Planes whose line is shorter (K below 32 along y, 40 along x) take the taps, exact instead.
            let angle = degrees * .pi / 180, alongX = abs(cos(angle)) >= abs(sin(angle))
            let slope = min(abs(tan(angle)), abs(1 / tan(angle)))
            if Int((planeRadius / (1 + slope * slope).squareRoot()).rounded()) >= (alongX ? 40 : 32) {
                #expect(toKernel <= 0.55, "\(label): \(toKernel) from the kernel")
            }
        }
    }

    /// The zoom-blur kernel as documented, evaluated in Double: n passes, pass k the average of the previous result and
    /// that result scaled about the centre by s^(2ᵏ) (bilinear, clamped), then rounded half up.
    static func zoomPasses(_ rows: [[UInt8]], channels c: Int, centre: (Double, Double), totalScale: Double,
                           samples: Int) -> [[Double]] {
        let height = rows.count, width = rows[0].count / c
        var passes = 0
        while (1 << passes) < samples { passes += 1 }
        let step = passes == 0 ? 1 : pow(totalScale, 1 / Double((1 << passes) - 1))
        var image = rows.map { $0.map(Double.init) }
        let cx = centre.0 - 0.5, cy = centre.1 - 0.5
        for pass in 0..<passes {
            let s = pow(step, Double(1 << pass))
            let previous = image
            for y in 0..<height {
                let py = min(max(cy + (Double(y) - cy) * s, 0), Double(height - 1))
                let y0 = Int(py), y1 = min(y0 + 1, height - 1), fy = py - Double(y0)
                for x in 0..<width {
                    let px = min(max(cx + (Double(x) - cx) * s, 0), Double(width - 1))
                    let x0 = Int(px), x1 = min(x0 + 1, width - 1), fx = px - Double(x0)
                    for k in 0..<c {
                        func at(_ yy: Int, _ xx: Int) -> Double { previous[yy][xx * c + k] }
                        let top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * fx
                        let bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * fx
                        image[y][x * c + k] = 0.5 * (previous[y][x * c + k] + top + (bottom - top) * fy)
                    }
                }
            }
        }
        return image.map { $0.map(SpatialFixtures.byte) }
    }

    /// Tolerance 1 code: the kernel keeps its passes in 16 bits with seven bits below the byte, mixes them with Q15
    /// weights and rounds (each pass moves a result by less than 3/256 of a code, nine passes by less than 0.11) and
    /// keeps its positions in Float; so only the final rounding to bytes may land one code from the Double kernel's. Amounts 3 (two passes), 13 (four) and 300 (beyond the half
    /// diagonal of every frame here: the last sample is the centre itself), centres inside and on the border. Two slices.
    @Test(arguments: [(3.0, 0.5, 0.5), (13.0, 0.3, 0.8), (300.0, 1.0, 0.0)])
    func zoomBlurFollowsItsPasses(amount: Double, x: Double, y: Double) throws {
        for format in Self.formats {
            for (width, height) in [(37, 23), (70, 41)] {
                let frame = Self.noise(format, width: width, height: height)
                let output = try SpatialFixtures.apply("zoom-blur:center=\(x)x\(y):amount=\(amount)", to: frame)
                let halfDiagonal = Double(width * width + height * height).squareRoot() / 2
                for index in 0..<frame.planeCount {
                    let source = SpatialFixtures.rows(frame, index), c = frame.plane(index).bytesPerPixel
                    let planeWidth = source[0].count / c, planeHeight = source.count
                    let expected = Self.zoomPasses(source, channels: c, centre: (x * Double(planeWidth), y * Double(planeHeight)),
                                                   totalScale: max(0, 1 - amount / halfDiagonal),
                                                   samples: Int(amount.rounded(.up)) + 1)
                    let result = SpatialFixtures.doubles(SpatialFixtures.rows(output, index))
                    let difference = SpatialFixtures.maxDifference(result, expected)
                    #expect(difference <= 1, "\(format) \(width)x\(height) amount \(amount) plane \(index): \(difference)")
                }
            }
        }
    }
}
