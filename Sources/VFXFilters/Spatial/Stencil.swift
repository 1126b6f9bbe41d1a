import VFXCore
import VFXPipeline

/// The 3×3 neighbourhood of sixteen consecutive samples of one channel layout (neighbours are one pixel
/// away: `channels` samples left or right, one row up or down; edges repeat the border).
struct Neighborhood {
    let northWest: SIMD16<Float>, north: SIMD16<Float>, northEast: SIMD16<Float>
    let west: SIMD16<Float>, center: SIMD16<Float>, east: SIMD16<Float>
    let southWest: SIMD16<Float>, south: SIMD16<Float>, southEast: SIMD16<Float>
}

/// A point-wise function of a 3×3 neighbourhood: sharpen, edges, emboss.
protocol StencilKernel {
    /// The result for the sixteen centre samples, in byte units (stored rounded and clamped).
    func apply(_ neighborhood: Neighborhood) -> SIMD16<Float>
}

/// Runs a `StencilKernel` over one plane, out of place, in row slices. Each slice keeps three float copies of
/// the rows around the current one, padded by one pixel on each side with the border repeated, so every
/// neighbour is a plain vector load. Buffers are made once, here.
///
/// ```swift
/// let stencil = PlaneStencil(width: 1920, height: 1080, channels: 1, slices: 2)
/// stencil.run(source: input, target: output, kernel: SharpenKernel(amount: 0.4, levels: levels))
/// ```
final class PlaneStencil: @unchecked Sendable {
    // Sendable: each slice uses only its own three row buffers; `run` is called by one thread at a time.
    let width: Int, height: Int, channels: Int, slices: Int
    private let samples: Int
    private let rowStride: Int
    private let rows: UnsafeMutablePointer<Float>

    init(width: Int, height: Int, channels: Int, slices: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        self.slices = max(1, slices)
        samples = width * channels
        rowStride = (samples + 2 * channels + 15) / 16 * 16 + 16
        rows = UnsafeMutableRawPointer.allocate(byteCount: rowStride * 3 * self.slices * 4, alignment: 64)
            .bindMemory(to: Float.self, capacity: rowStride * 3 * self.slices)
    }

    deinit { rows.deallocate() }

    func run<Kernel: StencilKernel & Sendable>(source: Plane, target: Plane, kernel: Kernel) {
        SliceRunner(threads: slices).forEachSlice(of: height) { range, slice in
            self.runRows(range, slice: slice, source: source, target: target, kernel: kernel)
        }
    }

    /// Loads source row `y` (clamped) into `buffer` as floats with one repeated pixel on each side.
    private func load(_ source: Plane, row y: Int, into buffer: UnsafeMutablePointer<Float>) {
        let input = UnsafePointer(source.row(min(max(y, 0), height - 1)))
        var index = 0
        while index < samples {
            let count = min(16, samples - index)
            UnsafeMutableRawPointer(buffer + channels + index).storeBytes(of: loadBytes(input + index, count: count),
                                                                          as: SIMD16<Float>.self)
            index += 16
        }
        for c in 0..<channels {
            buffer[c] = buffer[channels + c]
            buffer[channels + samples + c] = buffer[samples + c]
        }
    }

    private func runRows<Kernel: StencilKernel>(_ range: Range<Int>, slice: Int, source: Plane, target: Plane, kernel: Kernel) {
        guard !range.isEmpty else { return }
        let base = rows + slice * 3 * rowStride
        var above = base, current = base + rowStride, below = base + 2 * rowStride
        load(source, row: range.lowerBound - 1, into: above)
        load(source, row: range.lowerBound, into: current)
        let c = channels
        for y in range {
            load(source, row: y + 1, into: below)
            let output = target.row(y)
            var index = 0
            while index < samples {
                let n = above + c + index, m = current + c + index, s = below + c + index
                let neighborhood = Neighborhood(
                    northWest: SIMD16<Float>(loadingFrom: n - c), north: SIMD16<Float>(loadingFrom: n), northEast: SIMD16<Float>(loadingFrom: n + c),
                    west: SIMD16<Float>(loadingFrom: m - c), center: SIMD16<Float>(loadingFrom: m), east: SIMD16<Float>(loadingFrom: m + c),
                    southWest: SIMD16<Float>(loadingFrom: s - c), south: SIMD16<Float>(loadingFrom: s), southEast: SIMD16<Float>(loadingFrom: s + c))
                storeBytes(kernel.apply(neighborhood), to: output + index, count: min(16, samples - index))
                index += 16
            }
            (above, current, below) = (current, below, above)
        }
    }
}

/// What a 3×3 filter does to each plane of a format.
enum StencilPlaneRole {
    /// The kernel runs on the plane.
    case filter
    /// The plane is copied unchanged.
    case keep
    /// The plane is filled with a constant (edges and emboss make YUV chroma neutral).
    case fill(UInt8)
}

/// The stage of the 3×3 filters (sharpen, edges, emboss, median): one `PlaneStencil` (the median: one `PlaneMedian`,
/// which works on the bytes directly) per filtered plane, output to a buffer from a pool made at configure time.
///
/// ```swift
/// let stage = StencilProcessor(.median, slices: SliceRunner(threads: 1))
/// ```
final class StencilProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    enum Filter {
        case sharpen(Float)
        case edges(Float)
        case emboss(Float)
        case median

        var name: String {
            switch self {
            case .sharpen: "sharpen"
            case .edges: "edges"
            case .emboss: "emboss"
            case .median: "median"
            }
        }
    }

    let filter: Filter
    let slices: SliceRunner
    private var stencils: [PlaneStencil?] = []
    private var medians: [PlaneMedian?] = []
    private var roles: [StencilPlaneRole] = []
    private var levels: [PlaneLevels] = []
    private var pool: BufferPool?

    init(_ filter: Filter, slices: SliceRunner) {
        self.filter = filter
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        roles = (0..<format.planeCount).map { index in
            let chroma = format.isYUV && index > 0
            switch filter {
            case .median: return .filter
            case .sharpen: return chroma ? .keep : .filter
            case .edges, .emboss: return chroma ? .fill(128) : .filter
            }
        }
        levels = (0..<format.planeCount).map { PlaneLevels(format: format, color: input.color, plane: $0) }
        let isMedian = if case .median = filter { true } else { false }
        let sizes = roles.indices.map { format.planeSize($0, width: input.width, height: input.height) }
        stencils = roles.enumerated().map { index, role in
            guard case .filter = role, !isMedian else { return nil }
            return PlaneStencil(width: sizes[index].width, height: sizes[index].height,
                                channels: format.bytesPerPixel(plane: index), slices: slices.threads)
        }
        medians = roles.enumerated().map { index, role in
            guard case .filter = role, isMedian else { return nil }
            return PlaneMedian(width: sizes[index].width, height: sizes[index].height,
                               channels: format.bytesPerPixel(plane: index), slices: slices.threads)
        }
        pool = BufferPool(format: format, width: input.width, height: input.height, capacity: 4)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: filter.name)
        let source = frame
        var output = source.makeSibling(pool: pool)
        output.withMutablePlanes { targets in
            for (index, target) in targets.enumerated() {
                let plane = source.plane(index)
                switch roles[index] {
                case .keep:
                    plane.copy(to: target)
                case .fill(let value):
                    for y in 0..<target.height { target.row(y).update(repeating: value, count: target.width * target.bytesPerPixel) }
                case .filter:
                    let levels = self.levels[index]
                    switch filter {
                    case .sharpen(let amount): stencils[index]?.run(source: plane, target: target, kernel: SharpenKernel(amount: amount, levels: levels))
                    case .edges(let amount): stencils[index]?.run(source: plane, target: target, kernel: EdgesKernel(amount: amount, levels: levels))
                    case .emboss(let amount): stencils[index]?.run(source: plane, target: target, kernel: EmbossKernel(amount: amount, levels: levels))
                    case .median: medians[index]?.run(source: plane, target: target)
                    }
                }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        stencils = []
        medians = []
        pool = nil
    }
}
