import VFXCore
import VFXPipeline

/// Work on one row of an RGBA frame: the kernel writes row `y` of `target` and may read any row of `source`
/// (straight-alpha R, G, B, A bytes). When `readsOnlyItsPixel` is true the two planes may be the same
/// (the stage then works in place).
protocol RGBARowKernel: Sendable {
    var readsOnlyItsPixel: Bool { get }
    func run(row y: Int, source: Plane, target: Plane, width: Int, height: Int)
}

/// The stage for filters defined on RGBA pixels (blend layers, palettes, thresholds, dither, stylized looks).
///
/// RGBA frames are worked on directly (in place when the kernel reads only its own pixel). With a kernel that reads
/// only its own pixel, I420 and NV12 frames go a band of `bandRows` rows at a time through small RGBA buffers that
/// stay in the core's cache (converted with the frame's colour description, filtered, converted back with the
/// configured one), and BGRA frames a row at a time (swizzled); the bytes are those of converting the whole frame to
/// RGBA and back, and the result is written over the frame when it is not shared. Kernels that read other rows get the whole frame: it is converted to RGBA in a pool buffer, filtered
/// and converted back. Gray frames come out as RGBA (these filters may make colour). Buffers come from pools made
/// in `configure`.
///
/// ```swift
/// let stage = RGBAProcessor(name: "color-threshold", kernel: ThresholdKernel(threshold: 0.4), slices: SliceRunner(threads: 1))
/// ```
final class RGBAProcessor<Kernel: RGBARowKernel>: VideoProcessor {
    let name: String
    let kernel: Kernel
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var rgbaPool: BufferPool?
    private var workPool: BufferPool?
    private var outputPool: BufferPool?
    /// The banded path's RGBA rows: two buffers of `bandRows` rows per slice.
    private var bands: [PixelBuffer] = []

    /// Rows converted, filtered and converted back at a time (even, for 4:2:0 chroma): 16 rows of a 1080p frame are
    /// 120 KiB of RGBA, which stay in the core's L2 cache between the passes.
    static var bandRows: Int { 16 }

    init(name: String, kernel: Kernel, slices: SliceRunner) {
        self.name = name
        self.kernel = kernel
        self.slices = slices
    }

    /// True when frames of `format` take the banded (YUV) or row-swizzled (BGRA) path.
    private func isBanded(_ format: PixelFormat) -> Bool {
        kernel.readsOnlyItsPixel && (format.isYUV || format == .bgra)
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let banded = isBanded(input.pixelFormat)
        rgbaPool = banded ? nil : BufferPool(format: .rgba, width: input.width, height: input.height, capacity: 3)
        workPool = banded ? nil : BufferPool(format: .rgba, width: input.width, height: input.height, capacity: 3)
        outputPool = input.pixelFormat == .rgba || input.pixelFormat == .gray8 ? nil
            : BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        // Two bands per slice (the kernel's input and output); BGRA frames use one row of each.
        let bandHeight = input.pixelFormat == .bgra ? 1 : min(Self.bandRows, input.height)
        bands = banded ? (0..<(2 * slices.threads)).map { _ in PixelBuffer(format: .rgba, width: input.width, height: bandHeight) } : []
        return input.colorCapable
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: name)
        guard let configured else { return frame }
        let inputFormat = frame.format
        if isBanded(inputFormat) { return banded(frame, color: configured.color) }
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

    /// A YUV or BGRA frame through a kernel that reads only its own pixel: in place when the frame is not shared,
    /// else into a pool buffer. YUV is read with the frame's colour description and written with `color`.
    private func banded(_ frame: consuming VideoFrame, color: ColorDescription) -> VideoFrame {
        let format = frame.format, width = frame.width, height = frame.height, kernel = self.kernel
        var target = frame.isUniquelyReferenced() ? frame : frame.makeSibling(pool: outputPool)
        let (input, output) = (frame.planes, target.planes)
        // The kernel sees one row at a time through views whose every row index is that row (stride 0): a kernel
        // that reads only its own pixel touches row y alone, so it needs neither the rows around it nor the band's
        // position in the frame. It reads one band and writes the other (separate rows let the compiler vectorize
        // kernels that it would run lane by lane in place, not knowing that the rows are the same).
        func row(_ pixels: UnsafeMutablePointer<UInt8>) -> Plane {
            Plane(baseAddress: pixels, bytesPerRow: 0, width: width, height: height, bytesPerPixel: 4)
        }
        let bands = self.bands, bandRows = Self.bandRows
        if format == .bgra {
            slices.forEachSlice(of: height) { rows, slice in
                let (rgba, filtered) = (bands[2 * slice].planes[0].row(0), bands[2 * slice + 1].planes[0].row(0))
                for y in rows {
                    swapRedAndBlue(input[0].row(y), into: rgba, count: width)
                    kernel.run(row: y, source: row(rgba), target: row(filtered), width: width, height: height)
                    swapRedAndBlue(filtered, into: output[0].row(y), count: width)
                }
            }
        } else {
            let unpack = YUVRows(yuv: format, packed: .rgba, color: frame.color)
            let pack = YUVRows(yuv: format, packed: .rgba, color: color)
            slices.forEachSlice(of: height, granularity: 2) { rows, slice in
                let (rgba, filtered) = (bands[2 * slice].planes[0], bands[2 * slice + 1].planes[0])
                var start = rows.lowerBound
                while start < rows.upperBound {
                    let part = start..<min(start + bandRows, rows.upperBound)
                    unpack.unpack(input, rows: part, width: width, into: rgba)
                    for y in part {
                        let (from, to) = (rgba.row(y - part.lowerBound), filtered.row(y - part.lowerBound))
                        kernel.run(row: y, source: row(from), target: row(to), width: width, height: height)
                    }
                    pack.pack(filtered, rows: part, width: width, height: height, into: output)
                    start = part.upperBound
                }
            }
        }
        withExtendedLifetime(frame) {}
        target.color = format.isYUV ? color : ColorDescription(matrix: color.matrix, range: .full)
        return target
    }

    func release() {
        rgbaPool = nil
        workPool = nil
        outputPool = nil
        bands = []
    }
}

/// Copies `count` packed pixels swapping their first and third bytes (RGBA ↔ BGRA), in a plain loop the compiler
/// vectorizes.
private func swapRedAndBlue(_ source: UnsafeMutablePointer<UInt8>, into target: UnsafeMutablePointer<UInt8>, count: Int) {
    let (from, to) = (UnsafeRawPointer(source), UnsafeMutableRawPointer(target))
    for x in 0..<count {
        let p = from.loadUnaligned(fromByteOffset: 4 &* x, as: UInt32.self)
        to.storeBytes(of: (p & 0xFF00_FF00) | (p >> 16 & 0xFF) | (p & 0xFF) << 16, toByteOffset: 4 &* x, as: UInt32.self)
    }
}

extension FrameFormat {
    /// What a stage that may make colour out of gray writes for frames of this format: gray frames come out RGBA
    /// (full range, the input's matrix), every other format as it is.
    ///
    /// ```swift
    /// FrameFormat(pixelFormat: .gray8, width: 64, height: 64).colorCapable.pixelFormat   // .rgba
    /// ```
    var colorCapable: FrameFormat {
        guard pixelFormat == .gray8 else { return self }
        var output = self
        output.pixelFormat = .rgba
        output.color = ColorDescription(matrix: color.matrix, range: .full)
        return output
    }
}
