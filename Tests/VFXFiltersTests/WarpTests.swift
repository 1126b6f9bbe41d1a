import Foundation
import VFXCore
import VFXFilters
import VFXTestSupport
import XCTest

/// Distortions, tiles and cell effects against their formulas, written again here in Double and sampled with an
/// exact bilinear (or nearest) reader on a 96×64 gray photo (media/astronaut.png scaled). The stage stores bilinear
/// weights in 1/256, so a sample may differ from the exact interpolation by up to one code (plus rounding): ≤ 2
/// codes everywhere. Where the map jumps (cell borders, the hole's rim, fold lines) a position computed in another
/// order can land in the neighbouring cell: such pixels are counted and held to a small share.
final class WarpTests: XCTestCase {
    typealias P = SIMD2<Double>
    let width = 96, height = 64

    func photo() throws -> [UInt8] { try SpatialFixtures.decode("astronaut.png", pixelFormat: "gray", size: (width, height)) }

    /// Exact bilinear read of `image` at source position `p` (pixels; centres at +½), edges repeated.
    func bilinear(_ image: [UInt8], _ p: P) -> Double {
        let x = min(max(p.x - 0.5, 0), Double(width - 1)), y = min(max(p.y - 0.5, 0), Double(height - 1))
        let x0 = Int(x.rounded(.down)), y0 = Int(y.rounded(.down))
        let x1 = min(x0 + 1, width - 1), y1 = min(y0 + 1, height - 1)
        let tx = x - Double(x0), ty = y - Double(y0)
        func at(_ x: Int, _ y: Int) -> Double { Double(image[y * width + x]) }
        return (at(x0, y0) * (1 - tx) + at(x1, y0) * tx) * (1 - ty) + (at(x0, y1) * (1 - tx) + at(x1, y1) * tx) * ty
    }

    /// The sample nearest to `p` (half rounds up), edges repeated.
    func nearest(_ image: [UInt8], _ p: P) -> Double {
        let x = min(max(Int((p.x - 0.5).rounded(.down) + ((p.x - 0.5) - (p.x - 0.5).rounded(.down) >= 0.5 ? 1 : 0)), 0), width - 1)
        let y = min(max(Int((p.y - 0.5).rounded(.down) + ((p.y - 0.5) - (p.y - 0.5).rounded(.down) >= 0.5 ? 1 : 0)), 0), height - 1)
        return Double(image[y * width + x])
    }

    /// Runs `chain` on the photo and compares with `expected(p, image)` (nil = fill value `fill`).
    func check(_ chain: String, nearestSampling: Bool = false, fill: Double = 0, allowedJumps: Double = 0.002,
               file: StaticString = #filePath, line: UInt = #line, _ source: (P, P) -> P?) throws {
        let image = try photo()
        let output = RawFrames.bytes(try TestSupport.apply(chain, to: RawFrames.frame(image, format: .gray8, width: width, height: height)))
        let size = P(Double(width), Double(height))
        var worst = 0.0, jumps = 0
        for y in 0..<height {
            for x in 0..<width {
                let p = P(Double(x) + 0.5, Double(y) + 0.5)
                let want = source(p, size).map { nearestSampling ? nearest(image, $0) : bilinear(image, $0) } ?? fill
                let error = abs(Double(output[y * width + x]) - want)
                if error > 2 { jumps += 1 } else { worst = max(worst, error) }
            }
        }
        XCTAssertLessThanOrEqual(worst, 2, chain, file: file, line: line)
        XCTAssertLessThanOrEqual(Double(jumps) / Double(width * height), allowedJumps, "\(chain): \(jumps) pixels off", file: file, line: line)
    }

    /// d = p − c, r, t = r / R with R = radius × height.
    func polar(_ p: P, _ size: P, radius: Double) -> (c: P, d: P, r: Double, big: Double) {
        let c = size / 2, d = p - c
        return (c, d, (d * d).sum().squareRoot(), radius * size.y)
    }

    func rotate(_ d: P, _ angle: Double) -> P { P(d.x * cos(angle) - d.y * sin(angle), d.x * sin(angle) + d.y * cos(angle)) }

    func testRadialDistortions() throws {
        try check("bump-distortion:radius=0.4:scale=0.6") { p, size in
            let (c, d, r, big) = polar(p, size, radius: 0.4)
            guard r < big else { return p }
            let t = r / big
            return c + d * (1 - 0.6 * pow(1 - t * t, 2))
        }
        try check("pinch-distortion:radius=0.45:scale=0.7") { p, size in
            let (c, d, r, big) = polar(p, size, radius: 0.45)
            guard r < big, r > 0 else { return p }
            return c + d * pow(sin(Double.pi * r / big / 2), -0.7)
        }
        try check("twirl-distortion:radius=0.4:angle=200") { p, size in
            let (c, d, r, big) = polar(p, size, radius: 0.4)
            guard r < big else { return p }
            let t = r / big
            return c + rotate(d, 200 * Double.pi / 180 * (1 - (3 * t * t - 2 * t * t * t)))
        }
        try check("vortex-distortion:radius=0.5:angle=900") { p, size in
            let (c, d, r, big) = polar(p, size, radius: 0.5)
            guard r < big else { return p }
            return c + rotate(d, 900 * Double.pi / 180 * (1 - r / big) * (1 - r / big))
        }
        try check("hole-distortion:radius=0.2:color=white", fill: 255) { p, size in
            let (c, d, r, big) = polar(p, size, radius: 0.2)
            guard r > big else { return nil }
            return c + d * (1 - big * big / (r * r))
        }
        try check("circle-splash-distortion:radius=0.25") { p, size in
            let (c, d, r, big) = polar(p, size, radius: 0.25)
            guard r > big else { return p }
            return c + d * big / r
        }
        try check("glass:amplitude=5:wavelength=23") { p, _ in
            p + 5 * P(sin(2 * Double.pi * p.y / 23), sin(2 * Double.pi * p.x / 23))
        }
    }

    func testLensDistortionAndItsInverse() throws {
        func lens(_ p: P, _ size: P, _ factor: (Double) -> Double?) -> P? {
            let c = size / 2, d = p - c
            let rho = (d * d).sum().squareRoot() / ((size * size).sum().squareRoot() / 2)
            guard let f = factor(rho) else { return nil }
            let s = c + d * f
            return s.x < 0 || s.y < 0 || s.x > size.x || s.y > size.y ? nil : s
        }
        try check("lens-distortion:k1=-0.35:k2=0.1") { p, size in lens(p, size) { rho in 1 - 0.35 * rho * rho + 0.1 * pow(rho, 4) } }
        try check("lens-distortion:k1=0.3") { p, size in lens(p, size) { rho in 1 + 0.3 * rho * rho } }
        // The inverse by bisection (the stage uses Newton's method): s·(1 + k1 s² + k2 s⁴) = ρ.
        try check("lens-correction:k1=0.3:k2=0.05") { p, size in
            lens(p, size) { rho in
                guard rho > 0 else { return 1 }
                var (low, high) = (0.0, rho)
                for _ in 0..<80 {
                    let mid = (low + high) / 2
                    if mid * (1 + 0.3 * mid * mid + 0.05 * pow(mid, 4)) < rho { low = mid } else { high = mid }
                }
                return low / rho
            }
        }
        // Distorting and correcting with the same coefficients gives the picture back (two resamplings: ≥ 28 dB
        // inside the central half of the frame, where nothing was pushed out of it).
        let image = try photo()
        let frame = RawFrames.frame(image, format: .gray8, width: width, height: height)
        let back = RawFrames.bytes(try TestSupport.apply("lens-distortion:k1=-0.2,lens-correction:k1=-0.2", to: frame))
        var a: [UInt8] = [], b: [UInt8] = []
        for y in (height / 4)..<(3 * height / 4) {
            for x in (width / 4)..<(3 * width / 4) { a.append(image[y * width + x]); b.append(back[y * width + x]) }
        }
        let psnr = Quality.psnr(a, b)
        XCTAssertGreaterThanOrEqual(psnr, 28, "distort + correct: \(psnr) dB")
    }

    func testTilesAndMirrors() throws {
        try check("kaleidoscope:count=5:angle=20") { p, size in
            let c = size / 2, d = p - c
            let wedge = 2 * Double.pi / 5, angle = 20 * Double.pi / 180
            var phi = atan2(d.y, d.x) - angle
            phi = phi - wedge * floor(phi / wedge)
            if phi > wedge / 2 { phi = wedge - phi }
            let r = (d * d).sum().squareRoot()
            return c + r * P(cos(phi + angle), sin(phi + angle))
        }
        try check("mirror:keep=right", nearestSampling: true) { p, size in P(max(p.x, size.x - p.x), p.y) }
        try check("mirror:keep=top", nearestSampling: true) { p, size in P(p.x, min(p.y, size.y - p.y)) }
        try check("tile:count=3") { p, size in
            let cell = size / 3
            return P(p.x.truncatingRemainder(dividingBy: cell.x), p.y.truncatingRemainder(dividingBy: cell.y)) * 3
        }
        try check("fourfold-reflected-tile:count=2") { p, size in
            func fold(_ v: Double, _ period: Double) -> Double {
                let m = v.truncatingRemainder(dividingBy: 2 * period)
                return m <= period ? m : 2 * period - m
            }
            return P(fold(p.x, size.x / 2), fold(p.y, size.y / 2)) * 2
        }
        // The triangle: reflect across the three families of tiling lines until inside (written here with the
        // lines' offsets as explicit distances).
        try check("triangle-kaleidoscope:size=40:angle=15", allowedJumps: 0.01) { p, size in
            let c = size / 2, angle = 15 * Double.pi / 180
            let d = p - c
            var q = P(d.x * cos(angle) + d.y * sin(angle), -d.x * sin(angle) + d.y * cos(angle))
            let h = 40 * 3.0.squareRoot() / 2
            let lines: [(P, Double)] = [(P(0, 1), 0), (P(3.0.squareRoot() / 2, -0.5), 0), (P(-(3.0.squareRoot()) / 2, -0.5), h)]
            for _ in 0..<200 {
                var inside = true
                for (n, offset) in lines {
                    let distance = (q * n).sum() + offset   // signed distance from the triangle's side
                    if distance < 0 { q -= 2 * distance * n; inside = false } else if distance > h { q -= 2 * (distance - h) * n; inside = false }
                }
                if inside { break }
            }
            return c + P(q.x * cos(angle) - q.y * sin(angle), q.x * sin(angle) + q.y * cos(angle))
        }
    }

    /// Seeds rebuilt from the documented hash; the nearest is searched over 5×5 cells (the stage searches 3×3).
    func seed(_ i: Int, _ j: Int, step: Double, jitter: Double) -> P {
        var h = UInt64(bitPattern: Int64(i)) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: Int64(j)) &* 0xC2B2_AE3D_27D4_EB4F
        h ^= h >> 29
        h &*= 0xBF58_476D_1CE4_E5B9
        h ^= h >> 32
        let u = Double(h & 0xffff) / 65536, v = Double((h >> 16) & 0xffff) / 65536
        return P((Double(i) + 0.5 + jitter * (u - 0.5)) * step, (Double(j) + 0.5 + jitter * (v - 0.5)) * step)
    }

    func nearestSeed(_ p: P, step: Double, jitter: Double) -> (P, Double) {
        let i0 = Int(floor(p.x / step)), j0 = Int(floor(p.y / step))
        var best = P(0, 0), distance = Double.infinity
        for j in (j0 - 2)...(j0 + 2) {
            for i in (i0 - 2)...(i0 + 2) {
                let s = seed(i, j, step: step, jitter: jitter), d = s - p
                if (d * d).sum() < distance { (best, distance) = (s, (d * d).sum()) }
            }
        }
        return (best, distance)
    }

    func testCells() throws {
        try check("crystallize:radius=9", nearestSampling: true, allowedJumps: 0.005) { p, _ in nearestSeed(p, step: 9, jitter: 0.8).0 }
        try check("pointillize:radius=4:background=black", nearestSampling: true, allowedJumps: 0.01) { p, _ in
            let (s, distance) = nearestSeed(p, step: 8, jitter: 0.5)
            return distance <= 16 ? s : nil
        }
        // Hexagon centres: rows 1.5·a apart (a = scale/√3), odd rows shifted by half a step; the nearest centre by
        // brute force over the rows and columns around p.
        let scale = 11.0, a = scale / 3.0.squareRoot()
        try check("hexagonal-pixellate:scale=11", nearestSampling: true, allowedJumps: 0.01) { p, _ in
            var best = P(0, 0), distance = Double.infinity
            let row0 = Int(floor(p.y / (1.5 * a)))
            for row in (row0 - 2)...(row0 + 2) {
                let cy = Double(row) * 1.5 * a
                let shift = Double(row) * scale / 2
                let col0 = Int(floor((p.x - shift) / scale))
                for col in (col0 - 2)...(col0 + 2) {
                    let center = P(Double(col) * scale + shift, cy), d = center - p
                    if (d * d).sum() < distance { (best, distance) = (center, (d * d).sum()) }
                }
            }
            return best
        }
    }

    /// Every format goes through the same map: the luma plane of I420 equals the gray result, RGBA's channels each
    /// equal it for a gray picture, and NV12's chroma equals I420's.
    func testFormatsAgree() throws {
        let image = try photo()
        let chain = "twirl-distortion:angle=120:radius=0.5"
        let gray = RawFrames.bytes(try TestSupport.apply(chain, to: RawFrames.frame(image, format: .gray8, width: width, height: height)))
        let chroma = (0..<(width / 2 * height / 2)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let i420 = RawFrames.bytes(try TestSupport.apply(chain, to: RawFrames.frame(image + chroma + chroma.reversed(), format: .i420,
                                                                                  width: width, height: height)))
        XCTAssertEqual(Array(i420[..<(width * height)]), gray)
        let nv12Input = image + zip(chroma, chroma.reversed()).flatMap { [$0, $1] }
        let nv12 = RawFrames.bytes(try TestSupport.apply(chain, to: RawFrames.frame(nv12Input, format: .nv12, width: width, height: height)))
        let planeU = Array(i420[(width * height)..<(width * height + chroma.count)])
        XCTAssertEqual(stride(from: width * height, to: nv12.count, by: 2).map { nv12[$0] }, planeU)
        let rgba = RawFrames.bytes(try TestSupport.apply(chain, to: RawFrames.frame(image.flatMap { [$0, $0, $0, 255] }, format: .rgba,
                                                                                  width: width, height: height)))
        XCTAssertEqual(stride(from: 1, to: rgba.count, by: 4).map { rgba[$0] }, gray)
    }
}
