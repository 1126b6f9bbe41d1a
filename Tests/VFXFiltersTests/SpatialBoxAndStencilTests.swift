import Foundation
import Testing
import VFXCore
import VFXFilters

/// box-blur, sharpen, edges, emboss and median against their definitions evaluated here in Double on
/// media/astronaut.png, with clamped edges.
@Suite struct SpatialBoxAndStencilTests {
    /// box-blur is exact: integer sums and an exactly rounded division. Tolerance 0.
    @Test(arguments: [(PixelFormat.gray8, 3), (.gray8, 10), (.rgba, 4)])
    func boxBlurEqualsDirectAverage(format: PixelFormat, radius: Int) throws {
        let frame = try SpatialFixtures.photo(format)
        let channels = format == .rgba ? 4 : 1
        let weights = [Double](repeating: 1, count: 2 * radius + 1)
        let sums = SpatialFixtures.convolve(SpatialFixtures.doubles(SpatialFixtures.rows(frame, 0)), channels: channels, weights: weights)
        let area = Double((2 * radius + 1) * (2 * radius + 1))
        let exact = sums.map { $0.map { ($0 / area).rounded() } }
        let output = try SpatialFixtures.apply("box-blur:radius=\(radius)", to: frame)
        #expect(SpatialFixtures.maxDifference(SpatialFixtures.doubles(SpatialFixtures.rows(output, 0)), exact) == 0)
    }

    /// The 3×3 neighbourhood of (x, y) with clamped edges, per channel.
    static func neighbor(_ image: [[Double]], _ x: Int, _ y: Int, _ dx: Int, _ dy: Int, channel: Int, channels: Int) -> Double {
        let height = image.count, width = image[0].count / channels
        return image[min(max(y + dy, 0), height - 1)][min(max(x + dx, 0), width - 1) * channels + channel]
    }

    /// Evaluates `formula` at every sample of a frame and compares it with `chain`'s output. Tolerance: each
    /// output byte must be a rounding of the formula's value clamped to 0…255, i.e. within 0.5 + 0.001 of it.
    /// The kernel computes in Float and rounds ties to even; coefficients like 0.7 are not exact in binary, so
    /// values on an exact .5 (frequent: integer neighbourhoods times 0.5 or 1.5) may round either way.
    func check(_ chain: String, format: PixelFormat = .gray8, _ formula: ([[Double]], Int, Int, Int) -> Double) throws {
        let frame = try SpatialFixtures.photo(format)
        let channels = format == .rgba ? 4 : 1
        let image = SpatialFixtures.doubles(SpatialFixtures.rows(frame, 0))
        let output = SpatialFixtures.doubles(SpatialFixtures.rows(try SpatialFixtures.apply(chain, to: frame), 0))
        var worst = 0.0
        for y in 0..<image.count {
            for i in 0..<image[0].count {
                let value = min(max(formula(image, i / channels, y, i % channels), 0), 255)
                worst = max(worst, abs(output[y][i] - value))
            }
        }
        #expect(worst <= 0.501, "\(chain): \(worst)")
    }

    @Test func sharpenFollowsItsFormula() throws {
        try check("sharpen:sharpness=0.7") { image, x, y, c in
            let n = { (dx: Int, dy: Int) in Self.neighbor(image, x, y, dx, dy, channel: c, channels: 1) }
            return n(0, 0) + 0.7 * (4 * n(0, 0) - n(0, -1) - n(0, 1) - n(-1, 0) - n(1, 0))
        }
    }

    @Test func sharpenKeepsAlpha() throws {
        try check("sharpen:sharpness=0.5", format: .rgba) { image, x, y, c in
            let n = { (dx: Int, dy: Int) in Self.neighbor(image, x, y, dx, dy, channel: c, channels: 4) }
            return c == 3 ? n(0, 0) : n(0, 0) + 0.5 * (4 * n(0, 0) - n(0, -1) - n(0, 1) - n(-1, 0) - n(1, 0))
        }
    }

    @Test func edgesAreSobelMagnitude() throws {
        try check("edges:intensity=2") { image, x, y, c in
            let n = { (dx: Int, dy: Int) in Self.neighbor(image, x, y, dx, dy, channel: c, channels: 1) }
            let gx = n(1, -1) + 2 * n(1, 0) + n(1, 1) - n(-1, -1) - 2 * n(-1, 0) - n(-1, 1)
            let gy = n(-1, 1) + 2 * n(0, 1) + n(1, 1) - n(-1, -1) - 2 * n(0, -1) - n(1, -1)
            return 2 * (gx * gx + gy * gy).squareRoot() / 4
        }
    }

    @Test func embossFollowsItsFormula() throws {
        try check("emboss:intensity=1.5") { image, x, y, c in
            let n = { (dx: Int, dy: Int) in Self.neighbor(image, x, y, dx, dy, channel: c, channels: 1) }
            return 127.5 + 1.5 * (n(1, 1) - n(-1, -1) + 0.5 * (n(1, 0) + n(0, 1) - n(-1, 0) - n(0, -1)))
        }
    }

    /// The median is a selection of integers, so `check`'s bound makes it exact.
    @Test func medianIsTheMiddleOfNine() throws {
        try check("median", format: .rgba) { image, x, y, c in
            var values: [Double] = []
            for dy in -1...1 { for dx in -1...1 { values.append(Self.neighbor(image, x, y, dx, dy, channel: c, channels: 4)) } }
            return values.sorted()[4]
        }
    }

    /// YUV frames: edges and emboss make chroma neutral; sharpen leaves it untouched.
    @Test func chromaHandling() throws {
        let frame = try SpatialFixtures.photo(.i420)
        let edges = try SpatialFixtures.apply("edges", to: frame)
        #expect(SpatialFixtures.rows(edges, 1).allSatisfy { $0.allSatisfy { $0 == 128 } })
        let sharpened = try SpatialFixtures.apply("sharpen", to: frame)
        #expect(SpatialFixtures.rows(sharpened, 2) == SpatialFixtures.rows(frame, 2))
    }
}
