import VFXCore
import VFXPipeline

/// Work on one row of an RGBA frame: the kernel writes row `y` of `target` and may read any row of `source`
/// (straight-alpha R, G, B, A bytes). When `readsOnlyItsPixel` is true the two planes may be the same
/// (the stage then works in place).
protocol RGBARowKernel: Sendable {
    var readsOnlyItsPixel: Bool { get }
    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int)
}

/// A function of one pixel and its position: R, G, B, A in 0…1 in, the same out.
protocol PixelKernel: Sendable {
    func apply(_ pixel: SIMD4<Float>, x: Int, y: Int) -> SIMD4<Float>
}

/// Runs a `PixelKernel` on every pixel of a row (bytes → floats → kernel → rounded bytes).
struct PerPixel<Kernel: PixelKernel>: RGBARowKernel {
    let kernel: Kernel
    var readsOnlyItsPixel: Bool { true }

    init(_ kernel: Kernel) { self.kernel = kernel }

    @inline(__always)
    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int) {
        let input = source.row(y), output = target.row(y)
        for x in 0..<width {
            let i = 4 * x
            let pixel = SIMD4<Float>(Float(input[i]), Float(input[i + 1]), Float(input[i + 2]), Float(input[i + 3])) * (1 / 255)
            let result = kernel.apply(pixel, x: x, y: y) * 255 + 0.5
            output[i] = UInt8(min(max(result.x, 0), 255))
            output[i + 1] = UInt8(min(max(result.y, 0), 255))
            output[i + 2] = UInt8(min(max(result.z, 0), 255))
            output[i + 3] = UInt8(min(max(result.w, 0), 255))
        }
    }
}

/// The stage for filters defined on RGBA pixels (blend layers, screens, generators, palettes, stylized looks).
///
/// RGBA frames are worked on directly (in place when the kernel reads only its own pixel); BGRA, I420 and NV12
/// frames are converted to RGBA in a pool buffer, filtered and converted back with their own colour description;
/// gray frames come out as RGBA (these filters may make colour). Buffers come from pools made in `configure`.
///
/// ```swift
/// let stage = RGBAProcessor(name: "checkerboard", kernel: PerPixel(Checkerboard(...)), slices: SliceRunner(threads: 1))
/// ```
final class RGBAProcessor<Kernel: RGBARowKernel>: VideoProcessor {
    let name: String
    let kernel: Kernel
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var rgbaPool: BufferPool?
    private var workPool: BufferPool?
    private var outputPool: BufferPool?

    init(name: String, kernel: Kernel, slices: SliceRunner) {
        self.name = name
        self.kernel = kernel
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        rgbaPool = BufferPool(format: .rgba, width: input.width, height: input.height, capacity: 3)
        workPool = BufferPool(format: .rgba, width: input.width, height: input.height, capacity: 3)
        outputPool = input.pixelFormat == .rgba || input.pixelFormat == .gray8 ? nil
            : BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        guard input.pixelFormat == .gray8 else { return input }
        var output = input
        output.pixelFormat = .rgba
        output.color = ColorDescription(matrix: input.color.matrix, range: .full)
        return output
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: name)
        guard let configured else { return frame }
        let inputFormat = frame.format
        var source = inputFormat == .rgba ? frame : frame.converted(to: .rgba, pool: rgbaPool)
        let (width, height, kernel) = (source.width, source.height, self.kernel)
        let result: VideoFrame
        if kernel.readsOnlyItsPixel {
            source.withMutablePlanes(pool: workPool) { planes in
                let plane = planes[0]
                slices.run(rows: height) { rows in
                    for y in rows { kernel.run(row: y, source: plane, target: plane, width: width, height: height) }
                }
            }
            result = source
        } else {
            let target = source.makeSibling(pool: workPool)
            let (input, output) = (source.plane(0), target.plane(0))
            slices.run(rows: height) { rows in
                for y in rows { kernel.run(row: y, source: input, target: output, width: width, height: height) }
            }
            result = withExtendedLifetime(source) { target }
        }
        if inputFormat == .rgba || inputFormat == .gray8 { return result }
        return result.converted(to: inputFormat, color: configured.color, pool: outputPool)
    }

    func release() {
        rgbaPool = nil
        workPool = nil
        outputPool = nil
    }
}
