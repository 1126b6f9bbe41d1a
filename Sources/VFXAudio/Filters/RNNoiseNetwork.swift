#if arch(x86_64) && VFX_HASWELL
import _Builtin_intrinsics.intel
#endif

/// RNNoise's network run by VideoFX on the library's own 8-bit weights: the same layers, the same weights
/// (read in place from the library's weight list, `rnnoise_arrays`), the same arithmetic as the library's
/// portable build, so its gains are the library's to the last bit on x86-64 (`RNNoiseNetworkTests`).
///
/// The network, per 10 ms frame of 65 features:
/// - `conv1`: a convolution over the last three frames of features (195 inputs, float weights) → 128, tanh;
/// - `conv2`: a convolution over the last three `conv1` outputs (384 inputs, 8-bit weights) → 384, tanh;
/// - three GRUs of 384 units, each on the one before (8-bit input and recurrent weights, 384 × 1152 each,
///   plus a float diagonal on the recurrent side);
/// - `dense_out`: the `conv2` output and the three GRU states (1536) → 32 band gains, sigmoid (float weights).
///
/// 8-bit layers: the input x (in [−1, 1]) is quantized to q = ⌊127·x + ½⌋; the weights are stored by blocks of
/// 8 rows × 4 columns, the blocks of a row group one after the other; each output is
/// `Float(Σ w·(q + 127)) · scale + subias` (the library's unsigned form, whose `subias` already removes the
/// 127·Σw it adds), the sum exact in 32-bit integers (`Int8Product`).
/// The activations are the library's rational approximations of tanh and the sigmoid (a reciprocal
/// estimate in their denominator on x86-64, as the library has; an exact division elsewhere).
///
/// ```swift
/// let network = RNNoiseNetwork(model: model)
/// network.run(features: features, gains: gains)    // 65 features in, 32 gains out
/// ```
final class RNNoiseNetwork {
    let model: RNNoiseModel
    private let convolution1History: SampleStorage<Float>   // conv1's input: two earlier frames + this one (195)
    private let convolution2History: SampleStorage<Float>   // conv2's input: two earlier outputs of conv1 + this one (384)
    private let concatenated: SampleStorage<Float>          // conv2's output and the three GRU states (1536)
    private let first: SampleStorage<Float>                 // conv1's output (128)
    private let gates: SampleStorage<Float>                 // a GRU's input product (1152)
    private let recurrent: SampleStorage<Float>             // a GRU's recurrent product (1152)
    private let quantized: SampleStorage<UInt8>             // an 8-bit layer's input, q + 127
    private let sums: SampleStorage<Int32>                  // an 8-bit layer's integer sums

    init(model: RNNoiseModel) {
        self.model = model
        convolution1History = SampleStorage(count: 3 * RNNoiseModel.features)
        convolution2History = SampleStorage(count: 3 * RNNoiseModel.firstWidth)
        concatenated = SampleStorage(count: 4 * RNNoiseModel.width)
        first = SampleStorage(count: RNNoiseModel.firstWidth)
        gates = SampleStorage(count: 3 * RNNoiseModel.width)
        recurrent = SampleStorage(count: 3 * RNNoiseModel.width)
        quantized = SampleStorage(count: 3 * RNNoiseModel.width)
        sums = SampleStorage(count: 3 * RNNoiseModel.width)
    }

    /// Clears the convolutions' history and the GRU states (a new stream).
    func reset() {
        convolution1History.zero()
        convolution2History.zero()
        concatenated.zero()
    }

    /// One frame: 65 features in, 32 band gains (0…1) out.
    func run(features: UnsafePointer<Float>, gains: UnsafeMutablePointer<Float>) {
        let count = RNNoiseModel.features, width = RNNoiseModel.width, firstWidth = RNNoiseModel.firstWidth
        // conv1 over [two frames back, one frame back, this frame].
        let history1 = convolution1History.pointer
        history1.update(from: history1 + count, count: 2 * count)
        (history1 + 2 * count).update(from: features, count: count)
        RNNoiseActivation.floatProduct(model.convolution1, input: history1, output: first.pointer)
        RNNoiseActivation.tanh(first.pointer, count: firstWidth)
        // conv2 likewise over conv1's outputs, into the first quarter of the concatenation.
        let history2 = convolution2History.pointer
        history2.update(from: history2 + firstWidth, count: 2 * firstWidth)
        (history2 + 2 * firstWidth).update(from: first.pointer, count: firstWidth)
        let cat = concatenated.pointer
        product(model.convolution2, input: history2, output: cat)
        RNNoiseActivation.tanh(cat, count: width)
        // The GRUs keep their states in the concatenation, each reading the one before.
        gru(model.gru1, input: cat, state: cat + width)
        gru(model.gru2, input: cat + width, state: cat + 2 * width)
        gru(model.gru3, input: cat + 2 * width, state: cat + 3 * width)
        RNNoiseActivation.floatProduct(model.output, input: cat, output: gains)
        RNNoiseActivation.sigmoid(gains, count: RNNoiseModel.bands)
    }

    /// A GRU with the library's gate order (update z, reset r, candidate h) and reset-after formulation:
    /// z, r = σ(Wx + Uh); h̃ = tanh(W_h x + r ⊙ (U_h h)); h ← z ⊙ h + (1 − z) ⊙ h̃.
    private func gru(_ layer: RNNoiseModel.GRU, input: UnsafePointer<Float>, state: UnsafeMutablePointer<Float>) {
        let n = RNNoiseModel.width
        let zrh = gates.pointer, recur = recurrent.pointer
        product(layer.input, input: input, output: zrh)
        product(layer.recurrent, input: state, output: recur)
        if let diagonal = layer.diagonal {
            for index in 0..<n {
                let value = state[index]
                recur[index] += diagonal[index] * value
                recur[index + n] += diagonal[index + n] * value
                recur[index + 2 * n] += diagonal[index + 2 * n] * value
            }
        }
        for index in 0..<2 * n { zrh[index] += recur[index] }
        RNNoiseActivation.sigmoid(zrh, count: 2 * n)
        let z = zrh, r = zrh + n, h = zrh + 2 * n
        for index in 0..<n { h[index] += recur[2 * n + index] * r[index] }
        RNNoiseActivation.tanh(h, count: n)
        for index in 0..<n { state[index] = z[index] * state[index] + (1 - z[index]) * h[index] }
    }

    /// An 8-bit layer: quantize the input, integer sums, then `Float(sum) · scale + subias`.
    private func product(_ layer: RNNoiseModel.QuantizedLayer, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        let u = quantized.pointer
        // As the library rounds: q = ⌊127·x + ½⌋ with the product in single precision and the rest exact (it
        // takes the half and the floor in double). Here ⌊f + ½⌋ = ⌊f⌋ + (f − ⌊f⌋ ≥ ½), all exact in single
        // precision, eight inputs at a time (the layers' widths are multiples of 8).
        let raw = UnsafeRawPointer(input)
        for column in stride(from: 0, to: layer.columns, by: 8) {
            let f = 127 * raw.loadUnaligned(fromByteOffset: 4 * column, as: SIMD8<Float>.self)
            let whole = f.rounded(.down)
            // q + 127 as a float (a small whole number, exact), converted lane by lane.
            let q = whole + SIMD8(repeating: 127) + SIMD8(repeating: 1).replacing(with: 0, where: f - whole .< 0.5)
            for lane in 0..<8 { u[column + lane] = UInt8(q[lane]) }
        }
        Int8Product.run(layer, input: u, into: sums.pointer)
        let s = sums.pointer
        for row in 0..<layer.rows {
            output[row] = Float(s[row]) * layer.scale[row] + layer.subias[row]
        }
    }
}

/// The weights of RNNoise's network as the library holds them (pointers into its weight list; nothing is
/// copied but the 127·Σw offset of each 8-bit row), checked against the shapes this code runs.
struct RNNoiseModel: @unchecked Sendable {
    // Sendable: every pointer refers to the loaded library's constant data (or to `offsets`, filled in init),
    // only ever read after init.
    static let features = 65
    static let firstWidth = 128
    static let width = 384
    static let bands = 32

    /// A float layer: `rows` outputs, weights stored column by column (`rows` per column), plus a bias.
    struct FloatLayer {
        let weights: UnsafePointer<Float>
        let bias: UnsafePointer<Float>
        let rows: Int
        let columns: Int
    }

    /// An 8-bit layer in 8 × 4 blocks, with its per-row scale, its unsigned-form bias, and the 127·Σw offsets
    /// (filled only for a layer that needs the signed-input kernel, zero otherwise).
    struct QuantizedLayer {
        let weights: UnsafePointer<Int8>
        let scale: UnsafePointer<Float>
        let subias: UnsafePointer<Float>
        let offset: UnsafePointer<Int32>
        let rows: Int
        let columns: Int
        /// True when no two weights that share a 16-bit pair sum (columns 0–1 or 2–3 of a row in a block)
        /// can exceed 32 767 in magnitude against inputs 0…254: |w₀| + |w₁| ≤ 129 where both have the same
        /// sign (opposite signs give at most 254·128). RNNoise's training keeps its weights so.
        let pairsFitSixteenBits: Bool
    }

    struct GRU {
        let input: QuantizedLayer
        let recurrent: QuantizedLayer
        let diagonal: UnsafePointer<Float>?
    }

    let convolution1: FloatLayer
    let convolution2: QuantizedLayer
    let gru1, gru2, gru3: GRU
    let output: FloatLayer
    /// The 8-bit weights' total size (bytes), which every frame reads once.
    let quantizedBytes: Int
    private let offsets: UnsafeMutablePointer<Int32>

    /// The arrays of the library's weight list by name (type, size in bytes, data). Nil when a layer is
    /// missing or has another shape than RNNoise 0.2's, or a GRU matrix is sparse (a block left out).
    init?(arrays: [String: (type: Int32, size: Int, data: UnsafeRawPointer)]) {
        func floats(_ name: String, _ count: Int) -> UnsafePointer<Float>? {
            guard let array = arrays[name], array.type == 0, array.size == 4 * count else { return nil }
            return array.data.assumingMemoryBound(to: Float.self)
        }
        func floatLayer(_ name: String, rows: Int, columns: Int) -> FloatLayer? {
            guard let weights = floats(name + "_weights_float", rows * columns), let bias = floats(name + "_bias", rows) else {
                return nil
            }
            return FloatLayer(weights: weights, bias: bias, rows: rows, columns: columns)
        }
        var pending: [(name: String, rows: Int, columns: Int)] = [("conv2", Self.width, 3 * Self.firstWidth)]
        for layer in ["gru1", "gru2", "gru3"] {
            pending.append((layer + "_input", 3 * Self.width, Self.width))
            pending.append((layer + "_recurrent", 3 * Self.width, Self.width))
        }
        let totalRows = pending.reduce(0) { $0 + $1.rows }
        offsets = .allocate(capacity: totalRows)
        var layers: [String: QuantizedLayer] = [:]
        var cursor = offsets
        var bytes = 0
        for (name, rows, columns) in pending {
            guard let array = arrays[name + "_weights_int8"], array.type == 3, array.size == rows * columns,
                  let scale = floats(name + "_scale", rows), let subias = floats(name + "_subias", rows),
                  Self.isDense(arrays[name + "_weights_idx"], rows: rows, columns: columns) else {
                offsets.deallocate()
                return nil
            }
            let weights = array.data.assumingMemoryBound(to: Int8.self)
            // Same-signed pairs exceed 129 in magnitude exactly when |w₀ + w₁| does (opposite signs stay ≤ 127).
            var widest: Int32 = 0
            for pair in 0..<rows * columns / 2 {
                widest = max(widest, abs(Int32(weights[2 * pair]) + Int32(weights[2 * pair + 1])))
            }
            let fits = widest <= 129
            // Σw per row, from the 8 × 4 blocks (a row's four weights of a block are consecutive), for the
            // signed-input kernel only.
            cursor.initialize(repeating: 0, count: rows)
            if !fits {
                for group in 0..<rows / 8 {
                    for block in 0..<columns / 4 {
                        let base = weights + (group * columns / 4 + block) * 32
                        for row in 0..<8 {
                            let w = base + 4 * row
                            cursor[group * 8 + row] += 127 * (Int32(w[0]) + Int32(w[1]) + Int32(w[2]) + Int32(w[3]))
                        }
                    }
                }
            }
            layers[name] = QuantizedLayer(weights: weights, scale: scale, subias: subias, offset: cursor, rows: rows,
                                          columns: columns, pairsFitSixteenBits: fits)
            cursor += rows
            bytes += rows * columns
        }
        guard let first = floatLayer("conv1", rows: Self.firstWidth, columns: 3 * Self.features),
              let output = floatLayer("dense_out", rows: Self.bands, columns: 4 * Self.width),
              let conv2 = layers["conv2"] else {
            offsets.deallocate()
            return nil
        }
        func gru(_ name: String) -> GRU? {
            guard let input = layers[name + "_input"], let recurrent = layers[name + "_recurrent"] else { return nil }
            return GRU(input: input, recurrent: recurrent, diagonal: floats(name + "_recurrent_weights_diag", 3 * Self.width))
        }
        guard let gru1 = gru("gru1"), let gru2 = gru("gru2"), let gru3 = gru("gru3") else {
            offsets.deallocate()
            return nil
        }
        convolution1 = first
        convolution2 = conv2
        self.gru1 = gru1
        self.gru2 = gru2
        self.gru3 = gru3
        self.output = output
        quantizedBytes = bytes
    }

    /// True when a matrix has no block index, or one that lists every 4-column block of every 8-row group in
    /// order (the library's sparse form of a dense matrix, as RNNoise 0.2's GRUs ship).
    private static func isDense(_ index: (type: Int32, size: Int, data: UnsafeRawPointer)?, rows: Int, columns: Int) -> Bool {
        guard let index else { return true }
        let blocks = columns / 4
        guard index.type == 1, index.size == 4 * (rows / 8) * (blocks + 1) else { return false }
        let entries = index.data.assumingMemoryBound(to: Int32.self)
        var position = 0
        for _ in 0..<rows / 8 {
            guard entries[position] == blocks else { return false }
            position += 1
            for block in 0..<blocks {
                guard entries[position] == Int32(4 * block) else { return false }
                position += 1
            }
        }
        return true
    }
}

/// The integer heart of the 8-bit layers: for weights in 8 × 4 blocks and inputs u = q + 127 (0…254),
/// `sums[r] = Σ_c w[r][c] · u[c]`, exactly in 32 bits.
///
/// On x86-64 release builds (Haswell baseline, AVX2) a 32-byte block of weights (8 rows × 4 columns) meets
/// the block's four inputs broadcast to all rows:
/// - `vpmaddubsw(u, w)` multiplies unsigned inputs by signed weights and adds pairs into 16 bits, then
///   `vpmaddwd` with ones adds the pairs into the eight rows' 32-bit sums: 4 instructions per 32 weights.
///   It is exact when no pair can pass 32 767 (`pairsFitSixteenBits`, true of every layer of RNNoise 0.2);
/// - otherwise `vpmaddubsw(|w|, sign(q, w))` on q = u − 127 (pairs at most 2·128·127 = 32 512: never
///   saturates), plus 127·Σw per row.
/// Elsewhere (arm64, debug builds) the same sums by plain integer loops.
enum Int8Product {
    static func run(_ layer: RNNoiseModel.QuantizedLayer, input: UnsafePointer<UInt8>, into sums: UnsafeMutablePointer<Int32>) {
        #if arch(x86_64) && VFX_HASWELL
        if layer.pairsFitSixteenBits {
            unsignedInputs(layer.weights, rows: layer.rows, columns: layer.columns, input: input, into: sums)
        } else {
            signedInputs(layer.weights, rows: layer.rows, columns: layer.columns, input: input, into: sums)
            for row in 0..<layer.rows { sums[row] &+= layer.offset[row] }
        }
        #else
        portable(layer.weights, rows: layer.rows, columns: layer.columns, input: input, into: sums)
        #endif
    }

    /// The plain loops (every platform; the reference the vector kernels are tested against).
    static func portable(_ weights: UnsafePointer<Int8>, rows: Int, columns: Int, input: UnsafePointer<UInt8>,
                         into sums: UnsafeMutablePointer<Int32>) {
        var w = weights
        for group in stride(from: 0, to: rows, by: 8) {
            var acc = SIMD8<Int32>()
            for block in stride(from: 0, to: columns, by: 4) {
                let x0 = Int32(input[block]), x1 = Int32(input[block + 1])
                let x2 = Int32(input[block + 2]), x3 = Int32(input[block + 3])
                for row in 0..<8 {
                    let r = w + 4 * row
                    acc[row] &+= Int32(r[0]) &* x0 &+ Int32(r[1]) &* x1 &+ Int32(r[2]) &* x2 &+ Int32(r[3]) &* x3
                }
                w += 32
            }
            for row in 0..<8 { sums[group + row] = acc[row] }
        }
    }

    #if arch(x86_64) && VFX_HASWELL
    /// Σ w·u with `vpmaddubsw(u, w)`: exact only for layers whose pairs fit 16 bits.
    static func unsignedInputs(_ weights: UnsafePointer<Int8>, rows: Int, columns: Int, input: UnsafePointer<UInt8>,
                               into sums: UnsafeMutablePointer<Int32>) {
        let ones = _mm256_set1_epi16(1)
        blocks(weights, rows: rows, columns: columns, input: input, into: sums) { w, u in
            _mm256_madd_epi16(_mm256_maddubs_epi16(u, w), ones)
        }
    }

    /// Σ w·q with `vpmaddubsw(|w|, sign(q, w))`, q = u − 127 (exact for any weights but −128).
    static func signedInputs(_ weights: UnsafePointer<Int8>, rows: Int, columns: Int, input: UnsafePointer<UInt8>,
                             into sums: UnsafeMutablePointer<Int32>) {
        let ones = _mm256_set1_epi16(1), offset = _mm256_set1_epi8(127)
        blocks(weights, rows: rows, columns: columns, input: input, into: sums) { w, u in
            let q = _mm256_sub_epi8(u, offset)
            return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(q, w)), ones)
        }
    }

    /// The walk over the blocks, two per step into two accumulators; `multiply` turns a block of weights
    /// and the broadcast inputs into the eight rows' partial sums.
    @inline(__always)
    private static func blocks(_ weights: UnsafePointer<Int8>, rows: Int, columns: Int, input: UnsafePointer<UInt8>,
                               into sums: UnsafeMutablePointer<Int32>, multiply: (__m256i, __m256i) -> __m256i) {
        let count = columns / 4
        let x = UnsafeRawPointer(input)
        var w = UnsafeRawPointer(weights)
        for group in stride(from: 0, to: rows, by: 8) {
            var even = _mm256_setzero_si256(), odd = _mm256_setzero_si256()
            var block = 0
            while block + 1 < count {
                let u0 = _mm256_set1_epi32(x.loadUnaligned(fromByteOffset: 4 * block, as: Int32.self))
                let u1 = _mm256_set1_epi32(x.loadUnaligned(fromByteOffset: 4 * block + 4, as: Int32.self))
                even = _mm256_add_epi32(even, multiply(w.loadUnaligned(as: __m256i.self), u0))
                odd = _mm256_add_epi32(odd, multiply(w.loadUnaligned(fromByteOffset: 32, as: __m256i.self), u1))
                w += 64
                block += 2
            }
            if block < count {
                let u0 = _mm256_set1_epi32(x.loadUnaligned(fromByteOffset: 4 * block, as: Int32.self))
                even = _mm256_add_epi32(even, multiply(w.loadUnaligned(as: __m256i.self), u0))
                w += 32
            }
            UnsafeMutableRawPointer(sums + group).storeBytes(of: _mm256_add_epi32(even, odd), as: __m256i.self)
        }
    }
    #endif
}

/// The library's activations and float matrix products, operation for operation.
enum RNNoiseActivation {
    /// A float layer, `output[r] = Σ_c w[c][r] · x[c] + bias[r]`, the columns summed in order (one product
    /// and one addition each, no fused multiply-add), eight rows at a time.
    static func floatProduct(_ layer: RNNoiseModel.FloatLayer, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        let rows = layer.rows
        let w = UnsafeRawPointer(layer.weights)
        // 32 rows at a time (four independent sums per column), then 8 at a time.
        var group = 0
        while group + 32 <= rows {
            var a = SIMD8<Float>(), b = SIMD8<Float>(), c = SIMD8<Float>(), d = SIMD8<Float>()
            for column in 0..<layer.columns {
                let x = SIMD8(repeating: input[column])
                let base = 4 * (column * rows + group)
                a = a + w.loadUnaligned(fromByteOffset: base, as: SIMD8<Float>.self) * x
                b = b + w.loadUnaligned(fromByteOffset: base + 32, as: SIMD8<Float>.self) * x
                c = c + w.loadUnaligned(fromByteOffset: base + 64, as: SIMD8<Float>.self) * x
                d = d + w.loadUnaligned(fromByteOffset: base + 96, as: SIMD8<Float>.self) * x
            }
            store(a, bias: layer.bias, row: group, output: output)
            store(b, bias: layer.bias, row: group + 8, output: output)
            store(c, bias: layer.bias, row: group + 16, output: output)
            store(d, bias: layer.bias, row: group + 24, output: output)
            group += 32
        }
        while group < rows {
            var acc = SIMD8<Float>()
            for column in 0..<layer.columns {
                let weights = w.loadUnaligned(fromByteOffset: 4 * (column * rows + group), as: SIMD8<Float>.self)
                acc = acc + weights * SIMD8(repeating: input[column])
            }
            store(acc, bias: layer.bias, row: group, output: output)
            group += 8
        }
    }

    @inline(__always)
    private static func store(_ sum: SIMD8<Float>, bias: UnsafePointer<Float>, row: Int, output: UnsafeMutablePointer<Float>) {
        let b = UnsafeRawPointer(bias).loadUnaligned(fromByteOffset: 4 * row, as: SIMD8<Float>.self)
        UnsafeMutableRawPointer(output + row).storeBytes(of: sum + b, as: SIMD8<Float>.self)
    }

    /// tanh(x) ≈ x·(N0 + N1x² + N2x⁴)/(D0 + D1x² + D2x⁴), clamped to ±1, in place (`count` a multiple of 8).
    static func tanh(_ values: UnsafeMutablePointer<Float>, count: Int) {
        let raw = UnsafeMutableRawPointer(values)
        for offset in stride(from: 0, to: 4 * count, by: 32) {
            let x = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            let x2 = x * x
            let numerator = ((0.608_630_42 * x2 + 96.392_356_87) * x2 + 952.528_015_14) * x
            let denominator = (11.886_009_22 * x2 + 413.368_011_47) * x2 + 952.723_999_02
            let y = clamp(numerator * reciprocal(denominator), -1, 1)
            raw.storeBytes(of: y, toByteOffset: offset, as: SIMD8<Float>.self)
        }
    }

    /// σ(x) ≈ ½ + x·(N0 + N1x² + N2x⁴)/(D0 + D1x² + D2x⁴) (the tanh's coefficients rescaled), clamped to 0…1.
    static func sigmoid(_ values: UnsafeMutablePointer<Float>, count: Int) {
        let raw = UnsafeMutableRawPointer(values)
        for offset in stride(from: 0, to: 4 * count, by: 32) {
            let x = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            let x2 = x * x
            let numerator = ((0.009_509_85 * x2 + 6.024_522_30) * x2 + 238.132_003_78) * x
            let denominator = (0.742_875_58 * x2 + 103.342_002_87) * x2 + 952.723_999_02
            let y = clamp(numerator * reciprocal(denominator) + 0.5, 0, 1)
            raw.storeBytes(of: y, toByteOffset: offset, as: SIMD8<Float>.self)
        }
    }

    /// max(lower, min(upper, x)), lane by lane.
    @inline(__always) static func clamp(_ x: SIMD8<Float>, _ lower: Float, _ upper: Float) -> SIMD8<Float> {
        let low = SIMD8(repeating: lower), high = SIMD8(repeating: upper)
        let capped = x.replacing(with: high, where: x .> high)
        return capped.replacing(with: low, where: capped .< low)
    }

    /// 1/x: the processor's 12-bit estimate on x86-64 (as the library's SSE code takes), exact elsewhere.
    @inline(__always) static func reciprocal(_ x: SIMD8<Float>) -> SIMD8<Float> {
        #if arch(x86_64) && VFX_HASWELL
        _mm256_rcp_ps(x)   // __m256 is SIMD8<Float> in Swift
        #else
        1 / x
        #endif
    }
}
