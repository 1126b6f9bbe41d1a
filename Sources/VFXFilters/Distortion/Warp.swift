import Foundation
import VFXCore
import VFXPipeline

/// Where each output pixel takes its value from: a function from an output position to a source position, both in
/// frame pixels (origin at the top-left corner, pixel centres at integer + ½), or nil to paint the fill colour.
///
/// ```swift
/// let mirror = WarpMap(sampling: .nearest) { p, size in SIMD2(min(p.x, size.x - p.x), p.y) }
/// ```
struct WarpMap: Sendable {
    enum Sampling: Sendable {
        /// Weighted mean of the four nearest samples (weights in 1/256).
        case bilinear
        /// The sample whose centre is nearest.
        case nearest
    }

    let sampling: Sampling
    /// Colour painted where `source` returns nil (straight R'G'B' 0…1).
    let fill: SIMD3<Float>
    /// Output position and frame size (both in pixels) → source position, or nil.
    let source: @Sendable (_ position: SIMD2<Double>, _ size: SIMD2<Double>) -> SIMD2<Double>?

    init(sampling: Sampling = .bilinear, fill: SIMD3<Float> = .zero,
         source: @escaping @Sendable (_ position: SIMD2<Double>, _ size: SIMD2<Double>) -> SIMD2<Double>?) {
        self.sampling = sampling
        self.fill = fill
        self.source = source
    }
}

/// The stage of every geometric warp (distortions, tiles, mirrors, crystallize, hexagonal pixellate): the map is
/// evaluated once per plane sample at configure time into a table of source coordinates and bilinear weights, so a
/// frame costs one gather per sample whatever the formula. Each plane is sampled at its own resolution (chroma
/// planes of I420/NV12 at their sample centres), so every format is handled natively.
///
/// ```swift
/// let twirl = WarpProcessor(name: "twirl-distortion", map: map, slices: SliceRunner(threads: 1))
/// ```
final class WarpProcessor: VideoProcessor {
    let name: String
    let map: WarpMap
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var planes: [WarpTable] = []
    private var pool: BufferPool?

    init(name: String, map: WarpMap, slices: SliceRunner) {
        self.name = name
        self.map = map
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        guard input.width <= 32767, input.height <= 32767 else {
            throw FilterError.unsupportedFormat(filter: name, format: "frames over 32767 pixels on a side")
        }
        configured = input
        let fill = FillCodes(map.fill, format: input)
        planes = (0..<input.pixelFormat.planeCount).map { index in
            WarpTable(map: map, format: input, plane: index, fill: fill.codes(plane: index))
        }
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: name)
        let source = frame
        let output = source.makeSibling(pool: pool)
        for index in planes.indices {
            planes[index].bind(bytesPerRow: source.plane(index).bytesPerRow)
            let table = planes[index]
            let (input, target) = (source.plane(index), output.plane(index))
            slices.run(rows: target.height) { rows in
                for y in rows { table.run(row: y, source: input, target: target) }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        planes = []
        pool = nil
    }
}

/// A colour as the codes of each plane of a format (Y, U, V for YUV; R, G, B, A in memory order for RGB).
struct FillCodes {
    let perPlane: [[UInt8]]

    init(_ rgb: SIMD3<Float>, format: FrameFormat) {
        func byte(_ v: Float) -> UInt8 { UInt8(v.rounded().clamped(0, 255)) }
        let c = rgb.clampedToUnit
        switch format.pixelFormat {
        case .i420:
            let codes = YUVCoding(format.color).codes(c)
            perPlane = [[byte(codes.x)], [byte(codes.y)], [byte(codes.z)]]
        case .nv12:
            let codes = YUVCoding(format.color).codes(c)
            perPlane = [[byte(codes.x)], [byte(codes.y), byte(codes.z)]]
        case .rgba:
            perPlane = [[byte(c.x * 255), byte(c.y * 255), byte(c.z * 255), 255]]
        case .bgra:
            perPlane = [[byte(c.z * 255), byte(c.y * 255), byte(c.x * 255), 255]]
        case .gray8:
            perPlane = [[byte(LumaWeights(format.color.matrix).luma(c) * 255)]]
        }
    }

    func codes(plane: Int) -> [UInt8] { perPlane[plane] }
}

/// One plane's warp: for each sample, the source's top-left neighbour (x, y) and the weights toward the next
/// column and row in 1/256 (0…256); x = −1 (and weights all ones) marks a fill. Planes of one byte per sample also
/// get the neighbour as one byte offset for the source's row stride (`bind`), so eight samples go per step.
struct WarpTable: @unchecked Sendable {
    // Sendable: the buffers are written in init and in `bind` (called before the rows are sliced, on the processing
    // thread), and only read by `run`.
    let width: Int, height: Int, channels: Int
    let xs: [Int16], ys: [Int16]
    let weights: [UInt32]
    /// y · stride + x per sample (0 for a fill), for the stride `offsetStride`; empty when not one byte per sample.
    private(set) var offsets: [Int32] = []
    private(set) var offsetStride = 0
    let fill: [UInt8]
    let stepX: Int, stepY: Bool

    init(map: WarpMap, format: FrameFormat, plane: Int, fill: [UInt8]) {
        let size = format.pixelFormat.planeSize(plane, width: format.width, height: format.height)
        width = size.width
        height = size.height
        channels = format.pixelFormat.bytesPerPixel(plane: plane)
        self.fill = fill
        stepX = width > 1 ? channels : 0
        stepY = height > 1
        let scaleX = Double(format.width) / Double(width), scaleY = Double(format.height) / Double(height)
        let frame = SIMD2(Double(format.width), Double(format.height))
        var xs = [Int16](repeating: 0, count: width * height), ys = xs
        var weights = [UInt32](repeating: 0, count: width * height)
        let (w, h) = (width, height)
        /// Integer position and weight (0…256) along one axis for a source coordinate in samples.
        func axis(_ value: Double, count: Int, nearest: Bool) -> (Int, UInt32) {
            let clamped = min(max(value, 0), Double(count - 1))
            var base = Int(clamped.rounded(.down))
            var fraction = nearest ? (clamped - Double(base) >= 0.5 ? 1.0 : 0) : clamped - Double(base)
            if count == 1 { return (0, 0) }
            if base >= count - 1 { base = count - 2; fraction = 1 }
            return (base, UInt32((fraction * 256).rounded()))
        }
        let nearest = map.sampling == .nearest
        for y in 0..<h {
            for x in 0..<w {
                let position = SIMD2((Double(x) + 0.5) * scaleX, (Double(y) + 0.5) * scaleY)
                let i = y * w + x
                guard let source = map.source(position, frame), source.x.isFinite, source.y.isFinite else {
                    xs[i] = -1
                    weights[i] = .max
                    continue
                }
                let (sx, fx) = axis(source.x / scaleX - 0.5, count: w, nearest: nearest)
                let (sy, fy) = axis(source.y / scaleY - 0.5, count: h, nearest: nearest)
                xs[i] = Int16(sx)
                ys[i] = Int16(sy)
                weights[i] = fx | fy << 16
            }
        }
        self.xs = xs
        self.ys = ys
        self.weights = weights
    }

    /// Makes `offsets` for source planes whose rows are `bytesPerRow` apart (nothing when they already are, or when the
    /// samples are wider than a byte or the offsets would not fit 32 bits).
    mutating func bind(bytesPerRow: Int) {
        guard channels == 1, bytesPerRow != offsetStride, height * bytesPerRow < Int(Int32.max) else { return }
        offsetStride = bytesPerRow
        offsets = zip(xs, ys).map { x, y in x < 0 ? 0 : Int32(y) * Int32(bytesPerRow) + Int32(x) }
    }

    func run(row y: Int, source: Plane, target: Plane) {
        let output = target.row(y)
        let c = channels, stride = stepY ? source.bytesPerRow : 0, stepX = self.stepX
        let base = y * width
        let sourceBase = UnsafePointer(source.baseAddress), bytesPerRow = source.bytesPerRow
        /// Bilinear mix of the 2×2 samples from `top` (weights toward the next column and row in 1/256).
        @inline(__always) func mix(_ top: UnsafePointer<UInt8>, _ fx: UInt32, _ fy: UInt32) -> UInt8 {
            let upper = UInt32(top[0]) * (256 - fx) + UInt32(top[stepX]) * fx
            let lower = UInt32(top[stride]) * (256 - fx) + UInt32(top[stride + stepX]) * fx
            return UInt8(truncatingIfNeeded: (upper * (256 - fy) + lower * fy + 32768) >> 16)
        }
        xs.withUnsafeBufferPointer { xs in
            ys.withUnsafeBufferPointer { ys in
                weights.withUnsafeBufferPointer { weights in
                    guard let xs = xs.baseAddress.map({ $0 + base }), let ys = ys.baseAddress.map({ $0 + base }),
                          let weights = weights.baseAddress.map({ $0 + base }) else { return }
                    if c == 1 {
                        // One byte per sample (every plane of I420, gray, NV12's luma): eight samples per step, each
                        // reading its two pairs of neighbours as 16-bit loads, the mix in 32-bit lanes.
                        let fill = self.fill[0]
                        var x = 0
                        if stepX == 1, offsetStride == bytesPerRow {
                            let raw = UnsafeRawPointer(sourceBase)
                            offsets.withUnsafeBufferPointer { offsets in
                                guard let offsets = offsets.baseAddress.map({ $0 + base }) else { return }
                                while x + 8 <= width {
                                    let at = UnsafeRawPointer(offsets + x).loadUnaligned(as: SIMD8<Int32>.self)
                                    let packed = UnsafeRawPointer(weights + x).loadUnaligned(as: SIMD8<UInt32>.self)
                                    var top = SIMD8<UInt32>(), bottom = SIMD8<UInt32>()
                                    for lane in 0..<8 {
                                        top[lane] = UInt32(raw.loadUnaligned(fromByteOffset: Int(at[lane]), as: UInt16.self))
                                        bottom[lane] = UInt32(raw.loadUnaligned(fromByteOffset: Int(at[lane]) + stride, as: UInt16.self))
                                    }
                                    let fx = packed & 0xffff, fy = packed &>> 16
                                    let upper = (top & 0xff) &* (256 &- fx) &+ (top &>> 8) &* fx
                                    let lower = (bottom & 0xff) &* (256 &- fx) &+ (bottom &>> 8) &* fx
                                    let mixed = (upper &* (256 &- fy) &+ lower &* fy &+ 32768) &>> 16
                                    var bytes = SIMD8<UInt8>()
                                    for lane in 0..<8 { bytes[lane] = packed[lane] == .max ? fill : UInt8(truncatingIfNeeded: mixed[lane]) }
                                    (output + x).store(bytes)
                                    x += 8
                                }
                            }
                        }
                        for x in x..<width {
                            let sx = Int(xs[x])
                            if sx < 0 {
                                output[x] = fill
                                continue
                            }
                            let packed = weights[x]
                            output[x] = mix(sourceBase + Int(ys[x]) * bytesPerRow + sx, packed & 0xffff, packed >> 16)
                        }
                        return
                    }
                    for x in 0..<width {
                        let sx = Int(xs[x])
                        if sx < 0 {
                            for k in 0..<c { output[x * c + k] = fill[k] }
                            continue
                        }
                        let packed = weights[x]
                        let top = sourceBase + Int(ys[x]) * bytesPerRow + sx * c
                        for k in 0..<c { output[x * c + k] = mix(top + k, packed & 0xffff, packed >> 16) }
                    }
                }
            }
        }
    }
}
