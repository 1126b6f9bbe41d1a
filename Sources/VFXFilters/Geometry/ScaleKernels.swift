#if arch(x86_64) && VFX_HASWELL
import _Builtin_intrinsics.intel
import VFXCore

/// The phase path of `scale` with AVX2, for a plane of one byte per sample whose width changes by p:q (`PhaseTaps`) where
/// every eight consecutive outputs read at most sixteen consecutive source bytes: 3:2 (1080p → 720p), 1:2 and an
/// unchanged width do; halving and thirds read more and stay on `PhaseScaler`. Horizontal first, once per source row a
/// slice needs, into a ring of 16-bit rows (samples × 2⁶); then per output row the vertical taps over ring rows.
///
/// - Horizontal, 32 outputs at a time in two vectors: each 128-bit lane makes eight outputs from a window of sixteen
///   source bytes. Per pair of taps one byte shuffle (`vpshufb`) sets each output's two source bytes side by side and
///   `vpmaddubsw` multiplies and adds both for sixteen outputs. Lanes start their windows whole periods apart, so one
///   mask and one set of weights serve every lane. A weight × 2^(6+s) does not fit a signed byte, so it is split into a
///   coarse part (× 2⁶) and the rest: the line is Σ coarse·x + (Σ rest·x) >> s, two `vpmaddubsw` per pair.
/// - Vertical: one `vpmulhrsw` and one add per tap (weights × 2¹⁵, rounded products), then a rounded shift and a
///   saturating pack to bytes. A ring row keeps each 32 outputs as 0–7, 16–23 | 8–15, 24–31, the order that the
///   in-lane pack puts back to 0–31.
///
/// Worst case about 0.25 of a code from the exact value (weights to 2^−(7+s), s = 5…7; the rest's shift rounds down;
/// rounded products). `init` is nil when a tap falls outside its window or a sum could leave 16 bits, and the caller
/// takes `PhaseScaler`. The chunks at the row ends read windows whose indices are clamped to the row (byte shuffles
/// of its first or last sixteen bytes). Scratch memory (a ring per slice) is made here; `run` allocates nothing.
///
/// ```swift
/// let across = PhaseTaps(source: 1920, destination: 1280, kernel: .bicubic)!
/// let scaler = ShuffleScaler(across: across, down: ResamplingTaps(source: 1080, destination: 720, kernel: .bicubic),
///                            slices: 1)
/// scaler?.run(from: source, into: target, rows: 0..<720, slice: 0)
/// ```
final class ShuffleScaler: PlaneRowScaler, @unchecked Sendable {
    // Sendable: the constants are written only in `init`; `run` is called by one frame at a time (the processor
    // contract) and each concurrent call gets its own slice number, whose ring and ring table no other
    // slice touches.
    private let sourceWidth: Int, outputWidth: Int
    /// 32-output chunks per row, and the Int16s of a ring row (32 per chunk).
    private let chunks: Int, rowLength: Int
    /// Source bytes from one chunk to the next (32·p/q) and from one lane's window to the next (8·p/q); the offset of a
    /// chunk's first window from source sample p·m of its first period; bytes a chunk's four windows span.
    private let chunkStep: Int, laneStep: Int, first: Int, span: Int
    /// Tap pairs, and per pair three vectors: the shuffle mask, the coarse weights, the rest.
    private let pairs: Int
    private let constants: UnsafeMutablePointer<__m256i>
    /// Bits of the rest below the coarse part.
    private let shift: Int32
    /// Vertical taps: per output row, `taps` source rows and weights × 2¹⁵.
    private let rows: [Int32], factors: [Int16], taps: Int
    private let slices: Int
    /// Ring rows per slice: a power of two ≥ `taps` (one output row's taps are consecutive source rows), so that a row's
    /// slot is a mask, not a division.
    private let ringRows: Int
    /// Per slice: `ringRows` ring rows.
    private let ring: UnsafeMutablePointer<Int16>
    /// Per slice and ring row: the source row it holds (−1: none).
    private let held: UnsafeMutablePointer<Int>

    init?(across: PhaseTaps, down: ResamplingTaps, slices: Int) {
        let (p, q) = (across.p, across.q)
        guard 8 % q == 0, down.taps <= 32 else { return nil }
        // Each phase's taps as (source offset, weight).
        var phases: [[(Int, Float)]] = [], start = 0
        for count in across.counts {
            phases.append((start..<(start + count)).map { (across.sourceOffsets[$0], across.weights[$0]) })
            start += count
        }
        let lowest = across.sourceOffsets.min() ?? 0
        /// Window byte of tap `o` for lane output t (phase t mod q, period ⌊t/q⌋ of the lane).
        func index(_ t: Int, _ o: Int) -> Int { p * (t / q) + o - lowest }
        guard (0..<8).allSatisfy({ t in phases[t % q].allSatisfy { index(t, $0.0) < 16 } }) else { return nil }
        pairs = ((across.counts.max() ?? 1) + 1) / 2

        // The largest split (s) whose byte products and 16-bit sums cannot overflow.
        var split: (shift: Int, coarse: [[Int]], rest: [[Int]])?
        for s in stride(from: 7, through: 5, by: -1) {
            let fixed = phases.map { taps in fixedPoint(taps.map(\.1)[...], one: 64 << s) }
            let coarse = fixed.map { $0.map { Int((Double($0) / Double(1 << s)).rounded()) } }
            let rest = zip(fixed, coarse).map { w, c in zip(w, c).map { $0 - $1 << s } }
            func fits(_ values: [Int]) -> Bool {
                let padded = values + [0]
                let pairSums = stride(from: 0, to: values.count, by: 2).map { abs(padded[$0]) + abs(padded[$0 + 1]) }
                let positive = values.filter { $0 > 0 }.reduce(0, +), negative = values.filter { $0 < 0 }.reduce(0, -)
                return values.allSatisfy { abs($0) <= 127 } && 255 * (pairSums.max() ?? 0) <= 32767
                    && 255 * max(positive, negative) <= 32767
            }
            if coarse.allSatisfy(fits) && rest.allSatisfy(fits) {
                split = (s, coarse, rest)
                break
            }
        }
        guard let split else { return nil }
        // Range of a line sample (samples × 2⁶, one more for the rounding down) and of a vertical sum before its shift
        // (one more per tap for the rounded products).
        let sampleSums = phases.map { taps -> (Float, Float) in
            let weights = taps.map(\.1)
            return (weights.filter { $0 > 0 }.reduce(0, +), weights.filter { $0 < 0 }.reduce(0, +))
        }
        let lineHigh: Float = 255 * 64 * (sampleSums.map(\.0).max() ?? 0) + 1
        let lineLow: Float = 255 * 64 * (sampleSums.map(\.1).min() ?? 0) - 1
        let taps = down.taps
        let factors = stride(from: 0, to: down.weights.count, by: taps).flatMap { start in
            fixedPoint(down.weights[start..<(start + taps)], one: 32768).map { Int16(min(max($0, -32767), 32767)) }
        }
        let sums = stride(from: 0, to: factors.count, by: taps).map { start in
            factors[start..<(start + taps)].reduce((high: Float(taps), low: -Float(taps))) { sum, factor in
                let f = Float(factor) / 32768
                return (sum.high + max(f * lineHigh, f * lineLow), sum.low + min(f * lineHigh, f * lineLow))
            }
        }
        guard lineHigh < 32767, lineLow > -32768, sums.allSatisfy({ $0.high + 32 < 32767 && $0.low > -32768 }) else {
            return nil
        }
        (self.taps, self.factors) = (taps, factors)
        sourceWidth = p * across.groups
        outputWidth = q * across.groups
        chunks = (outputWidth + 31) / 32
        rowLength = 32 * chunks
        (chunkStep, laneStep, first) = (32 * p / q, 8 * p / q, lowest)
        span = 3 * laneStep + 16
        shift = Int32(split.shift)
        constants = .allocate(capacity: 3 * pairs)
        for k in 0..<pairs {
            var mask = [UInt8](repeating: 0x80, count: 32), coarse = [Int8](repeating: 0, count: 32)
            var rest = [Int8](repeating: 0, count: 32)
            for lane in 0..<2 {
                for t in 0..<8 {
                    let r = t % q
                    for j in 0..<2 where 2 * k + j < phases[r].count {
                        let byte = 16 * lane + 2 * t + j
                        mask[byte] = UInt8(index(t, phases[r][2 * k + j].0))
                        coarse[byte] = Int8(split.coarse[r][2 * k + j])
                        rest[byte] = Int8(split.rest[r][2 * k + j])
                    }
                }
            }
            (constants + 3 * k).initialize(to: mask.withUnsafeBytes { $0.loadUnaligned(as: __m256i.self) })
            (constants + 3 * k + 1).initialize(to: coarse.withUnsafeBytes { $0.loadUnaligned(as: __m256i.self) })
            (constants + 3 * k + 2).initialize(to: rest.withUnsafeBytes { $0.loadUnaligned(as: __m256i.self) })
        }
        rows = down.indices
        self.slices = max(1, slices)
        ringRows = 1 << (Int.bitWidth - (taps - 1).leadingZeroBitCount)
        ring = .allocate(capacity: self.slices * ringRows * rowLength)
        ring.initialize(repeating: 0, count: self.slices * ringRows * rowLength)
        held = .allocate(capacity: self.slices * ringRows)
    }

    deinit {
        constants.deallocate()
        ring.deallocate()
        held.deallocate()
    }

    /// Output rows `rows` of `target` from `source`, with slice `slice`'s scratch.
    func run(from source: Plane, into target: Plane, rows outputRows: Range<Int>, slice: Int) {
        let ring = self.ring + slice * ringRows * rowLength
        let held = self.held + slice * ringRows
        held.update(repeating: -1, count: ringRows)
        let (taps, mask) = (self.taps, ringRows - 1)
        withUnsafeTemporaryAllocation(of: UnsafePointer<Int16>.self, capacity: taps) { inputs in
            withUnsafeTemporaryAllocation(of: __m256i.self, capacity: taps) { factors in
                guard let inputs = inputs.baseAddress, let factors = factors.baseAddress else { return }
                for y in outputRows {
                    var count = 0
                    for k in 0..<taps {
                        let factor = self.factors[y * taps + k]
                        guard factor != 0 else { continue }
                        let row = Int(rows[y * taps + k])
                        let slot = ring + (row & mask) * rowLength
                        if held[row & mask] != row {
                            horizontal(source.row(row), into: slot)
                            held[row & mask] = row
                        }
                        inputs[count] = UnsafePointer(slot)
                        factors[count] = _mm256_set1_epi16(factor)
                        count += 1
                    }
                    vertical(inputs, factors, count: count, into: target.row(y))
                }
            }
        }
    }

    /// Source row `bytes` filtered across into a ring row, chunk by chunk. Specialized (a generic function per count) for
    /// two to four pairs of taps, so that the pair loop is unrolled and its constants stay in registers.
    private func horizontal(_ bytes: UnsafePointer<UInt8>, into line: UnsafeMutablePointer<Int16>) {
        switch pairs {
        case 2: horizontal(bytes, into: line, TwoPairs.self)
        case 3: horizontal(bytes, into: line, ThreePairs.self)
        case 4: horizontal(bytes, into: line, FourPairs.self)
        default: horizontal(bytes, into: line, AnyPairs.self)
        }
    }

    private func horizontal<Count: PairCount>(_ bytes: UnsafePointer<UInt8>, into line: UnsafeMutablePointer<Int16>, _: Count.Type) {
        let pairs = Count.pairs ?? self.pairs
        let (chunks, chunkStep, laneStep, first, span, width) = (chunks, chunkStep, laneStep, first, span, sourceWidth)
        let shift = _mm_cvtsi32_si128(self.shift)
        let constants = self.constants
        /// Chunk c (32 outputs) from its four windows, `window(c · chunkStep + first + lane · laneStep)` for lanes 0–3
        /// (outputs 0–7, 8–15, 16–23, 24–31).
        @inline(__always) func chunk(_ c: Int, _ window: (Int) -> __m128i) {
            let base = c * chunkStep + first
            let even = _mm256_set_m128i(window(base + 2 * laneStep), window(base))
            let odd = _mm256_set_m128i(window(base + 3 * laneStep), window(base + laneStep))
            var (mask, coarse, rest) = (constants[0], constants[1], constants[2])
            var (evenPairs, oddPairs) = (_mm256_shuffle_epi8(even, mask), _mm256_shuffle_epi8(odd, mask))
            var evenCoarse = _mm256_maddubs_epi16(evenPairs, coarse), evenRest = _mm256_maddubs_epi16(evenPairs, rest)
            var oddCoarse = _mm256_maddubs_epi16(oddPairs, coarse), oddRest = _mm256_maddubs_epi16(oddPairs, rest)
            for k in 1..<pairs {
                (mask, coarse, rest) = (constants[3 * k], constants[3 * k + 1], constants[3 * k + 2])
                (evenPairs, oddPairs) = (_mm256_shuffle_epi8(even, mask), _mm256_shuffle_epi8(odd, mask))
                evenCoarse = _mm256_add_epi16(evenCoarse, _mm256_maddubs_epi16(evenPairs, coarse))
                evenRest = _mm256_add_epi16(evenRest, _mm256_maddubs_epi16(evenPairs, rest))
                oddCoarse = _mm256_add_epi16(oddCoarse, _mm256_maddubs_epi16(oddPairs, coarse))
                oddRest = _mm256_add_epi16(oddRest, _mm256_maddubs_epi16(oddPairs, rest))
            }
            let target = UnsafeMutableRawPointer(line + 32 * c)
            target.storeBytes(of: _mm256_add_epi16(evenCoarse, _mm256_sra_epi16(evenRest, shift)), as: __m256i.self)
            target.storeBytes(of: _mm256_add_epi16(oddCoarse, _mm256_sra_epi16(oddRest, shift)), toByteOffset: 32, as: __m256i.self)
        }
        @inline(__always) func load(_ start: Int) -> __m128i { UnsafeRawPointer(bytes + start).loadUnaligned(as: __m128i.self) }
        /// Sixteen bytes from `start` with indices clamped to the row: a shuffle of its first or last sixteen bytes (the
        /// row has at least 16: `PhaseTaps` makes at least 16 periods).
        let iota = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        @inline(__always) func clampedLoad(_ start: Int) -> __m128i {
            if start >= 0 && start + 16 <= width { return load(start) }
            if start < 0 {
                return _mm_shuffle_epi8(load(0), _mm_max_epi8(_mm_adds_epi8(iota, _mm_set1_epi8(Int8(max(start, -128)))), _mm_setzero_si128()))
            }
            return _mm_shuffle_epi8(load(width - 16), _mm_min_epi8(_mm_adds_epi8(iota, _mm_set1_epi8(Int8(min(start - width + 16, 127)))),
                                                                  _mm_set1_epi8(15)))
        }
        // Chunks c with 0 ≤ c · chunkStep + first and c · chunkStep + first + span ≤ width read the row as it is; the
        // others (at most a few at each end) read clamped windows.
        let inside = min(chunks, max(0, (-first + chunkStep - 1) / chunkStep))
        let end = max(inside, min(chunks, width - span - first >= 0 ? (width - span - first) / chunkStep + 1 : 0))
        for c in 0..<inside { chunk(c, clampedLoad) }
        for c in inside..<end { chunk(c, load) }
        for c in end..<chunks { chunk(c, clampedLoad) }
    }

    /// Output row `output` = Σ inputs[k] × factors[k] over ring rows, rounded to bytes: 64 outputs per step (each tap's
    /// row and weight loaded once for four vectors), then the last 32 on their own.
    private func vertical(_ inputs: UnsafeMutablePointer<UnsafePointer<Int16>>, _ factors: UnsafeMutablePointer<__m256i>, count: Int,
                          into output: UnsafeMutablePointer<UInt8>) {
        let half = _mm256_set1_epi16(32)
        @inline(__always) func load(_ k: Int, _ i: Int) -> __m256i { UnsafeRawPointer(inputs[k] + i).loadUnaligned(as: __m256i.self) }
        @inline(__always) func product(_ k: Int, _ i: Int) -> __m256i { _mm256_mulhrs_epi16(load(k, i), factors[k]) }
        /// Two vectors of sums (samples × 2⁶) as 32 bytes in output order, rounded and clamped.
        @inline(__always) func bytes(_ low: __m256i, _ high: __m256i) -> __m256i {
            _mm256_packus_epi16(_mm256_srai_epi16(_mm256_add_epi16(low, half), 6), _mm256_srai_epi16(_mm256_add_epi16(high, half), 6))
        }
        @inline(__always) func store(_ value: __m256i, at i: Int) {
            if i + 32 <= outputWidth {
                UnsafeMutableRawPointer(output + i).storeBytes(of: value, as: __m256i.self)
            } else {
                withUnsafeBytes(of: value) { bytes in
                    for lane in 0..<(outputWidth - i) { output[i + lane] = bytes[lane] }
                }
            }
        }
        var i = 0
        while i + 64 <= rowLength {
            var sums = (product(0, i), product(0, i + 16), product(0, i + 32), product(0, i + 48))
            for k in 1..<count {
                sums.0 = _mm256_add_epi16(sums.0, product(k, i))
                sums.1 = _mm256_add_epi16(sums.1, product(k, i + 16))
                sums.2 = _mm256_add_epi16(sums.2, product(k, i + 32))
                sums.3 = _mm256_add_epi16(sums.3, product(k, i + 48))
            }
            store(bytes(sums.0, sums.1), at: i)
            store(bytes(sums.2, sums.3), at: i + 32)
            i += 64
        }
        if i < rowLength {
            var sums = (product(0, i), product(0, i + 16))
            for k in 1..<count {
                sums.0 = _mm256_add_epi16(sums.0, product(k, i))
                sums.1 = _mm256_add_epi16(sums.1, product(k, i + 16))
            }
            store(bytes(sums.0, sums.1), at: i)
        }
    }
}

/// The number of tap pairs `ShuffleScaler.horizontal` is specialized for (nil: read at run time), as a type so that the
/// optimizer makes one copy of the pass per count.
///
/// ```swift
/// horizontal(bytes, into: line, ThreePairs.self)   // the pair loop unrolled, three times
/// ```
protocol PairCount { static var pairs: Int? { get } }
enum TwoPairs: PairCount { static var pairs: Int? { 2 } }
enum ThreePairs: PairCount { static var pairs: Int? { 3 } }
enum FourPairs: PairCount { static var pairs: Int? { 4 } }
enum AnyPairs: PairCount { static var pairs: Int? { nil } }
#endif
