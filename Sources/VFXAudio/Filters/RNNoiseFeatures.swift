import Foundation

/// The 65 features RNNoise's network reads each 10 ms frame, computed as the library's
/// `rnn_compute_frame_features` does, with the FFTs and the pitch search in VideoFX's SIMD code.
///
/// Per frame: the windowed spectrum X of the last 960 samples and its 32 band energies; the pitch period:
/// the pitch buffer (the last 1728 samples) low-passed and halved (`rnn_pitch_downsample`), a coarse search
/// by cross-correlation at a quarter of the rate, a fine one at half the rate around the two best coarse
/// periods (here), then the check against period doubling (`rnn_remove_doubling`); the spectrum P of the signal one period back and its band energies; the
/// normalized band correlations of X and P. Features: the DCT of the log band energies (floored against the
/// loudest band and the one before), the DCT of the correlations, and the period.
///
/// The cross-correlations take eight periods per vector, each sum in the library's order (one product and
/// one addition per term, in order of time); the spectra come from `RealFFT960` instead of the library's
/// complex 960-point FFT, so the features differ from the library's by the FFTs' rounding (about 1e-7 of
/// the values; `RNNoiseNetworkTests`).
///
/// ```swift
/// let features = RNNoiseFeatures(functions: functions)
/// let silent = features.compute(spectrum: x, pitchSpectrum: p, energies: ex, pitchEnergies: ep,
///                               correlation: exp, features: values, input: highPassed)
/// ```
final class RNNoiseFeatures {
    static let frame = 480, window = 960, bins = 481, bands = 32
    static let minimumPeriod = 60, maximumPeriod = 768, pitchFrame = 960
    static let bufferSize = maximumPeriod + pitchFrame   // 1728

    let functions: RNNoiseLibrary.FrameFunctions
    private let pitchBuffer = SampleStorage<Float>(count: RNNoiseFeatures.bufferSize)
    private let lowPassed = SampleStorage<Float>(count: RNNoiseFeatures.bufferSize / 2)
    private let correlations = SampleStorage<Float>(count: RNNoiseFeatures.maximumPeriod / 2)
    /// The quarter-rate signals of the coarse search: 240 samples of the frame, then 432 of the buffer.
    private let quarter = SampleStorage<Float>(count: RNNoiseFeatures.pitchFrame / 4
                                                      + (RNNoiseFeatures.pitchFrame + RNNoiseFeatures.maximumPeriod) / 4)
    private let sums = SampleStorage<Float>(count: RNNoiseFeatures.bands + 2)
    /// Per bin, its place between the edges of its band: j / size, as the library computes it.
    private let fractions = SampleStorage<Float>(count: RNNoiseFeatures.bins)
    private let analysisMemory = SampleStorage<Float>(count: RNNoiseFeatures.frame)    // the previous 480 samples
    private let windowed = SampleStorage<Float>(count: RNNoiseFeatures.window)
    let fft = RealFFT960()
    private let logEnergies = SampleStorage<Float>(count: RNNoiseFeatures.bands)
    private let bufferPointer = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 1)
    private var lastPeriod: Int32 = 0
    private var lastGain: Float = 0

    init(functions: RNNoiseLibrary.FrameFunctions) {
        self.functions = functions
        bufferPointer.initialize(to: pitchBuffer.pointer)
        let edges = functions.bandEdges
        for band in 0...Self.bands {
            let start = Int(edges[band]), size = Int(edges[band + 1]) - start
            for offset in 0..<size { fractions[start + offset] = Float(offset) / Float(size) }
        }
    }

    deinit { bufferPointer.deallocate() }

    /// Fills X, P (481 complex bins each, interleaved), Ex, Ep, Exp (32 each) and the 65 features from the
    /// 480 high-passed samples `input`; true for a silent frame (features zero, the network not to run).
    func compute(spectrum: UnsafeMutablePointer<Float>, pitchSpectrum: UnsafeMutablePointer<Float>,
                 energies ex: UnsafeMutablePointer<Float>, pitchEnergies ep: UnsafeMutablePointer<Float>,
                 correlation exp: UnsafeMutablePointer<Float>, features: UnsafeMutablePointer<Float>,
                 input: UnsafePointer<Float>) -> Bool {
        let bands = Self.bands, size = Self.bufferSize, frame = Self.frame, n = Self.window
        // X: the window over the previous frame and this one.
        let memory = analysisMemory.pointer, samples = windowed.pointer
        samples.update(from: memory, count: frame)
        (samples + frame).update(from: input, count: frame)
        memory.update(from: input, count: frame)
        applyWindow(samples)
        fft.forward(samples, into: spectrum)
        bandSums(spectrum, spectrum, into: ex)
        let buffer = pitchBuffer.pointer
        buffer.update(from: buffer + frame, count: size - frame)
        (buffer + size - frame).update(from: input, count: frame)
        functions.pitchDownsample(bufferPointer, lowPassed.pointer, Int32(size), 1)
        var period = Int32(Self.maximumPeriod - search())
        let gain = functions.removeDoubling(lowPassed.pointer, Int32(Self.maximumPeriod), Int32(Self.minimumPeriod),
                                            Int32(Self.pitchFrame), &period, lastPeriod, lastGain)
        lastPeriod = period
        lastGain = gain
        // P: the spectrum of the window one period back.
        samples.update(from: buffer + size - n - Int(period), count: n)
        applyWindow(samples)
        fft.forward(samples, into: pitchSpectrum)
        bandSums(pitchSpectrum, pitchSpectrum, into: ep)
        bandSums(spectrum, pitchSpectrum, into: exp)
        for band in 0..<bands {
            exp[band] = Float(Double(exp[band]) / (0.001 + Double(ex[band] * ep[band])).squareRoot())
        }
        dct(exp, into: features + bands)
        features[2 * bands] = Float(0.01 * Double(period - 300))
        // Log energies, floored 7 decades under the loudest band so far and 1.5 under the one before.
        let ly = logEnergies.pointer
        var loudest: Float = -2, follow: Float = -2, total: Float = 0
        for band in 0..<bands {
            let value = Double(Float(log10(0.01 + Double(ex[band]))))
            let inner = Double(follow) - 1.5 > value ? Double(follow) - 1.5 : value
            let floor = Double(loudest - 7)
            ly[band] = Float(floor > inner ? floor : inner)
            loudest = loudest > ly[band] ? loudest : ly[band]
            follow = Float(Double(follow) - 1.5 > Double(ly[band]) ? Double(follow) - 1.5 : Double(ly[band]))
            total += ex[band]
        }
        if Double(total) < 0.04 {
            features.update(repeating: 0, count: RNNoiseModel.features)
            return true
        }
        dct(ly, into: features)
        features[0] -= 12
        features[1] -= 4
        return false
    }

    /// The pitch search on the low-passed, halved buffer: the lag (0…587 at the halved rate, in samples of
    /// the full rate after doubling) of the best correlation of the last 480 halved samples with the
    /// buffer, as the library's `rnn_pitch_search(buffer + 384, buffer, 960, 588, &pitch)`.
    private func search() -> Int {
        let length = Self.pitchFrame, lags = Self.maximumPeriod - 3 * Self.minimumPeriod   // 960, 588
        let y = lowPassed.pointer, x = y + Self.maximumPeriod / 2
        let q = quarter.pointer, xcorr = correlations.pointer
        // Coarse: a quarter of the rate (x: 240 samples at q[0...], y: 387 samples after them).
        let shortX = length >> 2, shortY = (length + lags) >> 2
        let yq = q + shortX
        for j in 0..<shortX { q[j] = x[2 * j] }
        for j in 0..<shortY { yq[j] = y[2 * j] }
        Self.correlate(q, yq, length: shortX, lags: lags >> 2, into: xcorr)
        var best = Self.bestPitch(xcorr, yq, length: shortX, lags: lags >> 2)
        // Fine: half the rate, within two lags of twice each coarse best.
        let half = lags >> 1, fineLength = length >> 1
        xcorr.update(repeating: 0, count: half)
        let first0 = max(0, min(2 * best.0 - 2, half - 8)), first1 = max(0, min(2 * best.1 - 2, half - 8))
        let fine = Self.correlate4(x, y, length: fineLength, starts: (first0, first1, first0, first1))
        for lane in 0..<8 {
            if abs(first0 + lane - 2 * best.0) <= 2 { xcorr[first0 + lane] = -1 > fine.0[lane] ? -1 : fine.0[lane] }
            if abs(first1 + lane - 2 * best.1) <= 2 { xcorr[first1 + lane] = -1 > fine.1[lane] ? -1 : fine.1[lane] }
        }
        best = Self.bestPitch(xcorr, y, length: fineLength, lags: half)
        // Pseudo-interpolation by the neighbours' correlations.
        var offset = 0
        if best.0 > 0 && best.0 < half - 1 {
            let a = xcorr[best.0 - 1], b = xcorr[best.0], c = xcorr[best.0 + 1]
            if c - a > 0.7 * (b - a) {
                offset = 1
            } else if a - c > 0.7 * (b - c) {
                offset = -1
            }
        }
        return 2 * best.0 - offset
    }

    /// `out[lag] = Σ_j x[j]·y[lag + j]` for lag in 0..<lags (at least 8), each sum in order of j: vectors of
    /// eight lags, four at a time (independent sums per lane), the last vector ending at the last lag
    /// (overlapping the one before when `lags` is not a multiple of 8).
    static func correlate(_ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, length: Int, lags: Int,
                          into out: UnsafeMutablePointer<Float>) {
        let vectors = (lags + 7) / 8
        var vector = 0
        while vector < vectors {
            // Up to four vectors; a short last pass repeats its last vector.
            let a = min(8 * vector, lags - 8), b = min(8 * (vector + 1), lags - 8)
            let c = min(8 * (vector + 2), lags - 8), d = min(8 * (vector + 3), lags - 8)
            let sums = correlate4(x, y, length: length, starts: (a, b, c, d))
            // Stored last to first, so a repeated or overlapping vector leaves the same sums.
            UnsafeMutableRawPointer(out + d).storeBytes(of: sums.3, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(out + c).storeBytes(of: sums.2, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(out + b).storeBytes(of: sums.1, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(out + a).storeBytes(of: sums.0, as: SIMD8<Float>.self)
            vector += 4
        }
    }

    /// Four vectors of eight lags, starting at `starts`, in one pass over x.
    @inline(__always)
    static func correlate4(_ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>, length: Int, starts: (Int, Int, Int, Int))
        -> (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>) {
        let ya = UnsafeRawPointer(y + starts.0), yb = UnsafeRawPointer(y + starts.1)
        let yc = UnsafeRawPointer(y + starts.2), yd = UnsafeRawPointer(y + starts.3)
        var a = SIMD8<Float>(), b = SIMD8<Float>(), c = SIMD8<Float>(), d = SIMD8<Float>()
        for j in 0..<length {
            let v = SIMD8(repeating: x[j]), offset = 4 * j
            a = a + v * ya.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            b = b + v * yb.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            c = c + v * yc.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            d = d + v * yd.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
        }
        return (a, b, c, d)
    }

    /// The two lags with the highest normalized correlation xcorr² / Σy² (positive correlations only), as
    /// the library's `find_best_pitch`.
    static func bestPitch(_ xcorr: UnsafePointer<Float>, _ y: UnsafePointer<Float>, length: Int, lags: Int) -> (Int, Int) {
        var energy: Float = 1
        for j in 0..<length { energy = energy + y[j] * y[j] }
        var bestNumerator: (Float, Float) = (-1, -1), bestDenominator: (Float, Float) = (0, 0), best = (0, 1)
        for lag in 0..<lags {
            if xcorr[lag] > 0 {
                let scaled = xcorr[lag] * 1e-12
                let numerator = scaled * scaled
                if numerator * bestDenominator.1 > bestNumerator.1 * energy {
                    if numerator * bestDenominator.0 > bestNumerator.0 * energy {
                        bestNumerator.1 = bestNumerator.0
                        bestDenominator.1 = bestDenominator.0
                        best.1 = best.0
                        bestNumerator.0 = numerator
                        bestDenominator.0 = energy
                        best.0 = lag
                    } else {
                        bestNumerator.1 = numerator
                        bestDenominator.1 = energy
                        best.1 = lag
                    }
                }
            }
            energy += y[lag + length] * y[lag + length] - y[lag] * y[lag]
            energy = 1 > energy ? 1 : energy
        }
        return best
    }

    /// Band sums of Re(a·conj(b)) with triangular weights between band edges (energies when a = b), the
    /// first and last bands folded in by 2/3 as the library does.
    private func bandSums(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, into result: UnsafeMutablePointer<Float>) {
        let edges = functions.bandEdges, bands = Self.bands
        let sum = sums.pointer
        sum.update(repeating: 0, count: bands + 2)
        for band in 0...bands {
            let start = Int(edges[band]), size = Int(edges[band + 1]) - start
            for bin in start..<start + size {
                let fraction = fractions[bin]
                var value = a[2 * bin] * b[2 * bin]
                value += a[2 * bin + 1] * b[2 * bin + 1]
                sum[band] += (1 - fraction) * value
                sum[band + 1] += fraction * value
            }
        }
        sum[1] = (sum[0] + sum[1]) * 2 / 3
        sum[bands] = (sum[bands] + sum[bands + 1]) * 2 / 3
        for band in 0..<bands { result[band] = sum[band + 1] }
    }

    /// RNNoise's window (the library's half, mirrored) applied to 960 samples in place.
    func applyWindow(_ samples: UnsafeMutablePointer<Float>) {
        let window = functions.window, n = Self.window
        for index in 0..<Self.frame {
            samples[index] *= window[index]
            samples[n - 1 - index] *= window[index]
        }
    }

    /// The library's DCT of 32 values (its table, summed in order, scaled by √(2/22)).
    private func dct(_ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>) {
        let table = functions.dctTable, bands = Self.bands
        for k in 0..<bands {
            var sum: Float = 0
            for j in 0..<bands { sum += input[j] * table[j * bands + k] }
            output[k] = Float(Double(sum) * (2.0 / 22).squareRoot())
        }
    }
}
