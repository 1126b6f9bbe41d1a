import Foundation
import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Bokeh-like blur: each sample becomes the mean of the samples whose centres lie within `radius` of it (a
    /// disc; edges repeat the border). Chroma planes of I420/NV12 use radius/2. The disc is cut into rows: each row
    /// of the disc is one difference of running sums, so a sample costs 2r + 1 additions.
    /// - `radius` 0…100 px (default 8). Formats: all (RGBA/BGRA: all four channels).
    /// - Chain: `disc-blur:radius=12` · Swift: `try FilterDescription("disc-blur", ["radius": .number(12)])`
    public static let discBlur = FilterSpec(
        name: "disc-blur", family: .blur, summary: "Bokeh-like blur: the mean over a disc of the given radius.",
        coreImage: "CIDiscBlur",
        parameters: [ParameterSpec("radius", .number(0...100, unit: "px"), default: 8, "radius of the disc")],
        example: "disc-blur:radius=12", swift: "try FilterDescription(\"disc-blur\", [\"radius\": .number(12)])"
    ) { arguments, context in
        .processor(DiscBlurProcessor(radius: arguments.number("radius"), slices: context.slices))
    }
}

/// The stage of `disc-blur`: per plane and slice of rows, 16-bit running sums of the rows the disc reaches (padded by
/// the radius with the border repeated) in a ring of rows kept in cache; each output sample then adds one difference of
/// two running sums per disc row, 32 samples per step in 16-bit lanes.
///
/// ```swift
/// let stage = DiscBlurProcessor(radius: 12, slices: SliceRunner(threads: 1))
/// let output = try stage.configure(for: format)
/// ```
final class DiscBlurProcessor: VideoProcessor {
    let radius: Double
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var planes: [DiscPlane] = []
    private var pool: BufferPool?
    /// One ring of running-sum rows per slice, each as long as the largest plane's ring.
    private var rings: [Int16] = []

    init(radius: Double, slices: SliceRunner) {
        self.radius = radius
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        planes = (0..<input.pixelFormat.planeCount).map { index in
            let size = input.pixelFormat.planeSize(index, width: input.width, height: input.height)
            return DiscPlane(width: size.width, height: size.height, channels: input.pixelFormat.bytesPerPixel(plane: index),
                             radius: radius * Double(size.width) / Double(input.width))
        }
        rings = Array(repeating: 0, count: slices.threads * (planes.map(\.ringLength).max() ?? 0))
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "disc-blur")
        guard radius >= 1 else { return frame }
        let source = frame
        let output = source.makeSibling(pool: pool)
        let ringLength = rings.count / slices.threads
        rings.withUnsafeMutableBufferPointer { rings in
            guard let base = rings.baseAddress else { return }
            for (index, plane) in planes.enumerated() {
                let (input, target) = (source.plane(index), output.plane(index))
                slices.forEachSlice(of: plane.height) { rows, slice in
                    plane.blur(rows: rows, of: input, into: target, ring: base + slice * ringLength)
                }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    func release() {
        planes = []
        rings = []
        pool = nil
    }
}

/// One plane's disc: the half-width of each disc row, the groups of disc rows whose sums fit 16 bits, and the mean's
/// divisor.
struct DiscPlane {
    let width: Int, height: Int, channels: Int
    let reach: Int
    /// Half-width of the disc at each vertical offset −reach…reach.
    let halfWidths: [Int]
    /// The samples in the disc.
    let count: Int
    /// Consecutive disc rows whose spans hold at most 257 samples together, so their sum (≤ 257 · 255 < 2¹⁶) is exact
    /// in wrapping 16-bit lanes.
    let groups: [Range<Int>]
    /// Entries of one ring row ((width + 2·reach + 1) · channels) and rows of the ring (the most a disc reaches).
    let rowLength: Int, ringRows: Int
    var ringLength: Int { rowLength * ringRows }
    /// The running sums within a vector of the row's interleaved channels.
    let scan: Lanes16.Scan

    init(width: Int, height: Int, channels: Int, radius: Double) {
        self.width = width
        self.height = height
        self.channels = channels
        reach = Int(radius.rounded(.down))
        halfWidths = (-reach...reach).map { dy in Int((radius * radius - Double(dy * dy)).squareRoot().rounded(.down)) }
        count = halfWidths.reduce(0) { $0 + 2 * $1 + 1 }
        var groups: [Range<Int>] = [], first = 0, samples = 0
        for (index, hw) in halfWidths.enumerated() {
            if samples + 2 * hw + 1 > 257 {
                groups.append(first..<index)
                (first, samples) = (index, 0)
            }
            samples += 2 * hw + 1
        }
        groups.append(first..<halfWidths.count)
        self.groups = groups
        rowLength = (width + 2 * reach + 1) * channels
        ringRows = min(2 * reach + 1, height)
        scan = Lanes16.Scan(stride: channels)
    }

    /// Output rows `rows`, their running sums made into `ring` (`ringLength` entries) as the disc first reaches them.
    func blur(rows: Range<Int>, of input: Plane, into output: Plane, ring: UnsafeMutablePointer<Int16>) {
        var next = max(rows.lowerBound - reach, 0)
        withUnsafeTemporaryAllocation(of: (UnsafePointer<Int16>, UnsafePointer<Int16>).self, capacity: halfWidths.count) { spans in
            for y in rows {
                while next <= min(y + reach, height - 1) {
                    sum(row: next, of: input, into: ring + next % ringRows * rowLength)
                    next += 1
                }
                for (index, hw) in halfWidths.enumerated() {
                    let row = UnsafePointer(ring + min(max(y + index - reach, 0), height - 1) % ringRows * rowLength)
                    // Sample i = x·c + k: its span x − hw … x + hw is padded positions x + reach − hw … x + reach + hw.
                    spans[index] = (row + (reach + hw + 1) * channels, row + (reach - hw) * channels)
                }
                blur(row: output.row(y), spans: UnsafeBufferPointer(spans))
            }
        }
    }

    /// Running sums of row `y` into `out`, wrapping in 16 bits: entry (p + 1)·c + k is the sum of channel k over padded
    /// positions 0…p, where padded position p holds the sample at x = clamp(p − reach). A difference of two entries is
    /// exact whenever the true sum of the span between them is below 2¹⁶. The row's own samples go 16 at a time (a scan
    /// within the vector, plus the totals carried from the one before); the padding is a multiple of a border sample.
    private func sum(row y: Int, of plane: Plane, into out: UnsafeMutablePointer<Int16>) {
        typealias L = Lanes16
        let input = plane.row(y), c = channels, n = width * c
        for k in 0..<c { out[k] = 0 }
        for j in 0..<(reach * c) { out[c + j] = Int16(truncatingIfNeeded: (j / c + 1) * Int(input[j % c])) }
        let row = out + (reach + 1) * c   // entry of the row's first sample
        var j = 0
        if n >= 16 {
            var totals = SIMD16<Int16>()
            for lane in 0..<16 { totals[lane] = row[lane % c - c] }
            var carry = L.vector(totals)
            while j + 16 <= n {
                let sums = scan.prefix(L.widen16(input + j))
                L.store(L.add(sums, carry), to: row + j)
                carry = L.add(carry, scan.last(sums))
                j += 16
            }
        }
        while j < n {
            row[j] = row[j - c] &+ Int16(input[j])
            j += 1
        }
        let end = row + n
        for j in 0..<(reach * c) {
            end[j] = end[j % c - c] &+ Int16(truncatingIfNeeded: (j / c + 1) * Int(input[n - c + j % c]))
        }
    }

    /// One output row from the spans (end, start) of its disc rows: 32 samples per step, each group of disc rows
    /// summed in wrapping 16-bit lanes then widened into 32-bit totals; the mean rounded half up, ⌊(total + ⌊count/2⌋)
    /// / count⌋, in Float. With n = total + ⌊count/2⌋ < 2²³ (255 · 31 417 + 15 708 for radius 100) exact as a Float,
    /// ⌊n / count⌋ = ⌊(n + ½) / count⌋, whose fraction lies at least ½/count from a whole number: below 2¹⁴ samples
    /// a product with the rounded reciprocal is off by at most 256 · 2⁻²³ = 2⁻¹⁵ < ½/count, so truncating it is exact;
    /// larger discs divide (a quotient that is not whole lies at least 1/count from one, the division is off by at most
    /// 2⁻¹⁶). A row shorter than 32 samples goes one sample at a time.
    private func blur(row output: UnsafeMutablePointer<UInt8>, spans: UnsafeBufferPointer<(UnsafePointer<Int16>, UnsafePointer<Int16>)>) {
        typealias L = Lanes16
        let n = width * channels, half = Int32(count / 2)
        guard n >= 32 else {
            for i in 0..<n {
                var total = Int(half)
                for (end, start) in spans { total += Int(UInt16(bitPattern: end[i] &- start[i])) }
                output[i] = UInt8(truncatingIfNeeded: total / count)
            }
            return
        }
        let divides = count >= 1 << 14
        let (reciprocal, divisor) = (SIMD8<Float>(repeating: 1 / Float(count)), SIMD8<Float>(repeating: Float(count)))
        /// The mean of totals (each below 2²³), through the mantissa of 2²³ + total (no generic conversion).
        @inline(__always) func mean(_ total: SIMD8<Int32>) -> SIMD8<Float> {
            let value = unsafeBitCast(unsafeBitCast(total, to: SIMD8<UInt32>.self) | 0x4B00_0000, to: SIMD8<Float>.self) - 8_388_608
            return divides ? value / divisor : (value + 0.5) * reciprocal
        }
        var i = 0
        while true {
            let at = min(i, n - 32)   // the last step overlaps the one before: the same values written twice
            var totals = (SIMD8<Int32>(repeating: half), SIMD8<Int32>(repeating: half),
                          SIMD8<Int32>(repeating: half), SIMD8<Int32>(repeating: half))
            for group in groups {
                var (a, b) = (L.splat(0), L.splat(0))
                for index in group {
                    let (end, start) = spans[index]
                    a = L.add(a, L.subtract(L.load(end + at), L.load(start + at)))
                    b = L.add(b, L.subtract(L.load(end + at + 16), L.load(start + at + 16)))
                }
                let (a0, a1) = L.widenedHalves(a), (b0, b1) = L.widenedHalves(b)
                totals.0 &+= a0
                totals.1 &+= a1
                totals.2 &+= b0
                totals.3 &+= b1
            }
            L.narrow32(L.truncatingHalves(mean(totals.0), mean(totals.1)), L.truncatingHalves(mean(totals.2), mean(totals.3)),
                       to: output + at)
            if at == n - 32 { break }
            i += 32
        }
    }
}
