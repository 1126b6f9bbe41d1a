import VFXCore
import VFXPipeline

/// A run of consecutive point-wise color transforms compiled into one pass over the frame's own planes.
///
/// The kernel is chosen once, in `configure`:
/// - gray frames: one 256-entry table on the single plane, or, when the run makes colour out of gray (`thermal`,
///   `sepia`, `color-monochrome`), three tables writing an RGBA frame (the stage's output format is then RGBA);
/// - YUV frames whose run only bends luma and/or removes chroma: a 256-entry luma table (skipped when luma is
///   unchanged) and/or a chroma fill: `mono` touches only the chroma planes;
/// - YUV frames whose run starts with a colour made from luma alone (`thermal`, `x-ray`, `color-map`): `LumaMapKernel`,
///   the whole run tabulated per luma code;
/// - YUV frames whose run is made of affine transforms that each keep luma and chroma apart (`invert`, `hue`,
///   `color-controls`…): `PlanarYUVKernel`, each plane on its own as FFmpeg does, one pass per plane for the run;
/// - other YUV runs of up to three matrices, smooth curves and the step functions the lanes evaluate as defined
///   (`sepia`, `color-matrix`, `gamma`, `tone-curve`, `sepia,hue,gamma`, `posterize`, `solarize`, `maximum-component`,
///   `minimum-component`…) whose coefficients fit 16 bits: `FixedPointRunKernel`, per pixel in 16-bit fixed point, 16
///   lanes at a time, and a vignette that follows the run applied in the same loop;
/// - YUV frames with another lone affine transform: `AffineYUVKernel`, per pixel in SIMD floats;
/// - other YUV runs of matrices and smooth curves (a curve too steep for 8 cubic pieces, luma curves, more steps):
///   `ColorRunYUVKernel`, the run evaluated per pixel in SIMD floats, curves through 4096-entry tables, and a vignette
///   that follows the run applied in the same loop;
/// - YUV runs that start or end with such per-plane transforms around others (`sepia,hue,color-controls`): the ends
///   plane by plane, as those filters alone are (`planarEnds`), as passes over bands around the core's kernel
///   (`PlanarEndsKernel`), or inside `FixedPointRunKernel`'s loop when a vignette follows, so that it fuses too;
/// - YUV runs with another general function of R'G'B' (`vibrance`) or a curve that jumps in a run too long for the fixed
///   point: `YUVTableKernel`, a 3D table in Y'CbCr;
/// - RGB frames whose run works on each channel alone: `RGBChannelKernel`, three exact 256-entry tables;
/// - RGB frames whose run only bends luma and/or removes chroma: `RGBLumaKernel`, a table on quarter-code luma;
/// - other RGB runs: `RGBTableKernel`, a 3D table in R'G'B' with tetrahedral interpolation.
///
/// Frames are written in place when their buffer is not shared, else copied once into a pool buffer.
///
/// ```swift
/// let fused = FusedColorProcessor([sepiaTransform, tintTransform], slices: SliceRunner(threads: 1))
/// let format = try fused.configure(for: FrameFormat(pixelFormat: .i420, width: 1280, height: 720))
/// ```
final class FusedColorProcessor: VideoProcessor {
    let run: [ColorTransform]
    let slices: SliceRunner
    private var kernel: (any ColorKernel)?
    private var pool: BufferPool?
    /// For gray input whose run makes colour: R, G, B of each gray code, and the output's colour description.
    private var grayToColor: (table: [SIMD3<UInt8>], color: ColorDescription)?

    /// A vignette applied in the same pass (see `FilterChainProcessor.compile`): by the kernel itself as it converts
    /// back to Y'CbCr (`FixedPointRunKernel`, `ColorRunYUVKernel`), else band by band right after the kernel.
    let vignette: VignetteProcessor?
    private var vignetteInKernel = false
    /// The format `configure` chose the kernel for.
    private var configured: FrameFormat?

    init(_ run: [ColorTransform], slices: SliceRunner, vignette: VignetteProcessor? = nil) {
        self.run = run
        self.slices = slices
        self.vignette = vignette
    }

    /// Frame rows per band when a vignette rides along: small enough that a band's planes stay in cache between
    /// the colour kernel and the vignette (1080p: 16 rows ≈ 46 KB of I420), even so that bands split 4:2:0 chroma rows.
    static let bandRows = 16

    /// The whole run on one R'G'B' value, clamped to 0…1 after each transform (as separate filters would on R'G'B'
    /// frames; on Y'CbCr frames a run's per-plane ends are clamped per plane instead, see `planarEnds`).
    static func evaluate(_ run: [ColorTransform], _ rgb: SIMD3<Float>) -> SIMD3<Float> {
        var value = rgb.clampedToUnit
        for transform in run { value = transform.apply(value).clampedToUnit }
        return value
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        grayToColor = nil
        if input.pixelFormat == .gray8, let table = FusedColorProcessor.colorTable(for: run) {
            let output = input.colorCapable
            grayToColor = (table, output.color)
            kernel = nil
            pool = BufferPool(format: .rgba, width: input.width, height: input.height, capacity: 2)
            return output
        }
        configured = input
        if let vignette { _ = try vignette.configure(for: input) }
        kernel = FusedColorProcessor.chooseKernel(for: run, format: input, fusingVignette: vignette?.isActive ?? false)
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 2)
        vignetteInKernel = false
        if let vignette {
            if let fusing = kernel as? VignetteFusing {
                vignetteInKernel = fusing.fuse(vignette, width: input.width, height: input.height)
            }
        }
        return input
    }

    /// The run's R'G'B' output for each gray code as bytes, when some gray comes out coloured (a channel differs
    /// from another by at least half a code); nil when gray stays gray.
    static func colorTable(for run: [ColorTransform]) -> [SIMD3<UInt8>]? {
        let values = (0..<256).map { evaluate(run, SIMD3(repeating: Float($0) / 255)) * 255 }
        guard values.contains(where: { $0.max() - $0.min() >= 0.5 }) else { return nil }
        return values.map { value in
            SIMD3(UInt8(value.x.rounded().clamped(0, 255)), UInt8(value.y.rounded().clamped(0, 255)),
                  UInt8(value.z.rounded().clamped(0, 255)))
        }
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        if let (table, color) = grayToColor {
            guard frame.format == .gray8, let pool, pool.width == frame.width, pool.height == frame.height else {
                throw FilterError.unsupportedFormat(filter: "color", format: "\(frame.format) \(frame.width)x\(frame.height) (configured for gray8)")
            }
            let source = frame
            let output = VideoFrame(buffer: pool.makeBuffer(), timestamp: source.timestamp, duration: source.duration,
                                    rotation: source.rotation, color: color)
            let (gray, rgba) = (source.plane(0), output.plane(0))
            let width = source.width
            table.withUnsafeBufferPointer { table in
                self.slices.run(rows: gray.height) { rows in
                    for y in rows {
                        let input = gray.row(y), target = rgba.row(y)
                        for x in 0..<width {
                            let value = table[Int(input[x])]
                            target[4 * x] = value.x
                            target[4 * x + 1] = value.y
                            target[4 * x + 2] = value.z
                            target[4 * x + 3] = 255
                        }
                    }
                }
            }
            return withExtendedLifetime(source) { output }
        }
        var frame = frame
        guard let kernel else { return frame }
        // The vignette's distance tables inside the kernel are sized for the configured frames.
        if vignetteInKernel { try FrameCheck.require(frame, matches: configured, filter: "vignette") }
        let (width, height, slices) = (frame.width, frame.height, self.slices)
        if let vignette, vignette.isActive, !vignetteInKernel {
            let isYUV = frame.format.isYUV
            frame.withMutablePlanes(pool: pool) { planes in
                let bands = (height + Self.bandRows - 1) / Self.bandRows
                slices.run(rows: bands) { range in
                    for band in range {
                        let rows = (band * Self.bandRows)..<min(height, (band + 1) * Self.bandRows)
                        let parts = Self.band(of: planes, rows: rows, subsampled: isYUV)
                        kernel.apply(to: parts, width: width, height: rows.count, slices: SliceRunner(threads: 1))
                        vignette.darken(planes, frameRows: rows)
                    }
                }
            }
            return frame
        }
        frame.withMutablePlanes(pool: pool) { planes in
            kernel.apply(to: planes, width: width, height: height, slices: slices)
        }
        return frame
    }

    func release() {
        kernel = nil
        pool = nil
        grayToColor = nil
        configured = nil
        vignetteInKernel = false
        vignette?.release()
    }

    /// Frame rows `rows` of `planes` as planes of their own; with `subsampled`, the planes after the first (4:2:0
    /// chroma) cover the chroma rows of those frame rows.
    static func band(of planes: [Plane], rows: Range<Int>, subsampled: Bool) -> [Plane] {
        planes.enumerated().map { index, plane in
            let planeRows = subsampled && index > 0 ? (rows.lowerBound / 2)..<((rows.upperBound + 1) / 2) : rows
            return Plane(baseAddress: plane.row(planeRows.lowerBound), bytesPerRow: plane.bytesPerRow, width: plane.width,
                         height: planeRows.count, bytesPerPixel: plane.bytesPerPixel)
        }
    }

    /// The kernel for `run` on `format` frames. `fusingVignette`: a vignette follows, and a kernel that can apply it in
    /// its own loop (`VignetteFusing`) is preferred.
    static func chooseKernel(for run: [ColorTransform], format: FrameFormat, fusingVignette: Bool = false) -> any ColorKernel {
        let coding = YUVCoding(format.color)
        let evaluate: @Sendable (SIMD3<Float>) -> SIMD3<Float> = { FusedColorProcessor.evaluate(run, $0) }
        switch format.pixelFormat {
        case .gray8:
            let weights = coding.weights
            let map = (0..<256).map { code in
                UInt8((weights.luma(evaluate(SIMD3(repeating: Float(code) / 255))) * 255).rounded().clamped(0, 255))
            }
            return LumaTableKernel(map: map, fillsChroma: false, chromaInterleaved: false)
        case .i420, .nv12:
            let interleaved = format.pixelFormat == .nv12
            if let (curve, removesChroma) = lumaOnly(run) {
                let map = curve.map { curve in
                    (0..<256).map { code -> UInt8 in
                        let luma = ((Float(code) - coding.lumaOffset) / coding.lumaScale).clamped(0, 1)
                        let out = curve(luma).clamped(0, 1) * coding.lumaScale + coding.lumaOffset
                        return UInt8(out.rounded().clamped(0, 255))
                    }
                }
                return LumaTableKernel(map: map, fillsChroma: removesChroma, chromaInterleaved: interleaved)
            }
            if case .fromLuma = run.first?.kind {
                return LumaMapKernel(coding: coding, chromaInterleaved: interleaved) { y in evaluate(SIMD3(repeating: y)) }
            }
            let matrices = run.compactMap { transform -> ColorMatrix? in
                if case .affine(let matrix) = transform.kind { return matrix }
                return nil
            }
            if matrices.count == run.count,
               let planar = PlanarYUVKernel(matrices: matrices, coding: coding, chromaInterleaved: interleaved) {
                return planar
            }
            if let ends = planarEnds(of: run, coding: coding) {
                // Ends inside FixedPointRunKernel's loop cost more than the same maps as passes over bands still in
                // cache (the loop outgrows the vector registers: 0.80 against 0.65 ms for sepia,hue,color-controls at
                // 1080p), but they let a following vignette fuse as well (1.7 against 3.8 ms with one). A tail that
                // composes into the kernel's conversion back to codes (`FixedPointRunKernel.composesTail`) is no end
                // in the loop at all: without a vignette the run then costs what its core costs.
                let separate = { (matrices: [ColorMatrix]) in
                    matrices.isEmpty ? nil : PlanarYUVKernel(matrices: matrices, coding: coding, chromaInterleaved: false)?.fixedPoint
                }
                if let fixed = FixedPointRunKernel(ends.core, coding: coding, chromaInterleaved: interleaved,
                                                   head: separate(ends.head), tail: separate(ends.tail)),
                   fusingVignette || fixed.composesTail {
                    return fixed
                }
                let inPlace = { (matrices: [ColorMatrix]) in
                    matrices.isEmpty ? nil : PlanarYUVKernel(matrices: matrices, coding: coding, chromaInterleaved: interleaved)
                }
                return PlanarEndsKernel(head: inPlace(ends.head), core: chooseKernel(for: ends.core, format: format),
                                        tail: inPlace(ends.tail))
            }
            if let fixed = FixedPointRunKernel(run, coding: coding, chromaInterleaved: interleaved) {
                return fixed
            }
            if run.count == 1, let matrix = matrices.first {
                return AffineYUVKernel(matrix: matrix, coding: coding, chromaInterleaved: interleaved)
            }
            if let direct = ColorRunYUVKernel(run, coding: coding, chromaInterleaved: interleaved) { return direct }
            return YUVTableKernel(coding: coding, chromaInterleaved: interleaved, evaluate: evaluate)
        case .rgba, .bgra:
            let redOffset = format.pixelFormat == .rgba ? 0 : 2
            if run.allSatisfy(\.isPerChannel) {
                let tables = (0..<256).map { code in evaluate(SIMD3(repeating: Float(code) / 255)) * 255 }
                return RGBChannelKernel(red: tables.map(\.x), green: tables.map(\.y), blue: tables.map(\.z), redOffset: redOffset)
            }
            if let (curve, removesChroma) = lumaOnly(run) {
                return RGBLumaKernel(weights: coding.weights, curve: curve, removesChroma: removesChroma, redOffset: redOffset)
            }
            let gridSize = run.compactMap(\.gridSize).max().map(RGBTableKernel.gridSize(for:)) ?? 33
            return RGBTableKernel(size: gridSize, redOffset: redOffset, evaluate: evaluate)
        }
    }

    /// A run's per-plane transforms at its start (`head`) and end (`tail`), and the rest (`core`): on I420/NV12 the ends
    /// are applied plane by plane as the filters alone apply them (`PlanarYUVKernel`: each plane clamped to 0…255 after
    /// each filter) and the core in R'G'B', so that a fused run gives what its filters give one after the other (up to
    /// the fixed point's rounding inside each end). Nil when there are no such ends, when nothing is left between them,
    /// or when an end's gains are out of the per-plane kernel's range (the whole run is then taken in R'G'B').
    ///
    /// `sepia,hue,color-controls` → head none, core `sepia`, tail `hue,color-controls`.
    static func planarEnds(of run: [ColorTransform], coding: YUVCoding)
        -> (head: [ColorMatrix], core: [ColorTransform], tail: [ColorMatrix])? {
        func planar(_ transform: ColorTransform) -> ColorMatrix? {
            guard case .affine(let matrix) = transform.kind,
                  PlanarYUVKernel(matrix: matrix, coding: coding, chromaInterleaved: false) != nil else { return nil }
            return matrix
        }
        let head = Array(run.prefix { planar($0) != nil }.compactMap(planar))
        let rest = run.dropFirst(head.count)
        let tail = Array(rest.reversed().prefix { planar($0) != nil }.reversed().compactMap(planar))
        let core = Array(rest.dropLast(tail.count))
        guard !core.isEmpty, !(head.isEmpty && tail.isEmpty) else { return nil }
        for end in [head, tail] where !end.isEmpty {
            guard PlanarYUVKernel(matrices: end, coding: coding, chromaInterleaved: false) != nil else { return nil }
        }
        return (head, core, tail)
    }

    /// The composed luma curve (nil = luma unchanged) and whether chroma is removed, when every transform of
    /// the run is a luma-only one; nil otherwise.
    static func lumaOnly(_ run: [ColorTransform]) -> ((@Sendable (Float) -> Float)?, Bool)? {
        var curves: [@Sendable (Float) -> Float] = []
        var removesChroma = false
        for transform in run {
            guard case .luma(let curve, let removes) = transform.kind else { return nil }
            if let curve { curves.append(curve) }
            removesChroma = removesChroma || removes
        }
        if curves.isEmpty { return (nil, removesChroma) }
        let steps = curves
        let composed: @Sendable (Float) -> Float = { luma in steps.reduce(luma) { $1($0).clamped(0, 1) } }
        return (composed, removesChroma)
    }
}

/// One fused pass over a frame's planes, chosen at configure time.
protocol ColorKernel: AnyObject {
    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner)
}

/// A colour kernel that can end its pass with the vignette that follows the run (`FixedPointRunKernel`,
/// `ColorRunYUVKernel`).
protocol VignetteFusing: ColorKernel {
    /// Makes the pass apply `vignette` (configured for the same frame format); false when this vignette cannot be
    /// taken, and the processor then runs it band by band after the pass.
    func fuse(_ vignette: VignetteProcessor, width: Int, height: Int) -> Bool
}
