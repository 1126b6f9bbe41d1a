import Foundation

/// The discrete Fourier transform of 960 real samples (RNNoise's 20 ms window at 48 kHz), with RNNoise's
/// conventions: `forward` gives bins 0…480 scaled by 1/960, X[k] = (1/960) Σ x[n] e^(−2πikn/960);
/// `inverse` takes bins 0…480 of a Hermitian spectrum (the imaginary parts of bins 0 and 480 ignored) to
/// x[n] = Σ_{k<960} X[k] e^(2πikn/960), unscaled. Spectra are interleaved (real, imaginary).
///
/// The 960 real samples are 480 complex ones (even samples real, odd imaginary), transformed by a
/// Cooley–Tukey split 480 = 32 × 15: fifteen 32-point radix-2 transforms side by side in the lanes of
/// SIMD16 vectors, the twiddles e^(−2πi·n₂k₁/480), then thirty-two 15-point transforms (Good–Thomas,
/// 3 × 5), sixteen side by side; one pass then untangles the even and odd halves. All tables and scratch memory are made in
/// `init`; `forward` and `inverse` allocate nothing.
///
/// ```swift
/// let fft = RealFFT960()
/// fft.forward(samples, into: spectrum)     // spectrum: 481 complex bins, 962 floats
/// fft.inverse(spectrum, into: samples)
/// ```
final class RealFFT960 {
    static let size = 960, half = 480, rows = 32, columns = 15

    /// Per 32-point stage element: e^(−2πim/32), m < 16.
    private let stageCos = SampleStorage<Float>(count: 16)
    private let stageSin = SampleStorage<Float>(count: 16)
    /// e^(−2πi·n₂k₁/480) for k₁ < 32 (rows), n₂ < 16 (lanes; lane 15 unused).
    private let twiddleCos = SampleStorage<Float>(count: 32 * 16)
    private let twiddleSin = SampleStorage<Float>(count: 32 * 16)
    /// e^(−2πik/960) for k ≤ 480 (the untangling pass).
    private let untangleCos = SampleStorage<Float>(count: 481)
    private let untangleSin = SampleStorage<Float>(count: 481)
    private let bitReversed: [Int] = (0..<32).map { index in
        var reversed = 0
        for bit in 0..<5 where index & (1 << bit) != 0 { reversed |= 1 << (4 - bit) }
        return reversed
    }
    private let real = SampleStorage<Float>(count: 32 * 16)        // the 32 × 16 working matrix
    private let imaginary = SampleStorage<Float>(count: 32 * 16)
    private let turnedReal = SampleStorage<Float>(count: 15 * 32)  // the matrix turned: rows n₂, lanes k₁
    private let turnedImaginary = SampleStorage<Float>(count: 15 * 32)
    private let stageReal = SampleStorage<Float>(count: 15 * 16)   // the five-point transforms' results
    private let stageImaginary = SampleStorage<Float>(count: 15 * 16)
    private let outReal = SampleStorage<Float>(count: 480)         // the 480-point result
    private let outImaginary = SampleStorage<Float>(count: 480)
    private let inReal = SampleStorage<Float>(count: 496)          // the 480-point input (+16: rows load 16 lanes)
    private let inImaginary = SampleStorage<Float>(count: 496)

    init() {
        for m in 0..<16 {
            let angle = -2 * Double.pi * Double(m) / 32
            stageCos[m] = Float(cos(angle))
            stageSin[m] = Float(sin(angle))
        }
        for k1 in 0..<32 {
            for n2 in 0..<15 {
                let angle = -2 * Double.pi * Double(n2 * k1) / 480
                twiddleCos[k1 * 16 + n2] = Float(cos(angle))
                twiddleSin[k1 * 16 + n2] = Float(sin(angle))
            }
        }
        for k in 0...480 {
            let angle = -2 * Double.pi * Double(k) / 960
            untangleCos[k] = Float(cos(angle))
            untangleSin[k] = Float(sin(angle))
        }
    }

    /// 960 real samples → bins 0…480, scaled by 1/960.
    func forward(_ samples: UnsafePointer<Float>, into spectrum: UnsafeMutablePointer<Float>) {
        let zr = inReal.pointer, zi = inImaginary.pointer
        for n in 0..<Self.half {
            zr[n] = samples[2 * n]
            zi[n] = samples[2 * n + 1]
        }
        transform()
        let r = outReal.pointer, i = outImaginary.pointer
        let scale: Float = 1.0 / 960
        for k in 0...Self.half {
            let a = k % Self.half, b = (Self.half - k) % Self.half
            // Even samples' spectrum E = (Z[k] + conj Z[−k])/2, odd O = (Z[k] − conj Z[−k])/2i.
            let er = 0.5 * (r[a] + r[b]), ei = 0.5 * (i[a] - i[b])
            let or = 0.5 * (i[a] + i[b]), oi = -0.5 * (r[a] - r[b])
            let c = untangleCos[k], s = untangleSin[k]
            spectrum[2 * k] = scale * (er + c * or - s * oi)
            spectrum[2 * k + 1] = scale * (ei + c * oi + s * or)
        }
    }

    /// Bins 0…480 of a Hermitian spectrum → 960 real samples, unscaled.
    func inverse(_ spectrum: UnsafePointer<Float>, into samples: UnsafeMutablePointer<Float>) {
        let zr = inReal.pointer, zi = inImaginary.pointer
        for k in 0..<Self.half {
            // X[k + 480] = conj X[480 − k]; bins 0 and 480 count by their real parts.
            let ar = spectrum[2 * k], ai = k == 0 ? 0 : spectrum[2 * k + 1]
            let br = spectrum[2 * (Self.half - k)], bi = k == 0 ? 0 : -spectrum[2 * (Self.half - k) + 1]
            let er = ar + br, ei = ai + bi                       // E[k] = X[k] + X[k + 480]
            let dr = ar - br, di = ai - bi                       // (X[k] − X[k + 480]) · e^(2πik/960)
            let c = untangleCos[k], s = -untangleSin[k]
            let or = dr * c - di * s, oi = dr * s + di * c
            // The inverse as the conjugate of the forward transform of the conjugate: Z = E + iO, conjugated.
            zr[k] = er - oi
            zi[k] = -(ei + or)
        }
        transform()
        let r = outReal.pointer, i = outImaginary.pointer
        for n in 0..<Self.half {
            samples[2 * n] = r[n]
            samples[2 * n + 1] = -i[n]
        }
    }

    /// The 480-point complex transform of (inReal, inImaginary) into (outReal, outImaginary), unscaled.
    private func transform() {
        let zr = inReal.pointer, zi = inImaginary.pointer
        let mr = UnsafeMutableRawPointer(real.pointer), mi = UnsafeMutableRawPointer(imaginary.pointer)
        // Rows n₁ in bit-reversed order, lanes n₂: z[15·n₁ + n₂] (lane 15 carries the next row's first
        // value along, unused: its twiddles are zero).
        for row in 0..<32 {
            let source = 15 * bitReversed[row]
            let vr = UnsafeRawPointer(zr + source).loadUnaligned(as: SIMD16<Float>.self)
            let vi = UnsafeRawPointer(zi + source).loadUnaligned(as: SIMD16<Float>.self)
            mr.storeBytes(of: vr, toByteOffset: 64 * row, as: SIMD16<Float>.self)
            mi.storeBytes(of: vi, toByteOffset: 64 * row, as: SIMD16<Float>.self)
        }
        // Radix-2 stages over the rows, fifteen transforms at once.
        var span = 1
        while span < 32 {
            let step = 16 / span
            for start in stride(from: 0, to: 32, by: 2 * span) {
                for j in 0..<span {
                    let top = 64 * (start + j), bottom = 64 * (start + j + span)
                    let c = stageCos[j * step], s = stageSin[j * step]
                    let br = mr.load(fromByteOffset: bottom, as: SIMD16<Float>.self)
                    let bi = mi.load(fromByteOffset: bottom, as: SIMD16<Float>.self)
                    let tr = br * c - bi * s, ti = br * s + bi * c
                    let ar = mr.load(fromByteOffset: top, as: SIMD16<Float>.self)
                    let ai = mi.load(fromByteOffset: top, as: SIMD16<Float>.self)
                    mr.storeBytes(of: ar + tr, toByteOffset: top, as: SIMD16<Float>.self)
                    mi.storeBytes(of: ai + ti, toByteOffset: top, as: SIMD16<Float>.self)
                    mr.storeBytes(of: ar - tr, toByteOffset: bottom, as: SIMD16<Float>.self)
                    mi.storeBytes(of: ai - ti, toByteOffset: bottom, as: SIMD16<Float>.self)
                }
            }
            span *= 2
        }
        // Twiddles, and the matrix turned: rows n₂, lanes k₁ (the 32 rows of before).
        let tc = UnsafeRawPointer(twiddleCos.pointer), ts = UnsafeRawPointer(twiddleSin.pointer)
        let tr = turnedReal.pointer, ti = turnedImaginary.pointer
        for row in 0..<32 {
            let vr = mr.load(fromByteOffset: 64 * row, as: SIMD16<Float>.self)
            let vi = mi.load(fromByteOffset: 64 * row, as: SIMD16<Float>.self)
            let c = tc.load(fromByteOffset: 64 * row, as: SIMD16<Float>.self)
            let s = ts.load(fromByteOffset: 64 * row, as: SIMD16<Float>.self)
            let wr = vr * c - vi * s, wi = vr * s + vi * c
            for n2 in 0..<15 {
                tr[32 * n2 + row] = wr[n2]
                ti[32 * n2 + row] = wi[n2]
            }
        }
        // The 15-point transforms over n₂, sixteen rows k₁ per vector, by Good–Thomas: 15 = 3 × 5, input
        // n₂ = (5a + 3b) mod 15, output k₂ = (10c + 6d) mod 15; five-point transforms over b (giving d), then
        // three-point ones over a (giving c), no twiddles between. out[k₁ + 32·k₂] is contiguous in k₁.
        let turned = (UnsafeRawPointer(tr), UnsafeRawPointer(ti))
        let stage = (UnsafeMutableRawPointer(stageReal.pointer), UnsafeMutableRawPointer(stageImaginary.pointer))
        let out = (UnsafeMutableRawPointer(outReal.pointer), UnsafeMutableRawPointer(outImaginary.pointer))
        for half in 0..<2 {
            for a in 0..<3 {
                @inline(__always) func input(_ b: Int) -> ComplexVector {
                    let offset = 4 * (32 * ((5 * a + 3 * b) % 15) + 16 * half)
                    return ComplexVector(turned.0.load(fromByteOffset: offset, as: SIMD16<Float>.self),
                                         turned.1.load(fromByteOffset: offset, as: SIMD16<Float>.self))
                }
                let x0 = input(0), x1 = input(1), x2 = input(2), x3 = input(3), x4 = input(4)
                let t1 = x1 + x4, t2 = x2 + x3, d1 = x1 - x4, d2 = x2 - x3
                let m1 = x0 + t1 * Self.cos1 + t2 * Self.cos2, m2 = x0 + t1 * Self.cos2 + t2 * Self.cos1
                let n1 = d1 * Self.sin1 + d2 * Self.sin2, n2 = d1 * Self.sin2 - d2 * Self.sin1
                let results = (x0 + t1 + t2, m1.minusI(n1), m2.minusI(n2), m2.plusI(n2), m1.plusI(n1))
                store(results.0, at: 5 * a + 0, in: stage)
                store(results.1, at: 5 * a + 1, in: stage)
                store(results.2, at: 5 * a + 2, in: stage)
                store(results.3, at: 5 * a + 3, in: stage)
                store(results.4, at: 5 * a + 4, in: stage)
            }
            for d in 0..<5 {
                let y0 = load(5 * 0 + d, from: stage), y1 = load(5 * 1 + d, from: stage), y2 = load(5 * 2 + d, from: stage)
                let t = y1 + y2
                let m = y0 - t * 0.5, n = (y1 - y2) * Self.sin3
                let z = (y0 + t, m.minusI(n), m.plusI(n))
                storeOutput(z.0, k2: (6 * d) % 15, half: half, in: out)
                storeOutput(z.1, k2: (10 + 6 * d) % 15, half: half, in: out)
                storeOutput(z.2, k2: (20 + 6 * d) % 15, half: half, in: out)
            }
        }
    }

    static let cos1: Float = 0.309_016_994, sin1: Float = 0.951_056_516    // 2π/5
    static let cos2: Float = -0.809_016_994, sin2: Float = 0.587_785_252   // 4π/5
    static let sin3: Float = 0.866_025_404                                 // 2π/3

    @inline(__always)
    private func store(_ value: ComplexVector, at index: Int, in stage: (UnsafeMutableRawPointer, UnsafeMutableRawPointer)) {
        stage.0.storeBytes(of: value.re, toByteOffset: 64 * index, as: SIMD16<Float>.self)
        stage.1.storeBytes(of: value.im, toByteOffset: 64 * index, as: SIMD16<Float>.self)
    }

    @inline(__always)
    private func load(_ index: Int, from stage: (UnsafeMutableRawPointer, UnsafeMutableRawPointer)) -> ComplexVector {
        ComplexVector(stage.0.load(fromByteOffset: 64 * index, as: SIMD16<Float>.self),
                      stage.1.load(fromByteOffset: 64 * index, as: SIMD16<Float>.self))
    }

    @inline(__always)
    private func storeOutput(_ value: ComplexVector, k2: Int, half: Int,
                             in out: (UnsafeMutableRawPointer, UnsafeMutableRawPointer)) {
        let offset = 4 * (32 * k2 + 16 * half)
        out.0.storeBytes(of: value.re, toByteOffset: offset, as: SIMD16<Float>.self)
        out.1.storeBytes(of: value.im, toByteOffset: offset, as: SIMD16<Float>.self)
    }
}

/// Sixteen complex numbers, real and imaginary parts apart.
struct ComplexVector {
    var re: SIMD16<Float>
    var im: SIMD16<Float>

    init(_ re: SIMD16<Float>, _ im: SIMD16<Float>) {
        self.re = re
        self.im = im
    }

    @inline(__always) static func + (a: Self, b: Self) -> Self { Self(a.re + b.re, a.im + b.im) }
    @inline(__always) static func - (a: Self, b: Self) -> Self { Self(a.re - b.re, a.im - b.im) }
    @inline(__always) static func * (a: Self, k: Float) -> Self { Self(a.re * k, a.im * k) }
    /// self − i·n
    @inline(__always) func minusI(_ n: Self) -> Self { Self(re + n.im, im - n.re) }
    /// self + i·n
    @inline(__always) func plusI(_ n: Self) -> Self { Self(re - n.im, im + n.re) }
}
