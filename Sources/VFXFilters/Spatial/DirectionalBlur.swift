import Foundation
import VFXCore
import VFXPipeline

// Directional blurs: along one direction (motion-blur) and along rays from a centre (zoom-blur).

extension FilterSpec {
    /// Blurs along a direction, as a camera moving during the exposure: the mean of 2K+1 samples on the line
    /// through each pixel, one pixel apart along the line's major axis (x when |angle| ≤ 45° from horizontal,
    /// else y), sampled linearly across it, with coordinates clamped to the frame. K = round(radius / √(1 + t²)),
    /// t the slope, so the line spans `2·radius` pixels.
    /// - `radius`: half the length in pixels, 0…500, default 20. `angle`: degrees, 0 = horizontal, positive
    ///   clockwise (y points down), −360…360, default 0.
    /// - Formats: all (every plane at its own resolution; chroma with half the radius).
    /// - Kernel: tap by tap. Sample s sits at the same offset from every pixel, between the same two neighbours
    ///   across the line with the same weights, so the rows it reaches are rewritten as 16-bit pairs of neighbours (a
    ///   ring of rows that stays in cache) and each sample is one multiply-add of pairs with its two weights
    ///   (`vpmaddwd`), 32 samples per step, summed exactly in 32 bits with integer weights that add up to a power of
    ///   two (the mean is a shift). Within one code of the definition; the cost grows with the radius (2K+1 taps).
    ///   Along a row or a column (0°, 90°, 180°, 270°) running sums cost the same at any radius; so do long lines off
    ///   the axes (K ≥ 32 along y, 40 along x), summed along the line on a grid of 16 (from K = 96 on, 8) sub-pixel
    ///   offsets across it and mixed linearly between the two grid lines around each pixel's own line: within
    ///   |second difference across the line| / 4P of the definition for the 1/P of samples whose grid lines straddle
    ///   a pixel boundary, exact for the rest (on noise, within a code of the definition).
    ///
    /// Chain: `motion-blur:radius=20:angle=30` · Swift: `FilterDescription.motionBlur(radius: 20, angle: 30)`
    public static let motionBlur = FilterSpec(
        name: "motion-blur", family: .blur, summary: "Blur along a direction (angle, clockwise from horizontal) over 2·radius pixels.",
        coreImage: "CIMotionBlur",
        parameters: [ParameterSpec("radius", .number(0...500, unit: "px"), default: 20, "half the length of the streak"),
                     ParameterSpec("angle", .angle(-360...360), default: 0, "direction, clockwise from horizontal")],
        example: "motion-blur:radius=20:angle=30", swift: "FilterDescription.motionBlur(radius: 20, angle: 30)"
    ) { arguments, context in
        .processor(MotionBlurProcessor(radius: arguments.number("radius"), degrees: arguments.number("angle"), slices: context.slices))
    }

    /// Blurs along rays from `center`, as zooming during the exposure: the mean of N = 2ⁿ samples at
    /// `center + (p − center) · sᵐ`, m = 0…N−1, where `s^(N−1) = 1 − amount / (half diagonal)` (so a pixel in a
    /// corner is smeared over `amount` pixels toward the centre) and N ≥ amount + 1.
    /// - `center`: normalized point, default 0.5x0.5. `amount`: pixels, 0…500, default 20.
    /// - Formats: all (every plane, chroma at its own resolution).
    /// - Kernel: n = log₂N passes, each averaging the previous pass with itself scaled by s^(2ᵏ) about the centre
    ///   (bilinear); cost grows with log(amount), not amount. The passes run on 16-bit planes (128 × the value), rows
    ///   mixed in 16-bit lanes and columns by lane permutations.
    ///
    /// Chain: `zoom-blur:center=0.5x0.4:amount=30` · Swift: `FilterDescription.zoomBlur(center: FilterPoint(x: 0.5, y: 0.4), amount: 30)`
    public static let zoomBlur = FilterSpec(
        name: "zoom-blur", family: .blur, summary: "Blur along rays from a center, as zooming during the exposure.",
        coreImage: "CIZoomBlur",
        parameters: [ParameterSpec("center", .point, default: .point(FilterPoint(x: 0.5, y: 0.5)), "center of the zoom"),
                     ParameterSpec("amount", .number(0...500, unit: "px"), default: 20, "smear in pixels at the corners")],
        example: "zoom-blur:center=0.5x0.4:amount=30",
        swift: "FilterDescription.zoomBlur(center: FilterPoint(x: 0.5, y: 0.4), amount: 30)"
    ) { arguments, context in
        .processor(ZoomBlurProcessor(center: arguments.point("center"), amount: arguments.number("amount"), slices: context.slices))
    }
}

extension FilterDescription {
    public static func motionBlur(radius: Double = 20, angle: Double = 0) -> FilterDescription {
        FilterDescription(builtIn: "motion-blur", ["radius": .number(radius), "angle": .number(angle)])
    }

    public static func zoomBlur(center: FilterPoint = FilterPoint(x: 0.5, y: 0.5), amount: Double = 20) -> FilterDescription {
        FilterDescription(builtIn: "zoom-blur", ["center": .point(center), "amount": .number(amount)])
    }
}

/// `source`'s planes blurred into a buffer from `pool`: `blur(index, plane, target, rows, slice)` for each plane, its
/// rows split over `slices` (the two stages below differ only in their per-plane blur).
private func blurredPlanes(_ source: VideoFrame, pool: BufferPool?, slices: SliceRunner,
                           _ blur: (Int, Plane, Plane, Range<Int>, Int) -> Void) -> VideoFrame {
    var output = source.makeSibling(pool: pool)
    output.withMutablePlanes { targets in
        for (index, target) in targets.enumerated() {
            let plane = source.plane(index)
            slices.forEachSlice(of: target.height) { rows, slice in blur(index, plane, target, rows, slice) }
        }
    }
    return withExtendedLifetime(source) { output }
}

/// The stage of `motion-blur`: `PlaneMotionBlur` per plane, into a pool buffer.
final class MotionBlurProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let radius: Double, degrees: Double
    let slices: SliceRunner
    private var planes: [PlaneMotionBlur] = []
    private var pool: BufferPool?

    init(radius: Double, degrees: Double, slices: SliceRunner) {
        self.radius = radius
        self.degrees = degrees
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        planes = (0..<format.planeCount).map { index in
            let size = format.planeSize(index, width: input.width, height: input.height)
            return PlaneMotionBlur(width: size.width, height: size.height, channels: format.bytesPerPixel(plane: index),
                                   radius: radius * Double(size.width) / Double(input.width), degrees: degrees,
                                   slices: slices.threads)
        }
        pool = BufferPool(format: format, width: input.width, height: input.height, capacity: 4)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "motion-blur")
        return blurredPlanes(frame, pool: pool, slices: slices) { index, plane, target, rows, slice in
            planes[index].blur(plane, into: target, rows: rows, slice: slice)
        }
    }

    func release() {
        planes = []
        pool = nil
    }
}

/// Motion blur of one plane, tap by tap. The major axis is the one the direction moves along faster; t = minor step
/// per major step (|t| ≤ 1). Sample s (s = −K…K) of the line through a pixel lies s pixels along the major axis and
/// s·t across, between the neighbours ⌊s·t⌋ and ⌊s·t⌋ + 1 across, with weights 1 − f and f (f = s·t − ⌊s·t⌋). Those
/// offsets and weights are the same for every pixel, so each sample is a *tap*: a fixed pair of neighbours at a
/// fixed offset, with two fixed weights.
///
/// The rows the taps reach are rewritten as *pair rows* of 16-bit samples: each sample next to its neighbour across
/// the line (the row below when the line runs along x, the next pixel when it runs along y), with clamped padding
/// of `margin` pixels on both sides. A tap is then one multiply-add of eight pairs with its two weights
/// (`vpmaddwd`), and `blur` sums the 2K+1 taps of 32 samples in 32-bit registers before it writes them. Each slice
/// keeps the pair rows of the rows its taps reach in a ring (as many rows as the taps span: one at 0°, about
/// 2K·|t| + 2 along x, 2K + 1 along y), adding each row once as the output row moves down, so they stay in cache.
///
/// The weights are integers that sum to exactly 2^`shift` (the rounding of each is carried to the next), so the
/// mean is a shift, rounded half up: a constant plane stays constant, and every output is within one code of
/// the definition evaluated exactly (each of the 2(2K+1) weights is within 2^−`shift` of its ideal share, and
/// 2^`shift` ≥ 16384·(2K+1) up to 2K+1 = 512, so the sum is within 0.07 of a code of the exact mean).
final class PlaneMotionBlur: @unchecked Sendable {
    // Sendable: the taps are immutable; each slice writes and reads only its own ring of pair rows.
    let width: Int, height: Int, channels: Int
    let horizontalMajor: Bool
    /// K: the line has 2K + 1 samples.
    let steps: Int
    /// Whether the line runs along a row or a column (slope 0): then the mean is a running sum, exact in integers.
    let along: Bool
    /// The weights sum to 2^shift.
    let shift: Int
    private let taps: [Tap]
    /// The first and last row offsets of the taps; the ring holds `ringRows` pair rows per slice.
    private let firstRow: Int, lastRow: Int, ringRows: Int
    /// Pixels of clamped padding on each side of a pair row (the farthest tap along the row, plus one).
    private let margin: Int
    /// Int16 from one pair row to the next: two per sample of the padded row, plus 32 samples of slack for the last,
    /// partial block.
    private let pairStride: Int
    /// The slices' rings of pair rows, one after the other.
    private let rings: UnsafeMutablePointer<Int16>
    /// Lines off the axes with K of at least `longLine` (along y; along x, where the grid works on transposed columns,
    /// the larger one) take running sums on a grid of phases (`PlaneLineSums`) instead of taps: about where the two
    /// cost the same.
    static let longLine = (alongY: 32, alongX: 40)
    private let lineSums: PlaneLineSums?

    struct Tap {
        /// Offset of the tap's first neighbour from the output pixel: rows, and pixels along the row.
        let rows: Int, columns: Int
        /// Weights of the first neighbour and of the second.
        let first: Int16, second: Int16
    }

    init(width: Int, height: Int, channels: Int, radius: Double, degrees: Double, slices: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        let radians = degrees * .pi / 180
        let dx = cos(radians), dy = sin(radians)
        horizontalMajor = abs(dx) >= abs(dy)
        let slope = horizontalMajor ? dy / dx : dx / dy
        // Quarter and half turns leave a slope of about 10⁻¹⁶ from the rounding of π: that is 0.
        let t = abs(slope) < 1e-9 ? 0 : slope
        along = t == 0
        let k = Int((radius / (1 + t * t).squareRoot()).rounded())
        steps = k
        let count = 2 * k + 1
        // Every weight at most 32767 (2^shift / count ≤ 32766 before rounding), every sum below 2^31 (255 · 2^shift).
        var shift = 14
        while shift < 23 && Double(1 << (shift + 1)) <= 32766 * Double(count) { shift += 1 }
        self.shift = shift
        let total = Double(1 << shift)
        var exact = 0.0, given = 0
        /// The next weight: the rounded running total of the ideal weights, less what was given so far.
        func weight(_ ideal: Double) -> Int16 {
            exact += ideal
            let next = Int(exact.rounded())
            defer { given = next }
            return Int16(next - given)
        }
        let horizontal = horizontalMajor
        let taps = (-k...k).map { s in
            let across = Double(s) * t, lower = across.rounded(.down)
            let f = across - lower
            let first = weight(total * (1 - f) / Double(count)), second = weight(total * f / Double(count))
            return horizontal ? Tap(rows: Int(lower), columns: s, first: first, second: second)
                              : Tap(rows: s, columns: Int(lower), first: first, second: second)
        }
        self.taps = taps
        margin = taps.reduce(0) { max($0, abs($1.columns)) } + 1
        pairStride = 2 * ((width + 2 * margin) * channels + 32)
        firstRow = taps.reduce(0) { min($0, $1.rows) }
        lastRow = taps.reduce(0) { max($0, $1.rows) }
        // Pair rows exist for rows −1…height − 1 (row −1: the clamped row above, paired with row 0).
        ringRows = min(lastRow - firstRow + 1, height + 1)
        lineSums = along || k < (horizontalMajor ? Self.longLine.alongX : Self.longLine.alongY) ? nil
            : PlaneLineSums(width: width, height: height, channels: channels, steps: k, slope: t,
                            horizontalMajor: horizontalMajor, slices: slices)
        rings = .allocate(capacity: along || lineSums != nil ? 0 : pairStride * ringRows * max(slices, 1))
    }

    deinit { rings.deallocate() }

    /// Writes pair row r (−1…height − 1) of `source` at `row`: sample q is (A, B), A the source sample at row r and
    /// pixel q / channels − margin, B its neighbour across the line, coordinates clamped.
    private func pair(_ source: Plane, row r: Int, into row: UnsafeMutablePointer<Int16>) {
        let c = channels, last = height - 1, lastX = width - 1
        let (dr, dc) = horizontalMajor ? (1, 0) : (0, 1)
        let base = UnsafePointer(source.baseAddress)
        let padded = (width + 2 * margin) * c + 32
        // Samples that have both neighbours inside the row go sixteen at a time.
        let interior = (width - dc) * c, vectorEnd = interior / 16 * 16
        let first = base + min(max(r, 0), last) * source.bytesPerRow
        let second = base + min(max(r + dr, 0), last) * source.bytesPerRow
        let origin = row + 2 * margin * c
        for i in stride(from: 0, to: vectorEnd, by: 16) {
            let (low, high) = Lanes16.zipWidened(first + i, second + i + dc * c)
            let target = UnsafeMutableRawPointer(origin + 2 * i).assumingMemoryBound(to: UInt8.self)
            Lanes16.store(low, to: target)
            Lanes16.store(high, to: target + 32)
        }
        /// Sample q of the padded row, clamped.
        @inline(__always) func fill(_ q: Int) {
            let x = q / c - margin, k = q % c
            row[2 * q] = Int16(first[min(max(x, 0), lastX) * c + k])
            row[2 * q + 1] = Int16(second[min(max(x + dc, 0), lastX) * c + k])
        }
        for q in 0..<(margin * c) { fill(q) }
        for q in (margin * c + vectorEnd)..<padded { fill(q) }
    }

    /// Output rows `rows` of `target`, with ring `slice`: for each block of 32 samples, the sum of every tap's pairs
    /// times its weights.
    func blur(_ source: Plane, into target: Plane, rows: Range<Int>, slice: Int) {
        if along {
            if horizontalMajor {
                blurAlongRows(source, into: target, rows: rows)
            } else {
                blurAlongColumns(source, into: target, rows: rows)
            }
            return
        }
        if let lineSums {
            lineSums.blur(source, into: target, rows: rows, slice: slice)
            return
        }
        let c = channels, samples = width * c
        let ring = rings + slice * ringRows * pairStride
        /// The ring's place of pair row r.
        @inline(__always) func place(_ r: Int) -> UnsafeMutablePointer<Int16> { ring + ((r + 1) % ringRows) * pairStride }
        /// The last pair row in the ring (rows start at −1).
        var added = -2
        let shift = SIMD8<Int32>(repeating: Int32(self.shift)), half = SIMD8<Int32>(repeating: Int32(1) << (self.shift - 1))
        taps.withUnsafeBufferPointer { taps in
            withUnsafeTemporaryAllocation(of: UnsafePointer<Int16>.self, capacity: taps.count) { starts in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { spare in
                    let spare = spare.baseAddress.unsafelyUnwrapped
                    for y in rows {
                        // The pair rows this output row reaches that are not in the ring yet.
                        let low = max(y + firstRow, -1), high = min(y + lastRow, height - 1)
                        var r = max(low, added + 1)
                        while r <= high {
                            pair(source, row: r, into: place(r))
                            r += 1
                        }
                        added = high
                        for (index, tap) in taps.enumerated() {
                            let row = min(max(y + tap.rows, -1), height - 1)
                            starts[index] = UnsafePointer(place(row) + 2 * (margin + tap.columns) * c)
                        }
                        let output = target.row(y)
                        for i in stride(from: 0, to: samples, by: 32) {
                            var sums = (half, half, half, half)
                            for index in 0..<taps.count {
                                let weights = Lanes16.alternating(taps[index].first, taps[index].second)
                                let pair = starts[index] + 2 * i
                                sums.0 &+= Lanes16.multiplyAddPairs(Lanes16.load(pair), weights)
                                sums.1 &+= Lanes16.multiplyAddPairs(Lanes16.load(pair + 16), weights)
                                sums.2 &+= Lanes16.multiplyAddPairs(Lanes16.load(pair + 32), weights)
                                sums.3 &+= Lanes16.multiplyAddPairs(Lanes16.load(pair + 48), weights)
                            }
                            let first = Lanes16.narrowing(sums.0 &>> shift, sums.1 &>> shift)
                            let second = Lanes16.narrowing(sums.2 &>> shift, sums.3 &>> shift)
                            if i + 32 <= samples {
                                Lanes16.narrow32(first, second, to: output + i)
                            } else {
                                Lanes16.narrow32(first, second, to: spare)
                                output.advanced(by: i).update(from: spare, count: samples - i)
                            }
                        }
                    }
                }
            }
        }
    }
}

extension PlaneMotionBlur {
    /// Slope 0 along x: per row and channel, a running sum of 2K+1 samples (clamped), its mean rounded half up by a
    /// multiply and shift (`RoundedDivision`). Constant cost per sample whatever the radius.
    fileprivate func blurAlongRows(_ source: Plane, into target: Plane, rows: Range<Int>) {
        let c = channels, k = steps, last = width - 1
        let division = RoundedDivision(by: UInt64(2 * k + 1))
        for y in rows {
            let input = UnsafePointer(source.row(y)), output = target.row(y)
            for channel in 0..<c {
                var sum = 0
                for s in -k...k { sum += Int(input[min(max(s, 0), last) * c + channel]) }
                for x in 0..<width {
                    output[x * c + channel] = UInt8(truncatingIfNeeded: division.quotient(UInt64(sum)))
                    sum += Int(input[min(x + k + 1, last) * c + channel]) - Int(input[max(x - k, 0) * c + channel])
                }
            }
        }
    }

    /// Slope 0 along y: running sums of 2K+1 rows (clamped) for every sample of the row, in 32-bit integers; the
    /// mean rounded half up through a Float reciprocal, exact because a mean of 2K+1 integers is never within
    /// 1/(4K+2) of a half and the Float error stays below 10⁻⁴.
    fileprivate func blurAlongColumns(_ source: Plane, into target: Plane, rows: Range<Int>) {
        guard let first = rows.first else { return }
        let samples = width * channels, k = steps, last = height - 1
        let inverse = 1 / Float(2 * k + 1)
        @inline(__always) func row(_ y: Int) -> UnsafePointer<UInt8> { UnsafePointer(source.row(min(max(y, 0), last))) }
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: samples) { sums in
            let sums = sums.baseAddress.unsafelyUnwrapped
            sums.update(repeating: 0, count: samples)
            for s in -k...k {
                let input = row(first + s)
                for i in 0..<samples { sums[i] &+= Int32(input[i]) }
            }
            for y in rows {
                let output = target.row(y)
                for i in 0..<samples { output[i] = UInt8(truncatingIfNeeded: Int32(Float(sums[i]) * inverse + 0.5)) }
                let entering = row(y + k + 1), leaving = row(y - k)
                for i in 0..<samples { sums[i] &+= Int32(entering[i]) &- Int32(leaving[i]) }
            }
        }
    }
}

/// Motion blur of one plane along a long off-axis line, at a cost that does not grow with the radius: running sums
/// along the line on a grid of `phases` sub-pixel offsets across it, then a linear mix of the two grid lines on either
/// side of each pixel's own line.
///
/// The line through a pixel is written in *line coordinates*: line rows j along the major axis (y when the line runs
/// along y; x otherwise, the plane's columns transposed into a ring as the window reaches them) and columns across it,
/// so sample s of the line through (row j, column x) lies at row j + s and column x + s·t. With z = x − j·t, that is
/// column z + ρ·t of row ρ = j + s: every pixel with the same z shares the same line. The grid holds, for every column
/// offset z = m + p/P (m an integer, p = 0…P−1), the sum over the window's 2K+1 rows of the bilinear sample of row ρ at
/// column z + ρ·t: R(m, p) = Σρ (1 − f)·A(m + n) + f·A(m + n + 1), where n and f are the integer part and fraction of
/// p/P + ρ·t (the same for every m, so each row is one `vpmaddwd` of 16-bit neighbour pairs per phase). Moving from
/// output row j to j + 1 adds the row entering the window and subtracts the one leaving it, in exact Int32 sums; each
/// pixel then mixes the two grid lines around its own z linearly (the fraction of z·P). Only the grid columns that the
/// current row's pixels read are kept up to date (a window of the row's width that slides by |t| per row); columns that
/// come into it are summed afresh over the whole window, 64 samples at a time.
///
/// Exact against the definition where the grid lines bracket no kink of the row's linear interpolation; where one does
/// (a fraction 1/P of the samples), that sample is off by at most |second difference across the line| / (4P). With
/// P = 16 (8 from K = 96 on) that keeps a long blur of random noise, the worst case for it, within one code of the
/// definition; against the grid evaluated exactly, the output is within half a code plus 255/8192 (weights are
/// integers summing to 2^12; the final mix is in Float).
final class PlaneLineSums: @unchecked Sendable {
    // Sendable: the tables are immutable; each slice works only in its own part of `scratch`, `bands` and `stages`.
    /// P: sub-pixel offsets of the grid across the line, 16, or 8 from K = 96 on (a longer line averages the error
    /// of each sample over more of them).
    let phases: Int
    /// The two weights of a bilinear sample are integers that sum to 2^12, so sums of up to 1001 samples stay below 2³¹.
    static let weightOne = 4096
    /// Grid columns summed afresh at a time when the window slides onto them, in blocks of 8 samples.
    static let chunkBlocks = 8
    let width: Int, height: Int, channels: Int
    let horizontalMajor: Bool
    /// t: columns across per row along.
    let slope: Double
    /// K: the line has 2K + 1 samples.
    let steps: Int
    /// Rows along the line (y when it runs along y, else x), and columns across it.
    let lineRows: Int, lineColumns: Int
    /// Per line row ρ = −K … lineRows + K: ⌊ρ·t⌋, and per phase p the extra shift (0 or 1) of p/P + ρ·t past it and
    /// the weight of the second neighbour (the first has 2^12 minus it).
    private let bases: [Int], extras: [Int], weights: [Int16]
    /// Int32 per phase in a slice's grid (blocks of 8 samples, plus slack for the last vector), and per slice.
    private let gridStride: Int, sliceScratch: Int
    /// Int16 of each of a slice's two pair rows.
    private let pairStride: Int
    private let scratch: UnsafeMutableRawPointer
    /// When the line runs along x: the most output rows a slice has (`SliceRunner` gives at most ⌈height / slices⌉),
    /// the plane rows its output rows reach either side (the line's reach across, |t|·K, a fresh chunk and a block),
    /// the plane rows a slice's band holds (its own plus the reach either side, at most the plane's), and the line
    /// rows a slice keeps transposed (`bands`).
    private let sliceRows: Int, reach: Int, bandRows: Int, ringRows: Int
    /// When the line runs along x, per slice: a ring of `ringRows` line rows (plane columns) of its band, transposed,
    /// and `tile` finished rows of the transposed output on their way back. Made once here for every frame.
    private let bands: UnsafeMutablePointer<UInt8>, stages: UnsafeMutablePointer<UInt8>

    init(width: Int, height: Int, channels: Int, steps: Int, slope: Double, horizontalMajor: Bool, slices: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        self.steps = steps
        self.slope = slope
        self.horizontalMajor = horizontalMajor
        (lineRows, lineColumns) = horizontalMajor ? (width, height) : (height, width)
        phases = steps >= 96 ? 8 : 16
        let p = phases, one = Double(Self.weightOne)
        var bases: [Int] = [], extras: [Int] = [], weights: [Int16] = []
        for rho in -steps...(lineRows + steps) {
            let base = (Double(rho) * slope).rounded(.down)
            bases.append(Int(base))
            for phase in 0..<p {
                let position = Double(rho) * slope + Double(phase) / Double(p)
                let lower = position.rounded(.down)
                extras.append(Int(lower - base))
                weights.append(Int16(((position - lower) * one).rounded()))
            }
        }
        (self.bases, self.extras, self.weights) = (bases, extras, weights)
        // A slice's grid spans at most the columns across plus |t| per row along, plus the mix's neighbour.
        let blocks = ((width + height + 4) * channels + 7) / 8 + 1
        gridStride = blocks * 8 + 32
        pairStride = 2 * (blocks * 8 + 2 * channels + 32)
        sliceScratch = p * gridStride * 4 + 2 * pairStride * 2 + (max(width, height) * channels + 32)
        let slices = max(slices, 1)
        scratch = .allocate(byteCount: sliceScratch * slices, alignment: 64)
        scratch.initializeMemory(as: UInt8.self, repeating: 0, count: sliceScratch * slices)
        sliceRows = (height + slices - 1) / slices
        reach = Int((Double(steps) * abs(slope)).rounded(.up)) + Self.chunkBlocks * 8 + 16
        bandRows = min(height, sliceRows + 2 * reach)
        // The window's 2K + 2 rows (it moves from j − K … j + K to j + 1 − K … j + 1 + K) and the rest of the last tile
        // transposed, up to 63 more, in whole tiles; at most the plane's width.
        ringRows = (min(2 * steps + 2 + Self.tile - 1, width) + Self.tile - 1) / Self.tile * Self.tile
        bands = .allocate(capacity: horizontalMajor ? ringRows * bandRows * channels * slices : 0)
        stages = .allocate(capacity: horizontalMajor ? Self.tile * sliceRows * channels * slices : 0)
    }

    deinit {
        scratch.deallocate()
        bands.deallocate()
        stages.deallocate()
    }

    /// Output rows `rows` of `target`, with scratch `slice`: one of the slices `SliceRunner(threads: slices)` makes of
    /// the plane's rows (at most ⌈height / slices⌉ of them).
    func blur(_ source: Plane, into target: Plane, rows: Range<Int>, slice: Int) {
        let c = channels
        guard !horizontalMajor else {
            guard !rows.isEmpty else { return }
            precondition(rows.count <= sliceRows, "PlaneLineSums: a slice of at most ⌈height / slices⌉ rows")
            // Line rows are the plane's columns; this slice's output rows are line columns. The plane's rows the slice
            // reaches are its band; the band's columns are transposed into the ring `tile` at a time, just before the
            // window reaches them. Rows are read in order (the clamped ones at either end are the oldest and the newest),
            // never more than 2K + 1 behind the newest, which the ring still holds.
            let first = max(0, rows.lowerBound - reach), last = min(height, rows.upperBound + reach)
            let band = bands + slice * ringRows * bandRows * c, bandRow = (last - first) * c
            let corner = UnsafePointer(source.row(first))
            var transposed = 0
            /// Line row ρ, transposing the tiles up to it first.
            func line(_ rho: Int) -> UnsafePointer<UInt8> {
                while transposed <= rho {
                    let count = min(Self.tile, width - transposed)
                    transposePixels(corner + transposed * c, stride: source.bytesPerRow, rows: last - first, columns: count,
                                    into: band + transposed % ringRows * bandRow, stride: bandRow)
                    transposed += count
                }
                return UnsafePointer(band + rho % ringRows * bandRow)
            }
            // Finished line rows (plane columns) wait in `stage`, `tile` at a time, and go out transposed.
            let stage = stages + slice * Self.tile * sliceRows * c, stageRow = rows.count * c
            var staged = 0..<0
            func flush() {
                transposePixels(UnsafePointer(stage), stride: stageRow, rows: staged.count, columns: rows.count,
                                into: target.row(rows.lowerBound) + staged.lowerBound * c, stride: target.bytesPerRow)
            }
            run(lines: 0..<width, columns: rows, origin: first, slice: slice, row: line) { u, values in
                if staged.count == Self.tile { flush(); staged = u..<u }
                if staged.isEmpty { staged = u..<u }
                (stage + (u - staged.lowerBound) * stageRow).update(from: values, count: stageRow)
                staged = staged.lowerBound..<(u + 1)
            }
            flush()
            return
        }
        run(lines: rows, columns: 0..<width, origin: 0, slice: slice, row: { UnsafePointer(source.row($0)) }) { y, values in
            target.row(y).update(from: values, count: width * c)
        }
    }

    /// Line rows transposed into a slice's ring at a time, rows of the output that wait for their transpose back, and
    /// source rows that `transposePixels` moves at a time.
    static let tile = 64

    /// Transposes pixels: pixel x of source row r (at `source` + r·`sourceStride`) to pixel r of target row x (at
    /// `target` + x·`targetStride`), for r < `rows` and x < `columns`. Squares of n × n pixels (n = 16 / channels,
    /// sixteen bytes a row) go through registers (`transposeSquare`), `tile` source rows at a time across all the
    /// columns: each step completes whole 64-byte lines of its n target rows and reads the next sixteen bytes of source
    /// lines that the step before left in the first-level cache. The pixels that do not fill a square go one by one.
    private func transposePixels(_ source: UnsafePointer<UInt8>, stride sourceStride: Int, rows: Int, columns: Int,
                                 into target: UnsafeMutablePointer<UInt8>, stride targetStride: Int) {
        let c = channels, n = 16 / c
        let wholeRows = rows / n * n, wholeColumns = columns / n * n
        /// Every whole square, with pixels of `pixelBytes` (a constant in each call below, so each has its own rounds).
        @inline(__always) func squares(pixelBytes: Int) {
            for top in stride(from: 0, to: wholeRows, by: Self.tile) {
                let bottom = min(top + Self.tile, wholeRows)
                for x in stride(from: 0, to: wholeColumns, by: n) {
                    for r in stride(from: top, to: bottom, by: n) {
                        transposeSquare(source + r * sourceStride + x * c, sourceStride, target + x * targetStride + r * c,
                                        targetStride, pixelBytes: pixelBytes)
                    }
                }
            }
        }
        switch c {
        case 1: squares(pixelBytes: 1)
        case 2: squares(pixelBytes: 2)
        default: squares(pixelBytes: 4)
        }
        // The columns past the last whole square, then the rows past it.
        for r in 0..<rows {
            for x in (r < wholeRows ? wholeColumns : 0)..<columns {
                for k in 0..<c { target[x * targetStride + r * c + k] = source[r * sourceStride + x * c + k] }
            }
        }
    }

    /// The grid offset of line row j: z = x − j·t = x + m + (p + w)/P for every column x.
    @inline(__always) private func offset(_ j: Int) -> (m: Int, p: Int, w: Float) {
        let v = -Double(j) * slope * Double(phases)
        let whole = v.rounded(.down), k = Int(whole)
        let m = k >= 0 ? k / phases : -((-k + phases - 1) / phases)
        return (m, k - m * phases, Float(v - whole))
    }

    /// Blurs line rows `lines` at line columns `columns`, reading line row ρ (0…lineRows − 1) through `row` (line
    /// column x at `(x − origin)·channels`) and handing each finished line row's samples to `emit`.
    private func run(lines: Range<Int>, columns: Range<Int>, origin: Int, slice: Int,
                     row: (Int) -> UnsafePointer<UInt8>, emit: (Int, UnsafePointer<UInt8>) -> Void) {
        guard let firstLine = lines.first, let lastLine = lines.last, !columns.isEmpty else { return }
        let c = channels, p = phases, k = steps, one = Self.weightOne
        let base = scratch + slice * sliceScratch
        let grid = base.assumingMemoryBound(to: Int32.self)
        let entering = (base + p * gridStride * 4).assumingMemoryBound(to: Int16.self), leaving = entering + pairStride
        let line = (base + p * gridStride * 4 + 2 * pairStride * 2).assumingMemoryBound(to: UInt8.self)
        @inline(__always) func phase(_ q: Int) -> UnsafeMutablePointer<Int32> { grid + q * gridStride }
        // Grid columns are numbered from the lowest any row of this run reads; blocks of 8 samples from there.
        let (start, end) = (offset(firstLine).m, offset(lastLine).m)
        let lowest = columns.lowerBound + min(start, end)
        let totalBlocks = ((columns.upperBound + max(start, end) + 1 - lowest) * c + 7) / 8
        let lastColumn = lineColumns - 1, lastRow = lineRows - 1
        let scale = 1 / Float(one * (2 * k + 1))

        /// Pairs (A(x), A(x + 1)) of line row ρ, x = the grid column of each sample plus ⌊ρ·t⌋, for the samples of
        /// blocks from `block` on (`count` samples plus one pixel for a phase's extra shift), columns clamped.
        func pairs(_ rho: Int, block: Int, count: Int, into target: UnsafeMutablePointer<Int16>) {
            let input = row(min(max(rho, 0), lastRow))
            let first = lowest + block * 8 / c + bases[rho + k]
            let total = count + c
            // Samples whose pixel x and x + 1 both lie inside the row go sixteen at a time.
            let vectorStart = min(max(0, -first) * c, total)
            let vectorEnd = max(vectorStart, min(total, (lastColumn - first) * c))
            var done = vectorStart
            while done + 16 <= vectorEnd {
                let at = input + (first - origin) * c + done
                let (low, high) = Lanes16.zipWidened(at, at + c)
                let pointer = UnsafeMutableRawPointer(target + 2 * done).assumingMemoryBound(to: UInt8.self)
                Lanes16.store(low, to: pointer)
                Lanes16.store(high, to: pointer + 32)
                done += 16
            }
            // The last few inside the row one by one.
            for i in done..<vectorEnd {
                let at = input + (first - origin) * c + i
                (target[2 * i], target[2 * i + 1]) = (Int16(at[0]), Int16(at[c]))
            }
            /// Samples `range` at or beyond an edge: pixel `edge` paired with itself, eight samples per store.
            @inline(__always) func clamped(_ range: Range<Int>, edge: Int) {
                guard !range.isEmpty else { return }
                var pattern = SIMD8<UInt32>()
                for lane in 0..<8 {
                    let value = UInt32(input[(edge - origin) * c + (range.lowerBound + lane) % c])
                    pattern[lane] = value | value << 16
                }
                var i = range.lowerBound
                while i + 8 <= range.upperBound {
                    UnsafeMutableRawPointer(target + 2 * i).storeBytes(of: pattern, as: SIMD8<UInt32>.self)
                    i += 8
                }
                for lane in 0..<(range.upperBound - i) {
                    target[2 * (i + lane)] = Int16(pattern[lane] & 0xFF)
                    target[2 * (i + lane) + 1] = Int16(pattern[lane] & 0xFF)
                }
            }
            clamped(0..<vectorStart, edge: 0)
            clamped(vectorEnd..<total, edge: lastColumn)
        }

        /// Grid blocks `blocks` summed afresh over the window of line row j.
        func fresh(_ blocks: Range<Int>, at j: Int) {
            guard !blocks.isEmpty else { return }
            for q in 0..<p { phase(q).advanced(by: blocks.lowerBound * 8).update(repeating: 0, count: blocks.count * 8) }
            let count = blocks.count * 8
            for rho in (j - k)...(j + k) {
                pairs(rho, block: blocks.lowerBound, count: count, into: entering)
                let table = (rho + k) * p
                for q in 0..<p {
                    let weights = Lanes16.alternating(Int16(one) - self.weights[table + q], self.weights[table + q])
                    let pairs = entering + 2 * extras[table + q] * c, sums = phase(q) + blocks.lowerBound * 8
                    for i in stride(from: 0, to: count, by: 8) {
                        let sum = UnsafeMutableRawPointer(sums + i)
                        sum.storeBytes(of: sum.loadUnaligned(as: SIMD8<Int32>.self)
                                       &+ Lanes16.multiplyAddPairs(Lanes16.load(UnsafePointer(pairs + 2 * i)), weights),
                                       as: SIMD8<Int32>.self)
                    }
                }
            }
        }

        /// Grid blocks `blocks` moved from the window of line row j to that of j + 1.
        func advance(_ blocks: Range<Int>, from j: Int) {
            guard !blocks.isEmpty else { return }
            let count = blocks.count * 8
            let enter = j + k + 1, leave = j - k
            pairs(enter, block: blocks.lowerBound, count: count, into: entering)
            pairs(leave, block: blocks.lowerBound, count: count, into: leaving)
            let enterTable = (enter + k) * p, leaveTable = (leave + k) * p
            // Phase by phase, so each phase's sums stream through once with the pair rows in cache.
            for q in 0..<p {
                let a = self.weights[enterTable + q], b = self.weights[leaveTable + q]
                let added = Lanes16.alternating(Int16(one) - a, a), removed = Lanes16.alternating(Int16(one) - b, b)
                let enter = UnsafePointer(entering + 2 * extras[enterTable + q] * c)
                let leave = UnsafePointer(leaving + 2 * extras[leaveTable + q] * c)
                let sums = phase(q) + blocks.lowerBound * 8
                var i = 0
                while i < count {
                    let sum = UnsafeMutableRawPointer(sums + i)
                    let change = Lanes16.multiplyAddPairs(Lanes16.load(enter + 2 * i), added)
                        &- Lanes16.multiplyAddPairs(Lanes16.load(leave + 2 * i), removed)
                    sum.storeBytes(of: sum.loadUnaligned(as: SIMD8<Int32>.self) &+ change, as: SIMD8<Int32>.self)
                    i += 8
                }
            }
        }

        var kept = 0..<0
        let samples = columns.count * c
        for j in lines {
            let (m, q, w) = offset(j)
            // The grid samples this row reads: pixels x + m and x + m + 1 for x in `columns`.
            let needed = ((columns.lowerBound + m - lowest) * c / 8)..<(((columns.upperBound + m + 1 - lowest) * c + 7) / 8)
            if kept.isEmpty {
                kept = needed
                fresh(kept, at: j)
            } else {
                if needed.lowerBound < kept.lowerBound {
                    let from = max(0, min(needed.lowerBound, kept.lowerBound - Self.chunkBlocks))
                    fresh(from..<kept.lowerBound, at: j)
                    kept = from..<kept.upperBound
                }
                if needed.upperBound > kept.upperBound {
                    let to = min(totalBlocks, max(needed.upperBound, kept.upperBound + Self.chunkBlocks))
                    fresh(kept.upperBound..<to, at: j)
                    kept = kept.lowerBound..<to
                }
                // The window only slides one way: what falls behind it is never read again.
                kept = slope > 0 ? kept.lowerBound..<needed.upperBound : needed.lowerBound..<kept.upperBound
            }
            // The mix of grid lines (m, q) and the next one, (m, q + 1) or (m + 1, 0).
            let first = phase(q) + (columns.lowerBound + m - lowest) * c
            let second = q + 1 < p ? phase(q + 1) + (columns.lowerBound + m - lowest) * c
                                   : phase(0) + (columns.lowerBound + m + 1 - lowest) * c
            let a = SIMD8<Float>(repeating: (1 - w) * scale), b = SIMD8<Float>(repeating: w * scale)
            /// Eight mixed samples from i, rounded half up.
            @inline(__always) func mixed(_ i: Int) -> SIMD8<Float> {
                let x = SIMD8<Float>(UnsafeRawPointer(first + i).loadUnaligned(as: SIMD8<Int32>.self))
                let y = SIMD8<Float>(UnsafeRawPointer(second + i).loadUnaligned(as: SIMD8<Int32>.self))
                return x * a + y * b + 0.5
            }
            var i = 0
            while i < samples {
                Lanes16.narrow16(Lanes16.truncating(mixed(i), mixed(i + 8)), to: line + i)
                i += 16
            }
            emit(j, UnsafePointer(line))
            if j < lastLine { advance(kept, from: j) }
        }
    }
}

/// The stage of `zoom-blur`: `PlaneZoomBlur` per plane, into a pool buffer.
final class ZoomBlurProcessor: VideoProcessor {
    /// The format `configure` sized the buffers for.
    private var configured: FrameFormat?
    let center: FilterPoint, amount: Double
    let slices: SliceRunner
    private var planes: [PlaneZoomBlur] = []
    private var pool: BufferPool?

    init(center: FilterPoint, amount: Double, slices: SliceRunner) {
        self.center = center
        self.amount = amount
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        let format = input.pixelFormat
        let halfDiagonal = (Double(input.width * input.width + input.height * input.height)).squareRoot() / 2
        planes = (0..<format.planeCount).map { index in
            let size = format.planeSize(index, width: input.width, height: input.height)
            return PlaneZoomBlur(width: size.width, height: size.height, channels: format.bytesPerPixel(plane: index),
                                 center: (center.x * Double(size.width), center.y * Double(size.height)),
                                 totalScale: max(0, 1 - amount / halfDiagonal), samples: Int(amount.rounded(.up)) + 1,
                                 slices: slices.threads)
        }
        pool = BufferPool(format: format, width: input.width, height: input.height, capacity: 4)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "zoom-blur")
        guard amount > 0 else { return frame }
        return blurredPlanes(frame, pool: pool, slices: slices) { index, plane, target, rows, slice in
            planes[index].run(plane, into: target, rows: rows, slice: slice)
        }
    }

    func release() {
        planes = []
        pool = nil
    }
}

/// Zoom blur of one plane (see `FilterSpec.zoomBlur`): pass k averages the previous result with itself scaled
/// about the centre by `s^(2ᵏ)`, sampled bilinearly with clamped coordinates.
///
/// Rows of every pass are 16-bit samples holding 128 × the value (seven bits below the byte). Scaling about a point is
/// separable: a source row depends only on the output row and a source column only on the output column, so each
/// pass's rows and columns are tables made at configure time. An output row is the vertical mix of its two source rows
/// into a 16-bit row buffer, then the horizontal mix of that buffer, both sixteen samples at a time in 16-bit lanes as
/// a + (b − a)·w with the weight in Q15 (`vpmulhrsw`, rounded). With a scale of at most 1 the lower neighbours of
/// eight consecutive output samples lie within eight consecutive samples of the row (for one, two or four channels),
/// so each 128-bit half of a block of sixteen is one load from its first lower neighbour and one byte shuffle
/// (`vpshufb`, controls made at configure time), and the upper neighbours the same from `channels` further. The
/// average with the previous result is `vpavgw`, ⌊(a + b + 1) / 2⌋. Each mix errs by less than one last bit (½ from
/// its rounding, ½ from the Q15 weight) and the average halves that and rounds by ½ more, so a pass moves a result
/// by less than 3/256 of a code and n passes by less than 3n/256 (0.11 of a code for the nine passes of amount 300).
///
/// The passes run as a pipeline of rows, not plane after plane. Row y of a pass needs rows y, lower(y) and upper(y)
/// of the one before; those never lie above the lowest row that any later row needs, and never below the highest one
/// reached so far. So each pass keeps its rows in a ring just deep enough for that window (a few rows when the scale is
/// near 1), computes a row only when the next pass asks for it, and the whole pipeline works in cache: the frame is
/// read once and written once, whatever the number of passes.
final class PlaneZoomBlur: @unchecked Sendable {
    // Sendable: the tables are immutable; each slice works in its own part of `scratch`.
    let width: Int, height: Int, channels: Int
    let center: (x: Double, y: Double)
    /// Scale of each pass: s, s², s⁴, …
    let scales: [Float]
    private let samples: Int
    /// Per pass, for each output row: the two source rows and the upper one's weight.
    private let rowTaps: [[RowTap]]
    /// Per pass, for each output sample: the sample of the row buffer that is its lower neighbour, and the upper
    /// neighbour's weight in Q15 (the upper neighbour is `channels` further on).
    private let columnSources: [[Int32]], columnWeights: [[Int16]]
    /// Per pass: whether every block of eight output samples finds its lower neighbours within eight samples.
    private let permutable: [Bool]
    /// Per permutable pass, for each output sample up to the last whole block of sixteen: the `vpshufb` control
    /// (two bytes, little-endian) that brings its lower neighbour to its lane from the eight samples loaded at its
    /// block of eight's first source. Empty for the other passes.
    private let columnShuffles: [[Int16]]
    /// Rows of each ring: ring 0 holds source rows (× 128), ring k + 1 the rows of pass k.
    private let ringRows: [Int]
    /// Where each ring starts in a slice's scratch, and the Int16 per slice.
    private let ringStarts: [Int], sliceScratch: Int
    private let scratch: UnsafeMutablePointer<Int16>

    struct RowTap {
        let lower: Int, upper: Int
        /// The upper row's weight in Q15, for `vpmulhrsw`.
        let weight: Int16
    }

    init(width: Int, height: Int, channels: Int, center: (Double, Double), totalScale: Double, samples: Int, slices: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        self.center = center
        var passes = 0
        while (1 << passes) < samples { passes += 1 }
        let step = passes == 0 ? 1 : pow(totalScale, 1 / Double((1 << passes) - 1))
        let scales = (0..<passes).map { Float(pow(step, Double(1 << $0))) }
        self.scales = scales
        let c = channels, count = width * channels
        self.samples = count
        /// The lower neighbour, the upper one (clamped) and the upper one's weight of each output position.
        func taps(count: Int, centre: Double, scale: Float) -> [(lower: Int, upper: Int, weight: Float)] {
            let centre = Float(centre) - 0.5, last = Float(count - 1)
            return (0..<count).map { i in
                let position = min(max(centre + (Float(i) - centre) * scale, 0), last)
                let lower = Int(position)
                return (lower, min(lower + 1, count - 1), position - Float(lower))
            }
        }
        let rowTaps = scales.map { scale in
            taps(count: height, centre: center.1, scale: scale).map {
                RowTap(lower: $0.lower, upper: $0.upper, weight: Int16(min(($0.weight * 32768).rounded(), 32767)))
            }
        }
        self.rowTaps = rowTaps
        let columns = scales.map { taps(count: width, centre: center.0, scale: $0) }
        columnSources = columns.map { taps in (0..<count).map { Int32(taps[$0 / c].lower * c + $0 % c) } }
        columnWeights = columns.map { taps in (0..<count).map { Int16(min((taps[$0 / c].weight * 32768).rounded(), 32767)) } }
        let permutable = columnSources.map { sources in
            stride(from: 0, to: count / 8 * 8, by: 8).allSatisfy { sources[$0 + 7] - sources[$0] <= 7 }
        }
        self.permutable = permutable
        columnShuffles = zip(columnSources, permutable).map { sources, permutable in
            guard permutable else { return [] }
            return (0..<(count / 16 * 16)).map { i in
                let lane = Int16(sources[i] - sources[i / 8 * 8])
                return 2 * lane | (2 * lane + 1) << 8
            }
        }
        // Ring k feeds pass k: it must hold every window of rows one output row of that pass reads.
        let ringRows = rowTaps.map { taps in
            taps.indices.reduce(1) { deepest, y in max(deepest, max(taps[y].upper, y) - min(taps[y].lower, y) + 1) }
        } + [1]
        self.ringRows = ringRows
        ringStarts = ringRows.indices.map { k in ringRows[..<k].reduce(0, +) * count }
        sliceScratch = ringRows.reduce(0, +) * count
        scratch = .allocate(capacity: sliceScratch * max(slices, 1))
    }

    deinit { scratch.deallocate() }

    /// Output rows `rows` of `target` from `source`, with scratch `slice`.
    func run(_ source: Plane, into target: Plane, rows: Range<Int>, slice: Int) {
        let passes = scales.count, samples = self.samples, whole = samples / 16 * 16
        let scratch = self.scratch + slice * sliceScratch
        /// Row r of ring k.
        @inline(__always) func ring(_ k: Int, _ r: Int) -> UnsafeMutablePointer<Int16> {
            scratch + ringStarts[k] + (r % ringRows[k]) * samples
        }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: passes + 1) { frontier in
            // The last row each ring holds. The first row each needs: the first output row, and for each earlier
            // ring the lowest row the first needed row of the next one reads.
            var first = rows.lowerBound
            frontier[passes] = first - 1
            for k in stride(from: passes - 1, through: 0, by: -1) {
                first = min(first, rowTaps[k][first].lower)
                frontier[k] = first - 1
            }
            // Eight samples are loaded from up to channels + 7 past the last one.
            withUnsafeTemporaryAllocation(of: Int16.self, capacity: samples + 16) { mixed in
                let mixed = mixed.baseAddress.unsafelyUnwrapped
                for i in samples..<(samples + 16) { mixed[i] = 0 }
                /// Fills ring k up to row r, asking the rings before it for what each row needs.
                func fill(_ k: Int, upTo r: Int) {
                    while frontier[k] < r {
                        let y = frontier[k] + 1
                        if k == 0 {
                            let input = source.row(y), row = ring(0, y)
                            for i in stride(from: 0, to: whole, by: 16) {
                                Lanes16.store(Lanes16.shiftLeft(Lanes16.widen16(input + i), 7), to: bytes(row + i))
                            }
                            for i in whole..<samples { row[i] = Int16(input[i]) << 7 }
                        } else {
                            let tap = rowTaps[k - 1][y]
                            fill(k - 1, upTo: max(tap.upper, y))
                            pass(k - 1, tap: tap, top: ring(k - 1, tap.lower), bottom: ring(k - 1, tap.upper),
                                 here: ring(k - 1, y), output: ring(k, y), mixed: mixed)
                        }
                        frontier[k] = y
                    }
                }
                for y in rows {
                    fill(passes, upTo: y)
                    let output = target.row(y), result = ring(passes, y)
                    // Rounded half up: ⌊v/128 + ½⌋.
                    for i in stride(from: 0, to: whole, by: 16) {
                        let values = Lanes16.load(UnsafePointer(result + i))
                        Lanes16.narrow16(Lanes16.shiftRight(Lanes16.addSaturating(values, Lanes16.splat(64)), 7), to: output + i)
                    }
                    for i in whole..<samples { output[i] = UInt8((Int(result[i]) + 64) >> 7) }
                }
            }
        }
    }

    /// One output row of pass `pass`: the vertical mix of `top` and `bottom` into `mixed`, then the horizontal mix,
    /// averaged with `here`, into `output`. Both mixes are a + ⌊(b − a)·w / 2¹⁵ + ½⌋ with the weight w in Q15, and the
    /// average is ⌊(here + mix + 1) / 2⌋, in 16-bit lanes or lane by lane alike.
    private func pass(_ pass: Int, tap: RowTap, top: UnsafeMutablePointer<Int16>, bottom: UnsafeMutablePointer<Int16>,
                      here: UnsafeMutablePointer<Int16>, output: UnsafeMutablePointer<Int16>,
                      mixed: UnsafeMutablePointer<Int16>) {
        let c = channels, samples = self.samples, whole = samples / 16 * 16
        let weight = Lanes16.splat(tap.weight)
        for i in stride(from: 0, to: whole, by: 16) {
            let a = Lanes16.load(UnsafePointer(top + i)), b = Lanes16.load(UnsafePointer(bottom + i))
            Lanes16.store(Lanes16.add(a, Lanes16.multiplyHighRounded(Lanes16.subtract(b, a), weight)), to: mixed + i)
        }
        for i in whole..<samples {
            let a = Int32(top[i]), b = Int32(bottom[i])
            mixed[i] = Int16(a + (((b - a) * Int32(tap.weight) + 0x4000) >> 15))
        }
        columnSources[pass].withUnsafeBufferPointer { sources in
            columnWeights[pass].withUnsafeBufferPointer { weights in
                let sources = sources.baseAddress.unsafelyUnwrapped, weights = weights.baseAddress.unsafelyUnwrapped
                var done = 0
                if permutable[pass] {
                    columnShuffles[pass].withUnsafeBufferPointer { shuffles in
                        let shuffles = shuffles.baseAddress.unsafelyUnwrapped
                        for i in stride(from: 0, to: whole, by: 16) {
                            // Each half's eight lower neighbours lie within the eight samples from its first one.
                            let low = UnsafePointer(mixed + Int(sources[i])), high = UnsafePointer(mixed + Int(sources[i + 8]))
                            let control = Lanes16.load(shuffles + i)
                            let a = Lanes16.shuffleBytes(Lanes16.load(low: low, high: high), control)
                            let b = Lanes16.shuffleBytes(Lanes16.load(low: low + c, high: high + c), control)
                            let mix = Lanes16.add(a, Lanes16.multiplyHighRounded(Lanes16.subtract(b, a), Lanes16.load(weights + i)))
                            Lanes16.store(Lanes16.average(Lanes16.load(UnsafePointer(here + i)), mix), to: output + i)
                        }
                    }
                    done = whole
                }
                for i in done..<samples {
                    let source = Int(sources[i])
                    let a = Int32(mixed[source]), b = Int32(mixed[source + c])
                    let mix = a + (((b - a) * Int32(weights[i]) + 0x4000) >> 15)
                    output[i] = Int16((Int32(here[i]) + mix + 1) >> 1)
                }
            }
        }
    }
}

/// Sixteen, eight and four rows of sixteen bytes: the rows of a square of pixels of one, two and four bytes.
private typealias Rows16 = (SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>,
                            SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>,
                            SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>)
private typealias Rows8 = (SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>,
                           SIMD16<UInt8>, SIMD16<UInt8>)
private typealias Rows4 = (SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>, SIMD16<UInt8>)

/// Transposes the square of n × n pixels of `pixelBytes` bytes (n = 16 / pixelBytes) whose row i is the sixteen bytes at
/// `source` + i·`sourceStride`: afterwards row j, at `target` + j·`targetStride`, holds pixel j of every source row in
/// order. Each of log₂n rounds (`interleavingRound`) interleaves rows i and i + n/2 pixel by pixel into rows 2i and
/// 2i + 1, which moves the pixel in row r, column k to the row whose bits are r's but the top one followed by k's top
/// one, and the column likewise: after log₂n rounds row and column have traded places. The rows stay in registers.
@inline(__always) private func transposeSquare(_ source: UnsafePointer<UInt8>, _ sourceStride: Int, _ target: UnsafeMutablePointer<UInt8>,
                                               _ targetStride: Int, pixelBytes: Int) {
    @inline(__always) func row(_ i: Int) -> SIMD16<UInt8> { UnsafeRawPointer(source + i * sourceStride).loadUnaligned(as: SIMD16<UInt8>.self) }
    @inline(__always) func store(_ j: Int, _ v: SIMD16<UInt8>) {
        UnsafeMutableRawPointer(target + j * targetStride).storeBytes(of: v, as: SIMD16<UInt8>.self)
    }
    switch pixelBytes {
    case 1:
        var a: Rows16 = (row(0), row(1), row(2), row(3), row(4), row(5), row(6), row(7),
                         row(8), row(9), row(10), row(11), row(12), row(13), row(14), row(15))
        a = interleavingRound(interleavingRound(interleavingRound(interleavingRound(a))))
        store(0, a.0); store(1, a.1); store(2, a.2); store(3, a.3); store(4, a.4); store(5, a.5); store(6, a.6); store(7, a.7)
        store(8, a.8); store(9, a.9); store(10, a.10); store(11, a.11); store(12, a.12); store(13, a.13); store(14, a.14)
        store(15, a.15)
    case 2:
        var a: Rows8 = (row(0), row(1), row(2), row(3), row(4), row(5), row(6), row(7))
        a = interleavingRound(interleavingRound(interleavingRound(a)))
        store(0, a.0); store(1, a.1); store(2, a.2); store(3, a.3); store(4, a.4); store(5, a.5); store(6, a.6); store(7, a.7)
    default:
        var a: Rows4 = (row(0), row(1), row(2), row(3))
        a = interleavingRound(interleavingRound(a))
        store(0, a.0); store(1, a.1); store(2, a.2); store(3, a.3)
    }
}

/// One round of `transposeSquare` on sixteen rows of one-byte pixels: rows i and i + 8 interleaved into 2i and 2i + 1.
@inline(__always) private func interleavingRound(_ a: Rows16) -> Rows16 {
    (interleaved(a.0, a.8, high: false, pixelBytes: 1), interleaved(a.0, a.8, high: true, pixelBytes: 1),
     interleaved(a.1, a.9, high: false, pixelBytes: 1), interleaved(a.1, a.9, high: true, pixelBytes: 1),
     interleaved(a.2, a.10, high: false, pixelBytes: 1), interleaved(a.2, a.10, high: true, pixelBytes: 1),
     interleaved(a.3, a.11, high: false, pixelBytes: 1), interleaved(a.3, a.11, high: true, pixelBytes: 1),
     interleaved(a.4, a.12, high: false, pixelBytes: 1), interleaved(a.4, a.12, high: true, pixelBytes: 1),
     interleaved(a.5, a.13, high: false, pixelBytes: 1), interleaved(a.5, a.13, high: true, pixelBytes: 1),
     interleaved(a.6, a.14, high: false, pixelBytes: 1), interleaved(a.6, a.14, high: true, pixelBytes: 1),
     interleaved(a.7, a.15, high: false, pixelBytes: 1), interleaved(a.7, a.15, high: true, pixelBytes: 1))
}

/// One round on eight rows of two-byte pixels: rows i and i + 4 interleaved into 2i and 2i + 1.
@inline(__always) private func interleavingRound(_ a: Rows8) -> Rows8 {
    (interleaved(a.0, a.4, high: false, pixelBytes: 2), interleaved(a.0, a.4, high: true, pixelBytes: 2),
     interleaved(a.1, a.5, high: false, pixelBytes: 2), interleaved(a.1, a.5, high: true, pixelBytes: 2),
     interleaved(a.2, a.6, high: false, pixelBytes: 2), interleaved(a.2, a.6, high: true, pixelBytes: 2),
     interleaved(a.3, a.7, high: false, pixelBytes: 2), interleaved(a.3, a.7, high: true, pixelBytes: 2))
}

/// One round on four rows of four-byte pixels: rows i and i + 2 interleaved into 2i and 2i + 1.
@inline(__always) private func interleavingRound(_ a: Rows4) -> Rows4 {
    (interleaved(a.0, a.2, high: false, pixelBytes: 4), interleaved(a.0, a.2, high: true, pixelBytes: 4),
     interleaved(a.1, a.3, high: false, pixelBytes: 4), interleaved(a.1, a.3, high: true, pixelBytes: 4))
}

/// The pixels of `pixelBytes` bytes (1, 2 or 4) of the low (or high) halves of `a` and `b`, interleaved: a₀ b₀ a₁ b₁ …
@inline(__always) private func interleaved(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>, high: Bool, pixelBytes: Int) -> SIMD16<UInt8> {
    switch pixelBytes {
    case 1:
        return high ? SIMD16(a[8], b[8], a[9], b[9], a[10], b[10], a[11], b[11], a[12], b[12], a[13], b[13], a[14], b[14], a[15], b[15])
                    : SIMD16(a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3], a[4], b[4], a[5], b[5], a[6], b[6], a[7], b[7])
    case 2:
        let (x, y) = (unsafeBitCast(a, to: SIMD8<UInt16>.self), unsafeBitCast(b, to: SIMD8<UInt16>.self))
        let zipped = high ? SIMD8(x[4], y[4], x[5], y[5], x[6], y[6], x[7], y[7]) : SIMD8(x[0], y[0], x[1], y[1], x[2], y[2], x[3], y[3])
        return unsafeBitCast(zipped, to: SIMD16<UInt8>.self)
    default:
        let (x, y) = (unsafeBitCast(a, to: SIMD4<UInt32>.self), unsafeBitCast(b, to: SIMD4<UInt32>.self))
        return unsafeBitCast(high ? SIMD4(x[2], y[2], x[3], y[3]) : SIMD4(x[0], y[0], x[1], y[1]), to: SIMD16<UInt8>.self)
    }
}

/// A pointer to 16-bit samples as the byte pointer `Lanes16`'s stores take.
@inline(__always) private func bytes(_ pointer: UnsafeMutablePointer<Int16>) -> UnsafeMutablePointer<UInt8> {
    UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
}
