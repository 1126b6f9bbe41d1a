import VFXCore

/// Where a blur puts its result: sixteen consecutive blurred samples of one row at a time.
///
/// The plain writer stores them as bytes; unsharp mask, bloom and gloom combine them with the original
/// sample at the same place (read just before it is overwritten, so blurring in place is fine); vignette can
/// darken them on the way out. The writer is a generic parameter, so each combination is compiled into the
/// blur's last pass with no call per sample.
protocol BlurredRowWriter: Sendable {
    /// Receives the blurred samples `index ..< index + count` of row `y` (sample = byte offset in the row:
    /// `x * channels + channel`). Lanes past `count` are padding and must not be written.
    func write(_ blurred: SIMD16<Float>, row y: Int, at index: Int, count: Int)
}

/// Stores blurred samples into a plane as bytes, rounded to nearest and clamped to 0…255.
///
/// The clamp is the standard library's `pointwiseMin`/`Max`, specialized in this module (`vminps`/`vmaxps`), and the
/// narrowing a lane loop written here (a few byte shuffles); VFXCore's `storeBytes`, a compare-and-blend clamp, arrives
/// here as compares, mask packs and blends, and the standard library's vector `init(truncatingIfNeeded:)` as a call:
/// in the blur's last pass, which stores every byte of the frame, that cost it about a tenth of its time.
struct StoreBlurred: BlurredRowWriter {
    let target: Plane

    @inline(__always)
    func write(_ blurred: SIMD16<Float>, row y: Int, at index: Int, count: Int) {
        let clamped = pointwiseMax(pointwiseMin(blurred, SIMD16(repeating: 255)), SIMD16(repeating: 0))
        // Adding 2²³ leaves the rounded integer in the low mantissa bits.
        let bits = unsafeBitCast(clamped + 8_388_608, to: SIMD16<UInt32>.self)
        var bytes = SIMD16<UInt8>()
        for lane in 0..<16 { bytes[lane] = UInt8(truncatingIfNeeded: bits[lane]) }
        let output = target.row(y) + index
        if count == 16 {
            output.store(bytes)
        } else {
            for lane in 0..<count { output[lane] = bytes[lane] }
        }
    }
}

/// A Gaussian blur of one plane at its own resolution, for any plane layout VideoFX has: one sample per
/// pixel (gray, I420's planes, NV12's luma), two (NV12's interleaved chroma) or four (RGBA, BGRA). Every
/// channel is blurred on its own; edges repeat the border sample.
///
/// The recursion (`RecursiveGaussian`) runs in two passes, each forward then backward:
/// - horizontal: sixteen lanes hold sixteen rows (or 8 rows × 2 channels, 4 rows × 4 channels) so the
///   recursion along a row runs in SIMD; the result goes to a float scratch plane;
/// - vertical: sixteen neighbouring columns per SIMD vector, row after row, in place in the scratch plane.
///
/// From σ = 2.5 the plane is first averaged down by `factor` f (2; 4 from σ = 8; 8 from σ = 16) in both
/// directions, blurred there with σ' = √(σ²/f² − ¼), and interpolated back up bilinearly: the box
/// (variance (f²−1)/12) and the interpolation (≈ f²/6) make up the rest of σ². On media/astronaut.png the
/// result stays within 42–47 dB of the exact full-resolution Gaussian (docs/filters-spatial.md) and costs a
/// fraction of it.
///
/// Scratch memory is made once here; `blur` allocates nothing. Work is split `slices` ways over rows
/// (horizontal passes) or columns (vertical pass).
///
/// ```swift
/// let blur = PlaneBlur(width: 1920, height: 1080, channels: 1, sigma: 5, slices: 2)
/// blur.blur(source: plane, into: StoreBlurred(target: plane))   // in place
/// ```
final class PlaneBlur: @unchecked Sendable {
    // Sendable: all buffers are owned by this object; `blur` is called by one thread at a time (the
    // processor contract) and its slices touch disjoint rows or columns of them.
    let pixelsPerRow: Int
    let height: Int
    let channels: Int
    let slices: Int
    /// How much the plane is reduced before the recursion (1 = not at all).
    let factor: Int
    let gaussian: RecursiveGaussian
    /// Samples per row at full resolution (`pixelsPerRow * channels`).
    private let samplesPerRow: Int
    /// Size of the plane the recursion runs on (reduced by `factor`).
    private let lowPixels: Int, lowHeight: Int, lowSamples: Int
    /// The recursion's float plane, `lowHeight` rows of `scratchStride` floats (a multiple of 16).
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchStride: Int
    /// One line of SIMD vectors per slice for the horizontal recursion.
    private let lines: UnsafeMutablePointer<SIMD16<Float>>
    /// Reduced path only: `lowHeight` rows widened back to full width (`wideStride` floats each), one
    /// accumulation row per slice, and for each full-resolution sample / row the reduced sample / row before
    /// it and the weight of the one after it.
    private let wide: UnsafeMutablePointer<Float>
    private let wideStride: Int
    private let sums: UnsafeMutablePointer<Float>
    /// One sample per pixel, f = 2, byte store: one line per slice of the row interpolated between two reduced rows,
    /// in 1/64ths of a level, with the border sample repeated on either side (`interpolateHalfBytes`).
    private let halfLines: UnsafeMutablePointer<UInt16>
    private let halfLineStride: Int
    private let sampleIndex: [Int32], sampleWeight: [Float]
    private let rowIndex: [Int], rowWeight: [Float]

    /// The smallest σ at which the plane is reduced by 2, 4 and 8. Measured on a real photo against the exact
    /// Gaussian: halving from σ = 2.5 (σ' ≥ 1.15) stays ≥ 43 dB; larger factors need σ' ≥ 1.9 to stay ≥ 42 dB.
    static func reduction(for sigma: Double) -> Int {
        sigma >= 16 ? 8 : sigma >= 8 ? 4 : sigma >= 2.5 ? 2 : 1
    }

    init(width: Int, height: Int, channels: Int, sigma: Double, slices: Int) {
        pixelsPerRow = width
        self.height = height
        self.channels = channels
        self.slices = max(1, slices)
        var factor = PlaneBlur.reduction(for: sigma)
        while factor > 1, width < 32 * factor || height < 32 * factor { factor /= 2 }
        self.factor = factor
        let lowSigma = factor == 1 ? sigma : (sigma * sigma / Double(factor * factor) - 0.25).squareRoot()
        gaussian = RecursiveGaussian(sigma: lowSigma)
        samplesPerRow = width * channels
        lowPixels = (width + factor - 1) / factor
        lowHeight = (height + factor - 1) / factor
        lowSamples = lowPixels * channels
        scratchStride = (lowSamples + 15) / 16 * 16 + 16
        scratch = PlaneBlur.floats(scratchStride * lowHeight)
        lines = .allocate(capacity: lowPixels * self.slices)
        wideStride = factor == 1 ? 0 : (samplesPerRow + 15) / 16 * 16 + 16
        wide = PlaneBlur.floats(wideStride * lowHeight)
        sums = PlaneBlur.floats(wideStride * self.slices)
        halfLineStride = (lowPixels + 15) / 16 * 16 + 32
        halfLines = .allocate(capacity: halfLineStride * self.slices)
        // Reduced sample j covers full-resolution samples j·f … j·f + f − 1, centred at j·f + (f − 1)/2.
        func position(_ x: Int, count: Int) -> (Int, Float) {
            let low = min(max((Double(x) - Double(factor - 1) / 2) / Double(factor), 0), Double(count - 1))
            let before = min(Int(low), max(count - 2, 0))
            return (before, Float(low - Double(before)))
        }
        let columns = (0..<width).map { position($0, count: (width + factor - 1) / factor) }
        sampleIndex = (0..<(width * channels)).map { Int32(columns[$0 / channels].0 * channels + $0 % channels) }
        sampleWeight = (0..<(width * channels)).map { columns[$0 / channels].1 }
        let rows = (0..<height).map { position($0, count: (height + factor - 1) / factor) }
        rowIndex = rows.map(\.0)
        rowWeight = rows.map(\.1)
    }

    private static func floats(_ count: Int) -> UnsafeMutablePointer<Float> {
        UnsafeMutableRawPointer.allocate(byteCount: max(count, 16) * 4, alignment: 64).bindMemory(to: Float.self, capacity: max(count, 16))
    }

    deinit {
        scratch.deallocate()
        lines.deallocate()
        wide.deallocate()
        sums.deallocate()
        halfLines.deallocate()
    }

    /// Blurs `source` and hands the result to `writer` (which may write over `source`).
    func blur<Writer: BlurredRowWriter>(source: Plane, into writer: Writer) {
        if gaussian.isIdentity && factor == 1 {
            copyThrough(source: source, into: writer)
            return
        }
        let rowsPerBlock = 16 / channels
        let blocks = (lowHeight + rowsPerBlock - 1) / rowsPerBlock
        let strips = (lowSamples + 15) / 16
        if factor == 1 {
            SliceRunner(threads: slices).forEachSlice(of: blocks) { range, slice in
                for block in range {
                    self.horizontal(ByteLanes(plane: source, channels: self.channels), firstRow: block * rowsPerBlock, slice: slice)
                }
            }
            SliceRunner(threads: slices).forEachSlice(of: strips) { range, _ in
                for strip in range { self.vertical(firstSample: strip * 16, writer: writer) }
            }
            return
        }
        SliceRunner(threads: slices).forEachSlice(of: lowHeight) { range, slice in
            for row in range { self.reduce(source, row: row, slice: slice) }
        }
        if !gaussian.isIdentity {
            SliceRunner(threads: slices).forEachSlice(of: blocks) { range, slice in
                for block in range {
                    if self.channels == 1 && self.lowPixels >= 8 {
                        self.horizontalRows(firstRow: block * 16, slice: slice)
                        continue
                    }
                    self.horizontal(FloatLanes(scratch: self.scratch, stride: self.scratchStride, channels: self.channels),
                                    firstRow: block * rowsPerBlock, slice: slice)
                }
            }
            let store = FloatStore(scratch: scratch, stride: scratchStride)
            SliceRunner(threads: slices).forEachSlice(of: strips) { range, _ in
                for strip in range { self.vertical(firstSample: strip * 16, writer: store) }
            }
        }
        if channels == 1 && factor == 2 {
            if let store = writer as? StoreBlurred {
                SliceRunner(threads: slices).forEachSlice(of: height) { range, slice in
                    for row in range { self.interpolateHalfBytes(row: row, slice: slice, target: store.target) }
                }
                return
            }
            SliceRunner(threads: slices).forEachSlice(of: height) { range, slice in
                for row in range { self.interpolateHalf(row: row, slice: slice, writer: writer) }
            }
            return
        }
        SliceRunner(threads: slices).forEachSlice(of: lowHeight) { range, _ in
            for row in range { self.widen(row: row) }
        }
        SliceRunner(threads: slices).forEachSlice(of: height) { range, _ in
            for row in range { self.interpolate(row: row, writer: writer) }
        }
    }

    /// One sample per pixel, f = 2: full-resolution row `row` interpolated between two reduced rows at the reduced
    /// width first (half the samples), then widened straight into `writer`. Pixel 2j lies a quarter before reduced
    /// sample j and pixel 2j + 1 a quarter after it, so eight of each come from three overlapping loads of the
    /// line, interleaved into sixteen outputs; the line repeats its first and last sample on either side, which is
    /// the clamped edge. (The same linear interpolations as `widen` then `interpolate`, in the other order.)
    private func interpolateHalf<Writer: BlurredRowWriter>(row: Int, slice: Int, writer: Writer) {
        let above = scratch + rowIndex[row] * scratchStride
        let below = lowHeight > 1 ? above + scratchStride : above
        let t = rowWeight[row]
        let line = sums + slice * wideStride
        var j = 0
        while j < lowPixels {
            let a = SIMD16<Float>(loadingFrom: above + j), b = SIMD16<Float>(loadingFrom: below + j)
            (a + (b - a) * t).store(to: line + 1 + j)
            j += 16
        }
        line[0] = line[1]
        line[lowPixels + 1] = line[lowPixels]
        var index = 0
        while index < samplesPerRow {
            let base = line + index / 2
            let before = SIMD8<Float>(loadingFrom: base), at = SIMD8<Float>(loadingFrom: base + 1)
            let after = SIMD8<Float>(loadingFrom: base + 2)
            let even = (at * 0.75).addingProduct(before, 0.25), odd = (at * 0.75).addingProduct(after, 0.25)
            var pair = SIMD16<Float>()
            for lane in 0..<8 {
                pair[2 * lane] = even[lane]
                pair[2 * lane + 1] = odd[lane]
            }
            writer.write(pair, row: row, at: index, count: min(16, samplesPerRow - index))
            index += 16
        }
    }

    /// `interpolateHalf` for the plain byte store, in 16-bit integers: the row interpolated between the two reduced
    /// rows is kept in 1/64ths of a level (0…16320, rounded to nearest and clamped), so ¼·before + ¾·at rounded to a
    /// byte is `(before + 3·at + 128) >> 8`, which stays below 2¹⁶, and sixteen even and sixteen odd outputs pack into
    /// one vector of byte pairs (even in the low byte) with no shuffle. The 1/128-level rounding of the line moves an
    /// output by one level only where the exact value lies within 1/128 of a rounding boundary; a constant plane stays
    /// exactly constant.
    private func interpolateHalfBytes(row: Int, slice: Int, target: Plane) {
        let above = scratch + rowIndex[row] * scratchStride
        let below = lowHeight > 1 ? above + scratchStride : above
        let t = rowWeight[row]
        let line = halfLines + slice * halfLineStride
        var j = 0
        while j < lowPixels {
            let a = SIMD16<Float>(loadingFrom: above + j), b = SIMD16<Float>(loadingFrom: below + j)
            let scaled = pointwiseMax(pointwiseMin((a + (b - a) * t) * 64, SIMD16(repeating: 16320)), SIMD16(repeating: 0))
            // Adding 2²³ leaves the rounded integer in the low mantissa bits.
            let bits = unsafeBitCast(scaled + 8_388_608, to: SIMD16<UInt32>.self)
            var words = SIMD16<UInt16>()
            for lane in 0..<16 { words[lane] = UInt16(truncatingIfNeeded: bits[lane]) }
            UnsafeMutableRawPointer(line + 1 + j).storeBytes(of: words, as: SIMD16<UInt16>.self)
            j += 16
        }
        line[0] = line[1]
        line[lowPixels + 1] = line[lowPixels]
        let output = target.row(row)
        var index = 0
        while index + 32 <= samplesPerRow {
            let base = UnsafeRawPointer(line + index / 2)
            let before = base.loadUnaligned(as: SIMD16<UInt16>.self)
            let at = base.loadUnaligned(fromByteOffset: 2, as: SIMD16<UInt16>.self) &* 3 &+ 128
            let after = base.loadUnaligned(fromByteOffset: 4, as: SIMD16<UInt16>.self)
            let even = (at &+ before) &>> 8, odd = (at &+ after) &>> 8
            UnsafeMutableRawPointer(output + index).storeBytes(of: even | (odd &<< 8), as: SIMD16<UInt16>.self)
            index += 32
        }
        while index < samplesPerRow {
            let at = Int(line[index / 2 + 1]) * 3 + 128
            let neighbour = Int(index % 2 == 0 ? line[index / 2] : line[index / 2 + 2])
            output[index] = UInt8(truncatingIfNeeded: (at + neighbour) >> 8)
            index += 1
        }
    }

    private func copyThrough<Writer: BlurredRowWriter>(source: Plane, into writer: Writer) {
        for y in 0..<height {
            var index = 0
            while index < samplesPerRow {
                let count = min(16, samplesPerRow - index)
                writer.write(loadBytes(source.row(y) + index, count: count), row: y, at: index, count: count)
                index += 16
            }
        }
    }

    /// Averages the `factor`×`factor` blocks of source row block `row` into scratch row `row` (blocks past
    /// the edge repeat the border, as the clamped blur does). One sample per pixel and f = 2 (σ 2.5 to 8): straight
    /// from the two source rows, eight outputs at a time.
    private func reduce(_ source: Plane, row: Int, slice: Int) {
        let output = scratch + row * scratchStride
        if channels == 1 && factor == 2 {
            // Sixteen bytes of each of the two rows at a time: their sums' even and odd lanes make eight outputs.
            let top = UnsafePointer(source.row(min(row * 2, height - 1)))
            let bottom = UnsafePointer(source.row(min(row * 2 + 1, height - 1)))
            var x = 0
            // Thirty-two bytes of each row at a time as sixteen byte pairs: low byte + high byte is a pair's sum, in exact
            // 16-bit integers (at most 4 · 255), so the sixteen averages equal those of the float loop below.
            while 2 * x + 32 <= pixelsPerRow {
                let upper = UnsafeRawPointer(top + 2 * x).loadUnaligned(as: SIMD16<UInt16>.self)
                let lower = UnsafeRawPointer(bottom + 2 * x).loadUnaligned(as: SIMD16<UInt16>.self)
                let sums = (upper & 0xFF) &+ (upper &>> 8) &+ (lower & 0xFF) &+ (lower &>> 8)
                var values = SIMD16<Float>()
                for lane in 0..<16 { values[lane] = Float(sums[lane]) }
                (values * 0.25).store(to: output + x)
                x += 16
            }
            while 2 * x + 16 <= pixelsPerRow {
                let sum = SIMD16<Float>(bytesAt: top + 2 * x) + SIMD16<Float>(bytesAt: bottom + 2 * x)
                var even = SIMD8<Float>(), odd = SIMD8<Float>()
                for lane in 0..<8 {
                    even[lane] = sum[2 * lane]
                    odd[lane] = sum[2 * lane + 1]
                }
                ((even + odd) * 0.25).store(to: output + x)
                x += 8
            }
            for rest in x..<lowPixels {
                let a = min(2 * rest, pixelsPerRow - 1), b = min(2 * rest + 1, pixelsPerRow - 1)
                output[rest] = ((Float(top[a]) + Float(top[b])) + (Float(bottom[a]) + Float(bottom[b]))) * 0.25
            }
            return
        }
        let sum = sums + slice * wideStride
        let vectors = (samplesPerRow + 15) / 16
        for k in 0..<factor {
            let input = UnsafePointer(source.row(min(row * factor + k, height - 1)))
            var index = 0
            for _ in 0..<vectors {
                let count = min(16, samplesPerRow - index)
                let values = loadBytes(input + index, count: count)
                UnsafeMutableRawPointer(sum + index).storeBytes(of: k == 0 ? values : SIMD16<Float>(loadingFrom: sum + index) + values,
                                                                as: SIMD16<Float>.self)
                index += 16
            }
        }
        let scale = 1 / Float(factor * factor)
        let c = channels, f = factor
        // Blocks wholly inside the row need no clamping; only the last one may stick out.
        let whole = pixelsPerRow / f
        if c == 1 && f == 4 {
            for x in 0..<whole { output[x] = ((sum[4 * x] + sum[4 * x + 1]) + (sum[4 * x + 2] + sum[4 * x + 3])) * scale }
        } else if c == 1 {
            for x in 0..<whole {
                var total: Float = 0
                for k in 0..<f { total += sum[x * f + k] }
                output[x] = total * scale
            }
        } else {
            for x in 0..<whole {
                for channel in 0..<c {
                    var total: Float = 0
                    for k in 0..<f { total += sum[(x * f + k) * c + channel] }
                    output[x * c + channel] = total * scale
                }
            }
        }
        for x in whole..<lowPixels {
            for channel in 0..<c {
                var total: Float = 0
                for k in 0..<f { total += sum[min(x * f + k, pixelsPerRow - 1) * c + channel] }
                output[x * c + channel] = total * scale
            }
        }
    }

    /// Interpolates reduced row `row` to full width (linear). One sample per pixel: full pixel x = f·j + p
    /// lies at reduced position j + (p − (f − 1)/2)/f, so each phase p has fixed weights and the inner loop
    /// runs over j; the first and last few pixels, whose neighbours are clamped, use the tables made at
    /// configure time, as does every other layout.
    private func widen(row: Int) {
        let input = scratch + row * scratchStride
        let output = wide + row * wideStride
        let f = factor
        if channels == 1 && lowPixels >= 4 {
            for p in 0..<f {
                let offset = (Float(p) - Float(f - 1) / 2) / Float(f)
                let before = offset < 0 ? -1 : 0
                let weight = offset - Float(before)
                // j from 1 to lowPixels − 2 keeps j + before and j + before + 1 inside the row.
                var j = 1
                while j < lowPixels - 1 {
                    let a = input[j + before], b = input[j + before + 1]
                    output[j * f + p] = a + (b - a) * weight
                    j += 1
                }
            }
            let edges = Array(0..<f) + Array(((lowPixels - 1) * f)..<samplesPerRow)
            widenSamples(edges, input: input, output: output)
            return
        }
        widenSamples(0..<samplesPerRow, input: input, output: output)
    }

    private func widenSamples<Samples: Sequence<Int>>(_ samples: Samples, input: UnsafeMutablePointer<Float>,
                                                      output: UnsafeMutablePointer<Float>) {
        let next = lowPixels > 1 ? channels : 0
        sampleIndex.withUnsafeBufferPointer { index in
            sampleWeight.withUnsafeBufferPointer { weight in
                for i in samples {
                    let j = Int(index[i])
                    let a = input[j]
                    output[i] = a + (input[j + next] - a) * weight[i]
                }
            }
        }
    }

    /// Interpolates full-resolution row `row` between two widened rows and hands it to `writer`.
    private func interpolate<Writer: BlurredRowWriter>(row: Int, writer: Writer) {
        let before = wide + rowIndex[row] * wideStride
        let after = lowHeight > 1 ? before + wideStride : before
        let t = rowWeight[row]
        var index = 0
        while index < samplesPerRow {
            let a = SIMD16<Float>(loadingFrom: before + index)
            let b = SIMD16<Float>(loadingFrom: after + index)
            writer.write(a + (b - a) * t, row: row, at: index, count: min(16, samplesPerRow - index))
            index += 16
        }
    }

    /// Forward and backward recursion along `16 / channels` rows at once (lanes = rows × channels); rows
    /// past the bottom repeat the last row, so their lanes compute and store the same values as it.
    private func horizontal<Lanes: LaneLoader>(_ lanes: Lanes, firstRow: Int, slice: Int) {
        let (a1, a2, a3) = gaussian.feedback
        let g = gaussian.gain
        let m = gaussian.boundary
        let channels = self.channels
        let count = lowPixels
        let line = lines + slice * lowPixels
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 32) { offsets in
            for lane in 0..<16 {
                let row = min(firstRow + lane / channels, lowHeight - 1)
                offsets[lane] = lanes.offset(row: row) + lane % channels
                offsets[16 + lane] = row * scratchStride + lane % channels
            }
            let reads = UnsafePointer(offsets.baseAddress!)
            var w1 = lanes.load(0, offsets: reads), w2 = w1, w3 = w1
            var last = w1
            for x in 0..<count {
                let v = lanes.load(x, offsets: reads)
                let partial = (v * g).addingProduct(w2, a2).addingProduct(w3, a3)
                let w = partial.addingProduct(w1, a1)
                line[x] = w
                w3 = w2; w2 = w1; w1 = w
                last = v
            }
            let d0 = w1 - last, d1 = w2 - last, d2 = w3 - last
            var y1 = last + d0 * m[0][0] + d1 * m[0][1] + d2 * m[0][2]
            var y2 = last + d0 * m[1][0] + d1 * m[1][1] + d2 * m[1][2]
            var y3 = last + d0 * m[2][0] + d1 * m[2][1] + d2 * m[2][2]
            var x = count - 1
            while x >= 0 {
                let partial = (line[x] * g).addingProduct(y2, a2).addingProduct(y3, a3)
                let y = partial.addingProduct(y1, a1)
                y3 = y2; y2 = y1; y1 = y
                let base = scratch + x * channels
                for lane in 0..<16 { base[offsets[16 + lane]] = y[lane] }
                x -= 1
            }
        }
    }

    /// `horizontal` for one sample per pixel on the scratch plane: sixteen rows, eight samples at a time. Each row's
    /// eight samples are one vector load, and two 8×8 transposes in registers turn the sixteen loads into eight
    /// columns of sixteen lanes (and back again for the stores of the backward pass), where `horizontal` reads and
    /// writes one sample per lane. The recursion and its boundary are the same, step for step.
    private func horizontalRows(firstRow: Int, slice: Int) {
        let (a1, a2, a3) = gaussian.feedback
        let g = gaussian.gain
        let m = gaussian.boundary
        let count = lowPixels
        let line = lines + slice * lowPixels
        let scratch = self.scratch
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 16) { offsets in
            for lane in 0..<16 { offsets[lane] = min(firstRow + lane, lowHeight - 1) * scratchStride }
            let rows = UnsafePointer(offsets.baseAddress!)
            @inline(__always) func column(_ x: Int) -> SIMD16<Float> {
                var values = SIMD16<Float>()
                for lane in 0..<16 { values[lane] = scratch[rows[lane] + x] }
                return values
            }
            @inline(__always) func eight(_ first: Int, _ x: Int) -> Block8 {
                (SIMD8(loadingFrom: scratch + rows[first] + x), SIMD8(loadingFrom: scratch + rows[first + 1] + x),
                 SIMD8(loadingFrom: scratch + rows[first + 2] + x), SIMD8(loadingFrom: scratch + rows[first + 3] + x),
                 SIMD8(loadingFrom: scratch + rows[first + 4] + x), SIMD8(loadingFrom: scratch + rows[first + 5] + x),
                 SIMD8(loadingFrom: scratch + rows[first + 6] + x), SIMD8(loadingFrom: scratch + rows[first + 7] + x))
            }
            @inline(__always) func store(_ block: Block8, _ first: Int, _ x: Int) {
                block.0.store(to: scratch + rows[first] + x)
                block.1.store(to: scratch + rows[first + 1] + x)
                block.2.store(to: scratch + rows[first + 2] + x)
                block.3.store(to: scratch + rows[first + 3] + x)
                block.4.store(to: scratch + rows[first + 4] + x)
                block.5.store(to: scratch + rows[first + 5] + x)
                block.6.store(to: scratch + rows[first + 6] + x)
                block.7.store(to: scratch + rows[first + 7] + x)
            }
            var w1 = column(0), w2 = w1, w3 = w1
            @inline(__always) func forward(_ v: SIMD16<Float>, _ x: Int) {
                let w = (v * g).addingProduct(w2, a2).addingProduct(w3, a3).addingProduct(w1, a1)
                line[x] = w
                w3 = w2; w2 = w1; w1 = w
            }
            var x = 0
            while x + 8 <= count {
                let low = transposed(eight(0, x)), high = transposed(eight(8, x))
                forward(SIMD16(lowHalf: low.0, highHalf: high.0), x)
                forward(SIMD16(lowHalf: low.1, highHalf: high.1), x + 1)
                forward(SIMD16(lowHalf: low.2, highHalf: high.2), x + 2)
                forward(SIMD16(lowHalf: low.3, highHalf: high.3), x + 3)
                forward(SIMD16(lowHalf: low.4, highHalf: high.4), x + 4)
                forward(SIMD16(lowHalf: low.5, highHalf: high.5), x + 5)
                forward(SIMD16(lowHalf: low.6, highHalf: high.6), x + 6)
                forward(SIMD16(lowHalf: low.7, highHalf: high.7), x + 7)
                x += 8
            }
            while x < count {
                forward(column(x), x)
                x += 1
            }
            let last = column(count - 1)
            let d0 = w1 - last, d1 = w2 - last, d2 = w3 - last
            var y1 = last + d0 * m[0][0] + d1 * m[0][1] + d2 * m[0][2]
            var y2 = last + d0 * m[1][0] + d1 * m[1][1] + d2 * m[1][2]
            var y3 = last + d0 * m[2][0] + d1 * m[2][1] + d2 * m[2][2]
            @inline(__always) func backward(_ x: Int) -> SIMD16<Float> {
                let y = (line[x] * g).addingProduct(y2, a2).addingProduct(y3, a3).addingProduct(y1, a1)
                y3 = y2; y2 = y1; y1 = y
                return y
            }
            x = count - 1
            while x >= 0 && (x + 1) % 8 != 0 {
                let y = backward(x)
                for lane in 0..<16 { scratch[rows[lane] + x] = y[lane] }
                x -= 1
            }
            while x >= 7 {
                let start = x - 7
                let c7 = backward(start + 7), c6 = backward(start + 6), c5 = backward(start + 5), c4 = backward(start + 4)
                let c3 = backward(start + 3), c2 = backward(start + 2), c1 = backward(start + 1), c0 = backward(start)
                store(transposed((c0.lowHalf, c1.lowHalf, c2.lowHalf, c3.lowHalf, c4.lowHalf, c5.lowHalf, c6.lowHalf, c7.lowHalf)),
                      0, start)
                store(transposed((c0.highHalf, c1.highHalf, c2.highHalf, c3.highHalf,
                                  c4.highHalf, c5.highHalf, c6.highHalf, c7.highHalf)), 8, start)
                x -= 8
            }
        }
    }

    /// Forward recursion down sixteen columns (in place in the scratch plane), then backward recursion up,
    /// handing each row's result to `writer`.
    private func vertical<Writer: BlurredRowWriter>(firstSample: Int, writer: Writer) {
        let (a1, a2, a3) = gaussian.feedback
        let g = gaussian.gain
        let m = gaussian.boundary
        let column = scratch + firstSample
        let rowStride = scratchStride
        let valid = min(16, lowSamples - firstSample)
        var w1 = SIMD16<Float>(loadingFrom: column), w2 = w1, w3 = w1
        var last = w1
        for y in 0..<lowHeight {
            let cell = column + y * rowStride
            let v = SIMD16<Float>(loadingFrom: cell)
            let partial = (v * g).addingProduct(w2, a2).addingProduct(w3, a3)
            let w = partial.addingProduct(w1, a1)
            UnsafeMutableRawPointer(cell).storeBytes(of: w, as: SIMD16<Float>.self)
            w3 = w2; w2 = w1; w1 = w
            last = v
        }
        let d0 = w1 - last, d1 = w2 - last, d2 = w3 - last
        var y1 = last + d0 * m[0][0] + d1 * m[0][1] + d2 * m[0][2]
        var y2 = last + d0 * m[1][0] + d1 * m[1][1] + d2 * m[1][2]
        var y3 = last + d0 * m[2][0] + d1 * m[2][1] + d2 * m[2][2]
        var row = lowHeight - 1
        while row >= 0 {
            let partial = (SIMD16<Float>(loadingFrom: column + row * rowStride) * g).addingProduct(y2, a2).addingProduct(y3, a3)
            let y = partial.addingProduct(y1, a1)
            y3 = y2; y2 = y1; y1 = y
            writer.write(y, row: row, at: firstSample, count: valid)
            row -= 1
        }
    }
}

/// Reads the horizontal pass's sixteen lanes at one position of a row block.
private protocol LaneLoader {
    /// Offset of row `row`'s first element from the loader's base.
    func offset(row: Int) -> Int
    /// Lane `i` = element `offsets[i] + x · channels`.
    func load(_ x: Int, offsets: UnsafePointer<Int>) -> SIMD16<Float>
}

/// Lanes read from a plane of bytes.
private struct ByteLanes: LaneLoader {
    let plane: Plane
    let channels: Int

    func offset(row: Int) -> Int { row * plane.bytesPerRow }

    @inline(__always)
    func load(_ x: Int, offsets: UnsafePointer<Int>) -> SIMD16<Float> {
        let base = UnsafePointer(plane.baseAddress) + x * channels
        var values = SIMD16<Float>()
        for lane in 0..<16 { values[lane] = Float(base[offsets[lane]]) }
        return values
    }
}

/// Lanes read from the float scratch plane (the reduced path).
private struct FloatLanes: LaneLoader {
    let scratch: UnsafeMutablePointer<Float>
    let stride: Int
    let channels: Int

    func offset(row: Int) -> Int { row * stride }

    @inline(__always)
    func load(_ x: Int, offsets: UnsafePointer<Int>) -> SIMD16<Float> {
        let base = UnsafePointer(scratch) + x * channels
        var values = SIMD16<Float>()
        for lane in 0..<16 { values[lane] = base[offsets[lane]] }
        return values
    }
}

/// Writes the vertical pass's result back into the scratch plane as floats (the reduced path).
private struct FloatStore: BlurredRowWriter, @unchecked Sendable {
    // Sendable: the pointer is PlaneBlur's scratch plane; each vertical slice writes only its own columns.
    let scratch: UnsafeMutablePointer<Float>
    let stride: Int

    @inline(__always)
    func write(_ blurred: SIMD16<Float>, row y: Int, at index: Int, count: Int) {
        UnsafeMutableRawPointer(scratch + y * stride + index).storeBytes(of: blurred, as: SIMD16<Float>.self)
    }
}

/// Eight vectors of eight floats: an 8×8 block, one row per vector.
private typealias Block8 = (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>,
                            SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)

/// The transpose of an 8×8 block, in the three rounds of two-source shuffles that AVX has as single instructions
/// (each lane loop below is one such shuffle): interleave pairs of rows within each half, then pairs of pairs,
/// then swap the halves.
@inline(__always)
private func transposed(_ r: Block8) -> Block8 {
    /// Lanes 0, 1 (`high`: 2, 3) of each half of `a` and `b`, interleaved.
    @inline(__always) func unpack(_ a: SIMD8<Float>, _ b: SIMD8<Float>, high: Bool) -> SIMD8<Float> {
        var out = SIMD8<Float>()
        for lane in 0..<8 {
            let source = (lane / 4) * 4 + (lane % 4) / 2 + (high ? 2 : 0)
            out[lane] = lane % 2 == 0 ? a[source] : b[source]
        }
        return out
    }
    /// Lanes 0, 1 (`high`: 2, 3) of each half of `a`, then the same of `b`.
    @inline(__always) func pairs(_ a: SIMD8<Float>, _ b: SIMD8<Float>, high: Bool) -> SIMD8<Float> {
        var out = SIMD8<Float>()
        for lane in 0..<8 {
            let source = (lane / 4) * 4 + lane % 2 + (high ? 2 : 0)
            out[lane] = lane % 4 < 2 ? a[source] : b[source]
        }
        return out
    }
    /// The low (`high`: upper) half of `a`, then that of `b`.
    @inline(__always) func halves(_ a: SIMD8<Float>, _ b: SIMD8<Float>, high: Bool) -> SIMD8<Float> {
        SIMD8(lowHalf: high ? a.highHalf : a.lowHalf, highHalf: high ? b.highHalf : b.lowHalf)
    }
    let t0 = unpack(r.0, r.1, high: false), t1 = unpack(r.0, r.1, high: true)
    let t2 = unpack(r.2, r.3, high: false), t3 = unpack(r.2, r.3, high: true)
    let t4 = unpack(r.4, r.5, high: false), t5 = unpack(r.4, r.5, high: true)
    let t6 = unpack(r.6, r.7, high: false), t7 = unpack(r.6, r.7, high: true)
    let s0 = pairs(t0, t2, high: false), s1 = pairs(t0, t2, high: true)
    let s2 = pairs(t1, t3, high: false), s3 = pairs(t1, t3, high: true)
    let s4 = pairs(t4, t6, high: false), s5 = pairs(t4, t6, high: true)
    let s6 = pairs(t5, t7, high: false), s7 = pairs(t5, t7, high: true)
    return (halves(s0, s4, high: false), halves(s1, s5, high: false), halves(s2, s6, high: false), halves(s3, s7, high: false),
            halves(s0, s4, high: true), halves(s1, s5, high: true), halves(s2, s6, high: true), halves(s3, s7, high: true))
}
