import Foundation
import VFXCore
import VFXPipeline
@testable import VFXFilters
import VFXTestSupport
import XCTest

/// The two kernels for runs of several colour filters on I420/NV12: `ColorRunYUVKernel` (matrices and curves
/// evaluated per pixel, a vignette in the same loop) against its definition evaluated here in doubles with
/// `FusedColorProcessor.evaluate` for the filters' own formulas, and `PlanarYUVKernel` on a run of per-plane filters
/// against the per-plane formulas applied one after the other.
final class ColorRunKernelTests: XCTestCase, RandomYUVFrames {
    let (width, height) = (37, 19)

    /// The definition, in doubles (BT.601 limited range): each pixel's R'G'B' from its luma and its block's chroma; the
    /// run's first matrix on it unclipped, then clipped; the rest of the run by `FusedColorProcessor.evaluate`; its luma;
    /// each block's chroma from the mean of its pixels' output R'G'B'; then, with a vignette, luma scaled toward 16 and
    /// chroma toward 128 by `1 − intensity·s(t)` at the sample's centre (`t = (d² − r²)/(1 − r²)` clipped, `s` the
    /// smooth step, d the distance to the frame's centre over the half diagonal).
    func expected(_ input: [UInt8], run: [ColorTransform], vignette: (radius: Double, intensity: Double)?) -> [Double] {
        let (cw, ch) = chromaSize
        var first: ColorTransform?
        var rest = run
        if case .affine = run[0].kind { first = run[0]; rest = Array(run.dropFirst()) }
        func output(_ y: UInt8, _ u: UInt8, _ v: UInt8) -> SIMD3<Double> {
            let l = (Double(y) - 16) / 219, pb = (Double(u) - 128) / 224, pr = (Double(v) - 128) / 224
            let r = l + 1.402 * pr, b = l + 1.772 * pb
            let g = (l - 0.299 * r - 0.114 * b) / 0.587
            var rgb = SIMD3<Float>(Float(r), Float(g), Float(b))
            if let first { rgb = first.apply(rgb).clampedToUnit }
            let out = FusedColorProcessor.evaluate(rest, rgb)
            return SIMD3(Double(out.x), Double(out.y), Double(out.z))
        }
        func gain(x: Double, y: Double) -> Double {
            guard let (radius, intensity) = vignette else { return 1 }
            let halfDiagonal = (Double(width * width + height * height)).squareRoot() / 2
            let dx = (x - Double(width) / 2) / halfDiagonal, dy = (y - Double(height) / 2) / halfDiagonal
            let t = min(max((dx * dx + dy * dy - radius * radius) / (1 - radius * radius), 0), 1)
            return 1 - intensity * t * t * (3 - 2 * t)
        }
        var result = [Double](repeating: 0, count: input.count)
        for by in 0..<ch {
            for bx in 0..<cw {
                let u = input[width * height + by * cw + bx], v = input[width * height + cw * ch + by * cw + bx]
                var sum = SIMD3<Double>(), count = 0.0
                for y in (2 * by)..<min(2 * by + 2, height) {
                    for x in (2 * bx)..<min(2 * bx + 2, width) {
                        let c = output(input[y * width + x], u, v)
                        let luma = 0.299 * c.x + 0.587 * c.y + 0.114 * c.z
                        result[y * width + x] = 16 + 219 * luma * gain(x: Double(x) + 0.5, y: Double(y) + 0.5)
                        sum += c
                        count += 1
                    }
                }
                let mean = sum / count
                let luma = 0.299 * mean.x + 0.587 * mean.y + 0.114 * mean.z
                let g = gain(x: (Double(bx) + 0.5) * Double(width) / Double(cw), y: (Double(by) + 0.5) * Double(height) / Double(ch))
                result[width * height + by * cw + bx] = 128 + 224 * (mean.z - luma) / 1.772 * g
                result[width * height + cw * ch + by * cw + bx] = 128 + 224 * (mean.x - luma) / 1.402 * g
            }
        }
        return result
    }

    /// `chain` applied to the I420 planes `input`, and to them as NV12, on one and two threads: every sample within 1 code
    /// of `want` rounded.
    func assertChain(_ chain: String, on input: [UInt8], within1CodeOf want: [Double]) throws {
        for (pixelFormat, bytes) in [(PixelFormat.i420, input), (.nv12, nv12(input))] {
            for threads in [1, 2] {
                let frame = RawFrames.frame(bytes, format: pixelFormat, width: width, height: height)
                var output = RawFrames.bytes(try TestSupport.apply(chain, to: frame, threads: threads))
                if pixelFormat == .nv12 { output = i420(fromNV12: output) }
                let worst = zip(output, want).map { abs(Double($0) - $1.rounded()) }.max() ?? 0
                XCTAssertLessThanOrEqual(worst, 1, "\(chain) on \(pixelFormat), \(threads) thread(s)")
            }
        }
    }

    /// Runs that mix matrices, per-channel curves and luma curves, alone and with a vignette, on I420 and NV12 (odd
    /// sizes: one-column and one-row blocks), one and two threads: every sample within 1 code of the definition
    /// (rounding, plus curves read at the nearest of 4096 entries: ≤ slope × 0.03 codes, ≤ 0.04 for these curves).
    func testRunKernelMatchesItsDefinition() throws {
        let input = randomI420(seed: 11)
        let format = FrameFormat(pixelFormat: .i420, width: width, height: height)
        let chains = ["sepia:0.7,hue:angle=40,gamma:power=1.3",
                      "gamma:power=1.2,tint:color=#3366cc:amount=0.3,brightness:amount=0.05",
                      "tone-curve:point1=0.25x0.15:point3=0.75x0.85,sepia,mono",
                      "gamma:power=0.8"]
        for chain in chains {
            for vignette in [nil, (radius: 0.3, intensity: 0.8)] as [(radius: Double, intensity: Double)?] {
                let run = try transforms(chain, format: format)
                // Through the chain these runs take the fixed-point kernel or this one (a steep curve, `mono`), with the
                // vignette in the same loop either way; this kernel is also checked here on its own.
                let want = expected(input, run: run, vignette: vignette)
                if vignette == nil {
                    for (pixelFormat, bytes) in [(PixelFormat.i420, input), (.nv12, nv12(input))] {
                        var frame = RawFrames.frame(bytes, format: pixelFormat, width: width, height: height)
                        let kernel = try XCTUnwrap(ColorRunYUVKernel(run, coding: YUVCoding(format.color), chromaInterleaved: pixelFormat == .nv12))
                        frame.withMutablePlanes { kernel.apply(to: $0, width: width, height: height, slices: SliceRunner(threads: 2)) }
                        var output = RawFrames.bytes(frame)
                        if pixelFormat == .nv12 { output = i420(fromNV12: output) }
                        let worst = zip(output, want).map { abs(Double($0) - $1.rounded()) }.max() ?? 0
                        XCTAssertLessThanOrEqual(worst, 1, "ColorRunYUVKernel: \(chain) on \(pixelFormat)")
                    }
                }
                if vignette != nil {
                    // The vignette darkens the corners by tens of codes: a kernel that left it out would fail.
                    let plain = expected(input, run: run, vignette: nil)
                    XCTAssertGreaterThan(zip(want, plain).map { abs($0 - $1) }.max() ?? 0, 20, chain)
                }
                let full = chain + (vignette.map { ",vignette:radius=\($0.radius):intensity=\($0.intensity)" } ?? "")
                try assertChain(full, on: input, within1CodeOf: want)
            }
        }
    }

    /// Runs of matrices and curves in 16-bit fixed point (`FixedPointRunKernel`): a lone matrix, two and three (with a
    /// clamp between them that acts), lone curves and curves between matrices, on I420 and NV12, odd sizes, one and two
    /// threads: every sample within 1 code of the definition evaluated here in doubles (the fixed point is within 0.25
    /// code before its final rounding). A matrix whose gains
    /// leave 16 bits (red ×2.5), and a curve too steep at 0 for cubic pieces (`gamma` 0.5) go to the Float kernels
    /// instead.
    func testMatrixRunKernelMatchesItsDefinition() throws {
        let input = randomI420(seed: 17)
        let format = FrameFormat(pixelFormat: .i420, width: width, height: height)
        let chains = ["sepia", "color-matrix:rr=0.5:rg=0.5:rb=0:br=0.2:bb=0.9", "false-color:dark=navy:light=gold",
                      "sepia:0.7,tint:color=#3366cc:amount=0.3,sepia",
                      "gamma:power=1.2", "gamma:power=1.1", "tone-curve:point1=0.25x0.15:point3=0.75x0.85",
                      "sepia,hue:angle=20,gamma:power=1.2"]
        for chain in chains {
            let run = try transforms(chain, format: format)
            XCTAssertTrue(FusedColorProcessor.chooseKernel(for: run, format: format) is FixedPointRunKernel, chain)
            try assertChain(chain, on: input, within1CodeOf: expected(input, run: run, vignette: nil))
        }
        let bright = try transforms("color-matrix:rr=2.5", format: format)
        XCTAssertNil(FixedPointRunKernel(bright, coding: YUVCoding(format.color), chromaInterleaved: false))
        XCTAssertTrue(FusedColorProcessor.chooseKernel(for: bright, format: format) is AffineYUVKernel)
        let steep = try transforms("gamma:power=0.5", format: format)
        XCTAssertNil(FixedPointRunKernel(steep, coding: YUVCoding(format.color), chromaInterleaved: false))
        XCTAssertTrue(FusedColorProcessor.chooseKernel(for: steep, format: format) is ColorRunYUVKernel)
    }

    /// I420 planes of colours that no clamp of `sepia` touches: per block a random R'G'B' within 0.1…0.6, per pixel that
    /// colour ± 0.05; luma per pixel, chroma from the block's mean (BT.601 limited range), rounded to codes.
    func inGamutI420(seed: UInt64) -> [UInt8] {
        var generator = SystemRandomNumberGenerator.Seeded(state: seed)
        let (cw, ch) = chromaSize
        let (luma, quarter) = (width * height, cw * ch)
        var planes = [UInt8](repeating: 0, count: luma + 2 * quarter)
        func unit() -> Double { Double(generator.byte()) / 255 }
        for by in 0..<ch {
            for bx in 0..<cw {
                let base = SIMD3(0.1 + 0.5 * unit(), 0.1 + 0.5 * unit(), 0.1 + 0.5 * unit())
                var sum = SIMD3<Double>(), count = 0.0
                for y in (2 * by)..<min(2 * by + 2, height) {
                    for x in (2 * bx)..<min(2 * bx + 2, width) {
                        let rgb = base + SIMD3(unit(), unit(), unit()) * 0.1 - 0.05
                        planes[y * width + x] = UInt8((16 + 219 * (0.299 * rgb.x + 0.587 * rgb.y + 0.114 * rgb.z)).rounded())
                        sum += rgb
                        count += 1
                    }
                }
                let mean = sum / count, y = 0.299 * mean.x + 0.587 * mean.y + 0.114 * mean.z
                planes[luma + by * cw + bx] = UInt8((128 + 224 * (mean.z - y) / 1.772).rounded())
                planes[luma + quarter + by * cw + bx] = UInt8((128 + 224 * (mean.x - y) / 1.402).rounded())
            }
        }
        return planes
    }

    /// A lone matrix (`FixedPointRunKernel.AffineCodes`) runs as one affine map per output code on blocks where its clamp
    /// cannot act, and per channel elsewhere: on frames of colours that no clamp touches (R'G'B' within 0.05…0.7, so
    /// `sepia`'s red stays under 0.95), and on frames where such rows alternate with random ones (out of gamut: clamps
    /// act), on I420 and NV12, one and two threads, every sample within 1 code of the definition in doubles (both paths
    /// are within 0.1 code before the final rounding).
    func testAffinePathMatchesTheDefinition() throws {
        let (cw, ch) = chromaSize
        let (luma, quarter) = (width * height, cw * ch)
        let inGamut = inGamutI420(seed: 41)
        // Every other pair of rows (one chroma row) random instead.
        let random = randomI420(seed: 43)
        var mixed = inGamut
        for y in 0..<height where (y / 2) % 2 == 1 { for x in 0..<width { mixed[y * width + x] = random[y * width + x] } }
        for cy in 0..<ch where cy % 2 == 1 {
            for cx in 0..<cw {
                for plane in [luma, luma + quarter] { mixed[plane + cy * cw + cx] = random[plane + cy * cw + cx] }
            }
        }
        let format = FrameFormat(pixelFormat: .i420, width: width, height: height)
        for chain in ["sepia", "sepia:intensity=0.6", "color-matrix:rr=0.5:rg=0.5:rb=0:br=0.2:bb=0.9", "false-color:dark=navy:light=gold"] {
            let run = try transforms(chain, format: format)
            let kernel = try XCTUnwrap(FusedColorProcessor.chooseKernel(for: run, format: format) as? FixedPointRunKernel, chain)
            XCTAssertNotNil(kernel.affine, chain)
            for input in [inGamut, mixed] {
                try assertChain(chain, on: input, within1CodeOf: expected(input, run: run, vignette: nil))
            }
        }
        // A run with a further step has no affine path.
        let curved = try XCTUnwrap(FixedPointRunKernel(try transforms("sepia,gamma:power=1.2", format: format), coding: YUVCoding(format.color),
                                                       chromaInterleaved: false))
        XCTAssertNil(curved.affine)
    }

    /// The bytes past each row's end (a plane's padding, never initialised by VideoFX) do not change a single output
    /// sample: the same in-gamut frame with its padding filled with 0, 128 and 255 gives the same bytes, tolerance 0, for
    /// lone matrices (whose 16-block affine check once read the padding of a row's last blocks), a run with per-plane
    /// ends and a per-plane run, on I420 and NV12.
    func testPaddingNeverChangesTheOutput() throws {
        let input = inGamutI420(seed: 31)
        for chain in ["sepia", "false-color:dark=navy:light=gold", "sepia,hue:angle=20,color-controls:contrast=1.1", "hue:angle=30,invert"] {
            for pixelFormat in [PixelFormat.i420, .nv12] {
                let bytes = pixelFormat == .nv12 ? nv12(input) : input
                let outputs = try [UInt8(0), 128, 255].map { fill -> [UInt8] in
                    let frame = RawFrames.frame(bytes, format: pixelFormat, width: width, height: height, padding: fill)
                    return RawFrames.bytes(try TestSupport.apply(chain, to: frame, threads: 1))
                }
                XCTAssertEqual(outputs[0], outputs[1], "\(chain) on \(pixelFormat): padding 0 against 128")
                XCTAssertEqual(outputs[0], outputs[2], "\(chain) on \(pixelFormat): padding 0 against 255")
            }
        }
    }

    /// A frame of another size than the one the run (with its vignette) was configured for is refused with an error
    /// that names it, not read past the vignette's tables.
    func testFrameOfAnotherSizeIsRefused() throws {
        let processor = try FilterChain(parsing: "sepia,gamma:power=1.2,vignette").makeProcessor(threads: 1)
        _ = try processor.configure(for: FrameFormat(pixelFormat: .i420, width: 16, height: 8))
        let frame = RawFrames.frame(randomI420(seed: 3), format: .i420, width: width, height: height)
        XCTAssertThrowsError(try processor.process(frame) { _ in }) { error in
            XCTAssertTrue("\(error)".contains("\(width)x\(height)"), "\(error)")
        }
    }

    /// Consecutive matrices are multiplied into one only when the first keeps the unit cube inside itself.
    func testMatricesComposeOnlyWhenTheClampCannotAct() {
        // rgb/2 + 1/4: the cube goes to the middle half of itself.
        let half = ColorMatrix(rows: (SIMD3(0.5, 0, 0), SIMD3(0, 0.5, 0), SIMD3(0, 0, 0.5)), offset: SIMD3(repeating: 0.25))
        XCTAssertTrue(half.keepsUnitCube)
        XCTAssertFalse(ColorMatrix(rows: (SIMD3(0.5, 0, 0), SIMD3(0, 0.5, 0), SIMD3(0, 0, 0.5)), offset: SIMD3(repeating: 0.6)).keepsUnitCube)
        let sepia = ColorMatrix(rows: (SIMD3(0.393, 0.769, 0.189), SIMD3(0.349, 0.686, 0.168), SIMD3(0.272, 0.534, 0.131)))
        XCTAssertFalse(sepia.keepsUnitCube)   // white → (1.35, 1.20, 0.94)
        let point = SIMD3<Float>(0.2, 0.7, 0.4)
        let product = sepia.after(half).apply(point), separate = sepia.apply(half.apply(point))
        XCTAssertEqual(Double((product - separate).max()), 0, accuracy: 1e-6)
        XCTAssertEqual(Double((product - separate).min()), 0, accuracy: 1e-6)
    }

    /// A run of per-plane filters (`hue`, `color-controls`, `invert`) in one pass: luma is `clamp(a·Y + b)` after each
    /// filter and chroma `clamp(P·(Cb − 128, Cr − 128) + c)`, each filter's formula applied here one after the other in
    /// doubles (hue: chroma turned by the angle; color-controls in R'G'B' units: luma `(Y' + brightness − ½)·contrast + ½`,
    /// chroma × saturation × contrast; invert: `Y → 251 − Y`, `C → 256 − C`). Within 1 code (one rounding at the end).
    func testPlanarRunMatchesThePerPlaneFormulas() throws {
        let input = randomI420(seed: 5)
        let (cw, ch) = chromaSize
        let (luma, quarter) = (width * height, cw * ch)
        let (brightness, contrast, saturation) = (0.05, 1.2, 1.3)
        let chain = "hue:angle=30,color-controls:brightness=\(brightness):contrast=\(contrast):saturation=\(saturation),invert"
        let format = FrameFormat(pixelFormat: .i420, width: width, height: height)
        let matrices = try transforms(chain, format: format).map { transform -> ColorMatrix in
            guard case .affine(let matrix) = transform.kind else { throw XCTSkip("not a matrix") }
            return matrix
        }
        XCTAssertNotNil(PlanarYUVKernel(matrices: matrices, coding: YUVCoding(format.color), chromaInterleaved: false))
        XCTAssertTrue(FusedColorProcessor.chooseKernel(for: try transforms(chain, format: format), format: format) is PlanarYUVKernel)
        func clip(_ value: Double) -> Double { min(max(value, 0), 255) }
        let hue = PerPlane.hue(degrees: 30), controls = PerPlane.colorControls(brightness: brightness, contrast: contrast, saturation: saturation)
        var want = [Double](repeating: 0, count: input.count)
        for i in 0..<luma {
            want[i] = clip(251 - controls.luma(Double(input[i])))
        }
        for i in 0..<quarter {
            let turned = hue.chroma(Double(input[luma + i]), Double(input[luma + quarter + i]))
            let (cb, cr) = controls.chroma(turned.0, turned.1)
            (want[luma + i], want[luma + quarter + i]) = (clip(256 - cb), clip(256 - cr))
        }
        for (pixelFormat, bytes) in [(PixelFormat.i420, input), (.nv12, nv12(input))] {
            let frame = RawFrames.frame(bytes, format: pixelFormat, width: width, height: height)
            var output = RawFrames.bytes(try TestSupport.apply(chain, to: frame))
            if pixelFormat == .nv12 { output = i420(fromNV12: output) }
            let worst = zip(output, want).map { abs(Double($0) - $1.rounded()) }.max() ?? 0
            XCTAssertLessThanOrEqual(worst, 1, "\(pixelFormat)")
        }
    }

    /// A per-plane filter's formulas in doubles on codes (BT.601 limited range), each output clamped to 0…255: luma
    /// alone, and the block's chroma pair.
    struct PerPlane {
        var luma: (Double) -> Double = { $0 }
        var chroma: (Double, Double) -> (Double, Double) = { ($0, $1) }

        static func clip(_ value: Double) -> Double { min(max(value, 0), 255) }
        /// `hue`: chroma turned by the angle about 128; luma kept.
        static func hue(degrees: Double) -> PerPlane {
            let angle = degrees * Double.pi / 180
            return PerPlane(chroma: { cb, cr in
                (clip(128 + cos(angle) * (cb - 128) - sin(angle) * (cr - 128)), clip(128 + sin(angle) * (cb - 128) + cos(angle) * (cr - 128)))
            })
        }
        /// `color-controls` in R'G'B' units: luma `(Y' + brightness − ½)·contrast + ½`, chroma × saturation × contrast.
        static func colorControls(brightness: Double = 0, contrast: Double = 1, saturation: Double = 1) -> PerPlane {
            PerPlane(luma: { clip(16 + 219 * ((($0 - 16) / 219 + brightness - 0.5) * contrast + 0.5)) },
                     chroma: { (clip(128 + ($0 - 128) * saturation * contrast), clip(128 + ($1 - 128) * saturation * contrast)) })
        }
    }

    /// Per-plane `filters` applied one after the other to the codes of an I420 frame of this size, in doubles; each
    /// result rounded to a code (as a stored frame is) when `rounding`.
    func applied(_ filters: [PerPlane], to codes: [Double], rounding: Bool) -> [Double] {
        let (cw, ch) = chromaSize
        let (luma, quarter) = (width * height, cw * ch)
        var out = codes
        for filter in filters {
            for i in 0..<luma { out[i] = filter.luma(out[i]) }
            for i in 0..<quarter { (out[luma + i], out[luma + quarter + i]) = filter.chroma(out[luma + i], out[luma + quarter + i]) }
            if rounding { out = out.map { $0.rounded() } }
        }
        return out
    }

    /// A run's per-plane filters at its start and end (`FusedColorProcessor.planarEnds`) are applied plane by plane, as
    /// those filters alone are, and the rest of the run in R'G'B': the fused run (as passes over bands, and inside the
    /// fixed-point kernel's loop as with a vignette) is byte for byte its three parts applied one after the other (head,
    /// core, tail: the same fixed-point steps), on I420 and NV12, one and two threads, on random frames and (as bands) on
    /// frames where a lone matrix's affine path runs; and
    /// within 2 codes of the definition in doubles (the ends' formulas, each result rounded to a code as a stored frame
    /// is, the core's definition): a head sample the fixed point rounds the other way (it is within 0.025 code of the
    /// exact value) moves the core's input by a code, up to 1.4 codes at its output. At least 99 % within 1 code.
    /// A run with a tail only whose clamps are the final one (`sepia,hue,color-controls`, `gamma,hue`) runs in the loop
    /// with the tail composed into the conversion back to codes and into a lone matrix's affine path (one rounding
    /// instead of one per filter): not byte for byte the parts, but within the same 2 codes.
    func testPlanarEndsOfARunAreAppliedPerPlane() throws {
        let format = FrameFormat(pixelFormat: .i420, width: width, height: height)
        let cases: [(head: String?, core: String, tail: String?, perPlaneHead: [PerPlane], perPlaneTail: [PerPlane], fixed: Bool,
                     composed: Bool)] = [
            (nil, "sepia", "hue:angle=20,color-controls:contrast=1.1", [], [.hue(degrees: 20), .colorControls(contrast: 1.1)], true, true),
            // A curve core (no affine path): the tail composed into the per-channel conversion alone.
            (nil, "gamma:power=1.3", "hue:angle=30,color-controls:contrast=1.2", [], [.hue(degrees: 30), .colorControls(contrast: 1.2)], true, true),
            ("color-controls:contrast=1.3:saturation=1.2", "sepia", "hue:angle=30",
             [.colorControls(contrast: 1.3, saturation: 1.2)], [.hue(degrees: 30)], true, false),
            ("hue:angle=25", "gamma:power=1.3", "color-controls:contrast=1.2", [.hue(degrees: 25)], [.colorControls(contrast: 1.2)], true, false),
            // A steep gamma is no fixed-point core: the ends run as passes around the Float kernel.
            ("hue:angle=40", "gamma:power=0.5", nil, [.hue(degrees: 40)], [], false, false),
            // Two chroma steps that cannot fold (a turn after a saturation that clips): no composed tail, bands.
            (nil, "sepia", "color-controls:saturation=2.5,hue:angle=40", [], [.colorControls(saturation: 2.5), .hue(degrees: 40)], true, false),
        ]
        func perPlane(_ codes: [UInt8], _ filters: [PerPlane]) -> [UInt8] {
            applied(filters, to: codes.map(Double.init), rounding: true).map { UInt8($0) }
        }
        // Random frames, and frames where a lone matrix core takes its affine path. The loop with ends never takes that
        // path (it runs only with a vignette, which the affine path does not take either), so it is compared on the
        // random frames, where no block would.
        let inputs = [(randomI420(seed: 23), true), (inGamutI420(seed: 29), false)]
        for ((head, core, tail, perPlaneHead, perPlaneTail, fixed, composed), (input, checksLoop)) in cases.flatMap({ c in inputs.map { (c, $0) } }) {
            let chain = [head, core, tail].compactMap { $0 }.joined(separator: ",")
            let run = try transforms(chain, format: format)
            // The ends run as passes over bands around the core's kernel, or in the loop with the tail composed into the
            // affine path; with a vignette to fuse, inside the fixed-point kernel's loop (checked here without the
            // vignette, on the kernel itself).
            let chosen = FusedColorProcessor.chooseKernel(for: run, format: format)
            if composed {
                let kernel = try XCTUnwrap(chosen as? FixedPointRunKernel, chain)
                XCTAssertTrue(kernel.composesTail, chain)
                XCTAssertEqual(kernel.affine != nil, core == "sepia", chain)
            } else {
                XCTAssertEqual(try XCTUnwrap(chosen as? PlanarEndsKernel, chain).core is FixedPointRunKernel, fixed, chain)
            }
            let looped = FusedColorProcessor.chooseKernel(for: run, format: format, fusingVignette: true)
            XCTAssertTrue(fixed ? looped is FixedPointRunKernel : looped is PlanarEndsKernel, chain)
            // The definition: head per plane, rounded; the core's definition, rounded; the tail per plane.
            let headed = perPlane(input, perPlaneHead)
            let cored = expected(headed, run: try transforms(core, format: format), vignette: nil).map { UInt8($0.rounded().clamped(0, 255)) }
            let want = perPlane(cored, perPlaneTail)
            for (pixelFormat, bytes) in [(PixelFormat.i420, input), (.nv12, nv12(input))] {
                let frame = RawFrames.frame(bytes, format: pixelFormat, width: width, height: height)
                var stepwise = frame
                for part in [head, core, tail].compactMap({ $0 }) { stepwise = try TestSupport.apply(part, to: stepwise) }
                var outputs: [(String, VideoFrame)] = []
                if checksLoop {
                    var inLoop = frame
                    let kernel = FusedColorProcessor.chooseKernel(for: run, format: FrameFormat(pixelFormat: pixelFormat, width: width, height: height),
                                                                  fusingVignette: true)
                    inLoop.withMutablePlanes { kernel.apply(to: $0, width: width, height: height, slices: SliceRunner(threads: 2)) }
                    outputs.append(("the loop's ends", inLoop))
                }
                for threads in [1, 2] { outputs.append(("the chosen kernel, \(threads) thread(s)", try TestSupport.apply(chain, to: frame, threads: threads))) }
                // A composed tail (in the chosen kernel, and in the loop's kernel run without its vignette) rounds once.
                for (name, output) in outputs where !composed {
                    XCTAssertEqual(RawFrames.bytes(output), RawFrames.bytes(stepwise), "\(chain) on \(pixelFormat), \(name)")
                }
                for (name, output) in outputs {
                    var bytes = RawFrames.bytes(output)
                    if pixelFormat == .nv12 { bytes = i420(fromNV12: bytes) }
                    let differences = zip(bytes, want).map { abs(Int($0) - Int($1)) }
                    XCTAssertLessThanOrEqual(differences.max() ?? 0, 2, "\(chain) on \(pixelFormat), \(name)")
                    XCTAssertGreaterThanOrEqual(Double(differences.filter { $0 <= 1 }.count) / Double(differences.count), 0.99, chain)
                }
            }
        }
    }

    /// A tail composed into the conversion back to codes (`FixedPointRunKernel.composesTail`) rounds once, so the run is
    /// within 1 code of the exact composition: the core's definition in doubles, then the tail's formulas on those
    /// unrounded codes (each clamped to 0…255). Tails whose gains need Q7, Q6 and Q5 conversions (contrast 1.1, 1.4, and
    /// 2.5 with saturation 1.5: luma gains up to 2.5, chroma up to 3.75) after `sepia` and after a curve, on random
    /// frames (the core's clamps act: the per-channel path) and in-gamut frames (a lone matrix's affine path, where its
    /// maps fit), I420 and NV12, one and two threads.
    func testComposedTailMatchesTheExactComposition() throws {
        let format = FrameFormat(pixelFormat: .i420, width: width, height: height)
        let cases: [(core: String, tail: String, filters: [PerPlane])] = [
            ("sepia", "hue:angle=20,color-controls:contrast=1.1", [.hue(degrees: 20), .colorControls(contrast: 1.1)]),
            ("sepia", "color-controls:contrast=1.4", [.colorControls(contrast: 1.4)]),
            ("sepia", "color-controls:contrast=2.5:saturation=1.5", [.colorControls(contrast: 2.5, saturation: 1.5)]),
            ("gamma:power=1.3", "hue:angle=-35,color-controls:saturation=1.2", [.hue(degrees: -35), .colorControls(saturation: 1.2)]),
        ]
        for (core, tail, filters) in cases {
            let chain = core + "," + tail
            let chosen = FusedColorProcessor.chooseKernel(for: try transforms(chain, format: format), format: format)
            XCTAssertTrue(try XCTUnwrap(chosen as? FixedPointRunKernel, chain).composesTail, chain)
            for input in [randomI420(seed: 51), inGamutI420(seed: 53)] {
                let want = applied(filters, to: expected(input, run: try transforms(core, format: format), vignette: nil), rounding: false)
                try assertChain(chain, on: input, within1CodeOf: want)
            }
        }
    }

    /// Maps of the form `±x + k` (`invert`, twice) are exact in the fixed point (gain ±2¹⁴, offsets whole codes in
    /// Q6): exactly the formula (`invert`: `Y → 251 − Y`, `C → 256 − C`, clipped to 0…255; two inverts give the input
    /// back but for the clips), tolerance 0, on I420 and NV12.
    func testWholeCodeMapsAreExact() throws {
        let input = randomI420(seed: 9)
        let (cw, ch) = chromaSize
        let (luma, quarter) = (width * height, cw * ch)
        let format = FrameFormat(pixelFormat: .i420, width: width, height: height)
        func clip(_ value: Int) -> Int { min(max(value, 0), 255) }
        func matrices(_ chain: String) throws -> [ColorMatrix] {
            try transforms(chain, format: format).map { transform -> ColorMatrix in
                guard case .affine(let matrix) = transform.kind else { throw XCTSkip("not a matrix") }
                return matrix
            }
        }
        let coding = YUVCoding(format.color)
        let cases: [(String, (Int) -> Int, (Int) -> Int)] = [
            ("invert", { clip(251 - $0) }, { clip(256 - $0) }),
            ("invert,invert", { clip(251 - clip(251 - $0)) }, { clip(256 - clip(256 - $0)) }),
        ]
        for (chain, lumaMap, chromaMap) in cases {
            XCTAssertNotNil(PlanarYUVKernel(matrices: try matrices(chain), coding: coding, chromaInterleaved: false), chain)
            let want = input.enumerated().map { UInt8($0.offset < luma ? lumaMap(Int($0.element)) : chromaMap(Int($0.element))) }
            for (pixelFormat, bytes) in [(PixelFormat.i420, input), (.nv12, nv12(input))] {
                let frame = RawFrames.frame(bytes, format: pixelFormat, width: width, height: height)
                var output = RawFrames.bytes(try TestSupport.apply(chain, to: frame))
                if pixelFormat == .nv12 { output = i420(fromNV12: output) }
                XCTAssertEqual(output.count, luma + 2 * quarter)
                XCTAssertEqual(output, want, "\(chain), \(pixelFormat)")
            }
        }
    }

    /// `ByteTable` (byte shuffles with AVX2, byte permutes with AVX-512 VBMI, on x86-64 release builds) is exactly the
    /// table: every byte value through a random table, in a row whose length is no multiple of 32 or 64 (the bytes past
    /// it, the row padding, may change; those before it must be the table's). The same for two tables alternating
    /// (NV12's chroma), even offsets through one and odd ones through the other. Every path this CPU can run.
    func testByteTableIsTheTable() {
        var generator = SystemRandomNumberGenerator.Seeded(state: 0x7ab1e)
        let (map, oddMap) = ((0..<256).map { _ in generator.byte() }, (0..<256).map { _ in generator.byte() })
        let count = 1000
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: 1024)
        defer { row.deallocate() }
        let input = (0..<count).map { UInt8(truncatingIfNeeded: $0 < 512 ? $0 / 2 : Int(generator.byte())) }
        for wide in FilterKernels.usesAVX512 ? [false, true] : [false] {
            row.initialize(from: input, count: count)
            ByteTable(map).apply(to: row, count: count, wide: wide)
            XCTAssertEqual(Array(UnsafeBufferPointer(start: row, count: count)), input.map { map[Int($0)] }, "wide: \(wide)")
            row.initialize(from: input, count: count)
            ByteTable.apply(even: ByteTable(map), odd: ByteTable(oddMap), to: row, count: count, wide: wide)
            XCTAssertEqual(Array(UnsafeBufferPointer(start: row, count: count)),
                           input.indices.map { ($0 % 2 == 0 ? map : oddMap)[Int(input[$0])] }, "wide: \(wide)")
        }
    }

    /// `LumaMapKernel` with AVX-512 VBMI (`LumaMapRows512`: 32 blocks at a time, tables split into bytes) gives the
    /// scalar loop's bytes, tolerance 0: a colourful map of luma (Cb and Cr tables over their whole range), random frames
    /// with their padding at 255, I420 and NV12, odd sizes (one-column and one-row blocks), rows ending inside a chunk.
    func testLumaMapRowsGiveTheScalarBytes() throws {
        try XCTSkipUnless(FilterKernels.usesAVX512, "this CPU runs the scalar loop only")
        let map = { (y: Float) in SIMD3<Float>(y, (1 - y) * (1 - y), 0.5 + 0.5 * sin(12 * y)) }
        var generator = SystemRandomNumberGenerator.Seeded(state: 0x1a3a9)
        for (width, height) in [(1920, 6), (742, 20), (83, 41), (182, 98)] {
            let quarter = ((width + 1) / 2) * ((height + 1) / 2)
            let input = (0..<(width * height + 2 * quarter)).map { _ in generator.byte() }
            for format in [PixelFormat.i420, .nv12] {
                var outputs: [[UInt8]] = []
                for wide in [false, true] {
                    let kernel = LumaMapKernel(coding: YUVCoding(.bt709), chromaInterleaved: format == .nv12, wide: wide, map: map)
                    var frame = RawFrames.frame(input, format: format, width: width, height: height, padding: 255)
                    frame.withMutablePlanes { kernel.apply(to: $0, width: width, height: height, slices: SliceRunner(threads: 2)) }
                    outputs.append(RawFrames.bytes(frame))
                }
                XCTAssertEqual(outputs[0], outputs[1], "\(format), \(width)×\(height)")
            }
        }
    }

    /// The 16-bit lane operations of the fixed-point kernels against their definitions, on values that reach the
    /// ends of their ranges: `vpmulhrsw` is (a·b + 2¹⁴) >> 15, `vpaddsw` saturates, the shifts are arithmetic, the clamp
    /// and the narrowing to bytes saturate, the pair swap swaps neighbours, bytes split from and join into pairs, the
    /// average rounds up on unsigned lanes; Floats in and out truncate toward zero and saturate. Exact.
    func testFixedPointLaneOperations() {
        var generator = SystemRandomNumberGenerator.Seeded(state: 0x1a7e5)
        func randomLanes() -> [Int16] { (0..<16).map { _ in Int16(bitPattern: UInt16(generator.byte()) << 8 | UInt16(generator.byte())) } }
        func vector(_ values: [Int16]) -> Lanes16.Vector { Lanes16.vector(SIMD16<Int16>(values)) }
        func lanes(_ v: Lanes16.Vector) -> [Int16] { let s = Lanes16.lanes(v); return (0..<16).map { s[$0] } }
        for _ in 0..<50 {
            let (a, b) = (randomLanes(), randomLanes().map { $0 == .min ? 0 : $0 })
            XCTAssertEqual(lanes(Lanes16.multiplyHighRounded(vector(a), vector(b))),
                           zip(a, b).map { Int16(truncatingIfNeeded: (Int32($0) * Int32($1) + 0x4000) >> 15) })
            XCTAssertEqual(lanes(Lanes16.addSaturating(vector(a), vector(b))), zip(a, b).map { Int16(clamping: Int32($0) + Int32($1)) })
            XCTAssertEqual(lanes(Lanes16.shiftRight(vector(a), 5)), a.map { $0 >> 5 })
            XCTAssertEqual(lanes(Lanes16.shiftLeft(vector(a), 3)), a.map { $0 &<< 3 })
            XCTAssertEqual(lanes(Lanes16.clamp(vector(a), Lanes16.splat(-300), Lanes16.splat(900))), a.map { min(max($0, -300), 900) })
            XCTAssertEqual(lanes(Lanes16.swapPairs(vector(a))), (0..<16).map { a[$0 ^ 1] })
            XCTAssertEqual(lanes(Lanes16.alternating(7, -9)), (0..<16).map { $0 % 2 == 0 ? 7 : -9 })
            let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 32)
            defer { bytes.deallocate() }
            Lanes16.narrow32(vector(a), vector(b), to: bytes)
            XCTAssertEqual(Array(UnsafeBufferPointer(start: bytes, count: 32)), (a + b).map { UInt8(clamping: $0) })
            let widened = Lanes16.widen32(bytes)
            XCTAssertEqual(lanes(widened.0) + lanes(widened.1), (a + b).map { Int16(UInt8(clamping: $0)) })
            // Raw pairs: lane i is byte 2i (low) and 2i + 1 (high); split, joined, narrowed, averaged as unsigned.
            let pairs = Lanes16.load(bytes)
            let low = (0..<16).map { Int16(bytes[2 * $0]) }, high = (0..<16).map { Int16(bytes[2 * $0 + 1]) }
            XCTAssertEqual(lanes(Lanes16.lowBytes(pairs)), low)
            XCTAssertEqual(lanes(Lanes16.highBytes(pairs)), high)
            XCTAssertEqual(lanes(Lanes16.joinBytes(vector(low), vector(high))), lanes(pairs))
            Lanes16.store(Lanes16.joinBytes(vector(high), vector(low)), to: bytes)
            XCTAssertEqual(Array(UnsafeBufferPointer(start: bytes, count: 32)), (0..<32).map { UInt8(($0 % 2 == 0 ? high : low)[$0 / 2]) })
            XCTAssertEqual(lanes(Lanes16.widen16(bytes)), (0..<16).map { Int16(bytes[$0]) })
            Lanes16.narrow16(vector(a), to: bytes)
            XCTAssertEqual(Array(UnsafeBufferPointer(start: bytes, count: 16)), a.map { UInt8(clamping: $0) })
            XCTAssertEqual(lanes(Lanes16.average(vector(a), vector(b))),
                           zip(a, b).map { Int16(truncatingIfNeeded: (Int32(UInt16(bitPattern: $0)) + Int32(UInt16(bitPattern: $1)) + 1) >> 1) })
            // The sigma filter's operations: magnitude (wrapping at −32768), comparison masks, masked clear, Floats.
            XCTAssertEqual(lanes(Lanes16.absolute(vector(a))), a.map { $0 == .min ? .min : abs($0) })
            XCTAssertEqual(lanes(Lanes16.greaterThan(vector(a), vector(b))), zip(a, b).map { $0 > $1 ? -1 : 0 })
            XCTAssertEqual(lanes(Lanes16.andNot(vector(a), vector(b))), zip(a, b).map { ~$0 & $1 })
            let (low8, high8) = Lanes16.floats(vector(a))
            XCTAssertEqual((0..<8).map { low8[$0] } + (0..<8).map { high8[$0] }, a.map(Float.init))
            let scaled = (low8 * 1.37, high8 * -0.61)
            let expected = (0..<16).map { Int16(clamping: Int32((($0 < 8 ? scaled.0[$0] : scaled.1[$0 - 8])).rounded(.towardZero))) }
            XCTAssertEqual(lanes(Lanes16.truncating(scaled.0, scaled.1)), expected)
        }
    }

    /// The operations disc-blur and noise-reduction added to `Lanes16`, lane by lane against their definitions (exact):
    /// running sums along every 1st/2nd/4th/8th lane and the last lanes repeated (`Scan`), the wrapping add, the
    /// unsigned widening to 32 bits and back, and the byte operations of the sigma filter's closeness test; and the
    /// saturating join of two lanes' codes into bytes that the affine colour path stores with.
    func testScanWideningAndByteLaneOperations() {
        var generator = SystemRandomNumberGenerator.Seeded(state: 0x5ca9)
        func randomLanes() -> [Int16] { (0..<16).map { _ in Int16(bitPattern: UInt16(generator.byte()) << 8 | UInt16(generator.byte())) } }
        func vector(_ values: [Int16]) -> Lanes16.Vector { Lanes16.vector(SIMD16<Int16>(values)) }
        func lanes(_ v: Lanes16.Vector) -> [Int16] { let s = Lanes16.lanes(v); return (0..<16).map { s[$0] } }
        func bytes(_ v: Lanes16.Vector) -> [UInt8] { lanes(v).flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] } }
        for _ in 0..<50 {
            let (a, b) = (randomLanes(), randomLanes())
            for step in [1, 2, 4, 8] {
                let scan = Lanes16.Scan(stride: step)
                XCTAssertEqual(lanes(scan.prefix(vector(a))), (0..<16).map { i in
                    stride(from: i, through: 0, by: -step).reduce(Int16(0)) { $0 &+ a[$1] }
                }, "stride \(step)")
                XCTAssertEqual(lanes(scan.last(vector(a))), (0..<16).map { a[16 - step + $0 % step] }, "stride \(step)")
            }
            XCTAssertEqual(lanes(Lanes16.add(vector(a), vector(b))), zip(a, b).map { $0 &+ $1 })
            // Widened halves: some split of the unsigned lanes, undone by truncatingHalves after lane-wise work.
            let (h0, h1) = Lanes16.widenedHalves(vector(a))
            XCTAssertEqual(((0..<8).map { h0[$0] } + (0..<8).map { h1[$0] }).sorted(), a.map { Int32(UInt16(bitPattern: $0)) }.sorted())
            let halved = Lanes16.truncatingHalves(SIMD8<Float>(h0) * 0.5 + 0.25, SIMD8<Float>(h1) * 0.5 + 0.25)
            XCTAssertEqual(lanes(halved), a.map { Int16(UInt16(bitPattern: $0) / 2) })
            let (x, y) = (bytes(vector(a)), bytes(vector(b)))
            XCTAssertEqual(bytes(Lanes16.subtractSaturatingBytes(vector(a), vector(b))), zip(x, y).map { $0 > $1 ? $0 - $1 : 0 })
            XCTAssertEqual(bytes(Lanes16.addSaturatingBytes(vector(a), vector(b))), zip(x, y).map { UInt8(min(Int($0) + Int($1), 255)) })
            XCTAssertEqual(bytes(Lanes16.subtractBytes(vector(a), vector(b))), zip(x, y).map { $0 &- $1 })
            XCTAssertEqual(bytes(Lanes16.maximumBytes(vector(a), vector(b))), zip(x, y).map { max($0, $1) })
            XCTAssertEqual(bytes(Lanes16.minimumBytes(vector(a), vector(b))), zip(x, y).map { min($0, $1) })
            // Lanes anywhere in 16 bits, and within −299…299 (about half inside 0…255): a's as the low bytes.
            for (low, high) in [(a, b), (a.map { $0 % 300 }, b.map { $0 % 300 })] {
                XCTAssertEqual(bytes(Lanes16.joinBytesSaturating(vector(low), vector(high))),
                               zip(low, high).flatMap { [UInt8(clamping: $0), UInt8(clamping: $1)] })
            }
            // Equal in about half the bytes: b's bytes where a's are below 128.
            let mixed = zip(x, y).map { $0 < 128 ? $1 : $0 }
            let mixedVector = vector((0..<16).map { Int16(bitPattern: UInt16(mixed[2 * $0]) | UInt16(mixed[2 * $0 + 1]) << 8) })
            XCTAssertEqual(bytes(Lanes16.equalBytes(vector(a), mixedVector)), zip(x, mixed).map { $0 == $1 ? 0xFF : 0 })
            XCTAssertEqual(bytes(Lanes16.splatBytes(0xA7)), Array(repeating: 0xA7, count: 32))
        }
    }
}

extension ColorRunKernelTests {
    /// Frames of another size than the suite's, for the helpers of `RandomYUVFrames`.
    struct FrameSize: RandomYUVFrames { let width: Int, height: Int }

    /// The AVX-512 loop (`FixedPointRun512`, 32 blocks per step, what runs where `FilterKernels.usesAVX512`) gives the
    /// bytes of the AVX2 loop it widens (`apply(…, wide: false)`, 16 blocks per step), tolerance 0: the same fixed-point
    /// arithmetic lane for lane, and the same choice of path per 16 blocks. Lone matrices and composed tails (Q7 and Q5
    /// conversions), I420 and NV12, widths 1920, 742 and 182 (rows that end inside a 32-block step, and inside a 16-block
    /// one) with odd heights but the first (a last single row), on the photo scaled, on random frames (every clamp
    /// acts: the per-channel path), and on in-gamut frames with random 16-block patches (steps whose halves take
    /// different paths); every plane's padding filled with random bytes; the AVX-512 loop on one and two threads.
    /// Skipped where the AVX-512 loop cannot run.
    func testWideLoopGivesTheBytesOfTheAVX2Loop() throws {
        try XCTSkipUnless(FilterKernels.usesAVX512, "FixedPointRun512 runs in x86-64 release builds on CPUs with AVX-512 BW and VBMI")
        try XCTSkipUnless(FileManager.default.fileExists(atPath: TestSupport.astronaut), "media/astronaut.png is missing")
        let chains = ["sepia", "sepia,hue:angle=20,color-controls:contrast=1.1", "false-color:dark=navy:light=gold",
                      "color-matrix:rr=0.5:rg=0.5:rb=0:br=0.2:bb=0.9", "sepia,color-controls:contrast=2.5:saturation=1.5"]
        for (width, height) in [(1920, 1080), (742, 417), (182, 101)] {
            let size = FrameSize(width: width, height: height)
            let (cw, ch) = size.chromaSize
            var generator = SystemRandomNumberGenerator.Seeded(state: UInt64(width))
            let photo = try TestSupport.raw(TestSupport.astronaut, pixelFormat: "yuv420p", filter: "scale=\(width):\(height)")
            // In gamut for these runs (luma 60…123, chroma 120…135), each 16 blocks (32 × 2 pixels) random instead with
            // probability 1/4.
            var patched = (0..<(width * height)).map { _ in 60 + generator.byte() % 64 } + (0..<(2 * cw * ch)).map { _ in 120 + generator.byte() % 16 }
            for cy in 0..<ch {
                for group in stride(from: 0, to: cw, by: 16) where generator.byte() < 64 {
                    for cx in group..<min(group + 16, cw) {
                        for y in (2 * cy)..<min(2 * cy + 2, height) {
                            for x in (2 * cx)..<min(2 * cx + 2, width) { patched[y * width + x] = generator.byte() }
                        }
                        patched[width * height + cy * cw + cx] = generator.byte()
                        patched[width * height + cw * ch + cy * cw + cx] = generator.byte()
                    }
                }
            }
            let inputs = [("photo", photo), ("random", size.randomI420(seed: UInt64(height))), ("patched", patched)]
            for (name, input) in inputs {
                for pixelFormat in [PixelFormat.i420, .nv12] {
                    let bytes = pixelFormat == .nv12 ? size.nv12(input) : input
                    let paddingSeed = UInt64(generator.byte())
                    /// The frame with its padding filled from `paddingSeed`, the same bytes at each call.
                    func frame() -> VideoFrame {
                        var frame = RawFrames.frame(bytes, format: pixelFormat, width: width, height: height)
                        var padding = SystemRandomNumberGenerator.Seeded(state: paddingSeed)
                        frame.withMutablePlanes { planes in
                            for plane in planes {
                                let used = plane.width * plane.bytesPerPixel
                                for y in 0..<plane.height {
                                    for x in used..<plane.bytesPerRow { plane.row(y)[x] = padding.byte() }
                                }
                            }
                        }
                        return frame
                    }
                    let format = FrameFormat(of: frame())
                    for chain in chains {
                        let run = try size.transforms(chain, format: format)
                        let kernel = try XCTUnwrap(FusedColorProcessor.chooseKernel(for: run, format: format) as? FixedPointRunKernel, chain)
                        XCTAssertTrue(kernel.runsWide, chain)
                        let outputs = [(false, 1), (true, 1), (true, 2)].map { wide, threads -> [UInt8] in
                            var output = frame()
                            output.withMutablePlanes {
                                kernel.apply(to: $0, width: width, height: height, slices: SliceRunner(threads: threads), wide: wide)
                            }
                            return RawFrames.bytes(output)
                        }
                        for (index, threads) in [(1, 1), (2, 2)] {
                            let differing = zip(outputs[0], outputs[index]).filter { $0 != $1 }.count
                            XCTAssertEqual(differing, 0, "\(chain) on \(name) \(width)×\(height) \(pixelFormat), \(threads) thread(s)")
                        }
                    }
                }
            }
        }
    }
}
