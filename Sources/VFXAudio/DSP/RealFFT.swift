import Foundation

/// The discrete Fourier transform of `size` real samples (a power of two), computed as a complex radix-2
/// transform of half the size plus one untangling pass. All tables and scratch memory are made in `init`;
/// `forward` and `inverse` allocate nothing.
///
/// `forward` gives bins 0…size/2 (real and imaginary parts, unnormalized: X[k] = Σ x[n] e^(−2πikn/size));
/// `inverse` takes them back and divides by `size`, so inverse(forward(x)) = x.
///
/// ```swift
/// let fft = RealFFT(size: 1024)
/// fft.forward(samples, real: re, imaginary: im)     // re, im: 513 bins each
/// fft.inverse(real: re, imaginary: im, into: samples)
/// ```
final class RealFFT {
    let size: Int
    private let half: Int
    private let levels: Int
    private let bitReversed: SampleStorage<Int>
    /// e^(−2πik/half) for k < half/2 (the complex transform's twiddles).
    private let cosines: SampleStorage<Float>
    private let sines: SampleStorage<Float>
    /// e^(−2πik/size) for k ≤ half (the untangling pass).
    private let untangleCos: SampleStorage<Float>
    private let untangleSin: SampleStorage<Float>
    private let workReal: SampleStorage<Float>
    private let workImaginary: SampleStorage<Float>

    init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0, "RealFFT size must be a power of two ≥ 4")
        self.size = size
        half = size / 2
        levels = half.trailingZeroBitCount
        bitReversed = SampleStorage(count: half)
        for index in 0..<half {
            var reversed = 0
            var value = index
            for _ in 0..<levels {
                reversed = (reversed << 1) | (value & 1)
                value >>= 1
            }
            bitReversed[index] = reversed
        }
        cosines = SampleStorage(count: max(half / 2, 1))
        sines = SampleStorage(count: max(half / 2, 1))
        for index in 0..<max(half / 2, 1) {
            let angle = -2 * Double.pi * Double(index) / Double(half)
            cosines[index] = Float(cos(angle))
            sines[index] = Float(sin(angle))
        }
        untangleCos = SampleStorage(count: half + 1)
        untangleSin = SampleStorage(count: half + 1)
        for index in 0...half {
            let angle = -2 * Double.pi * Double(index) / Double(size)
            untangleCos[index] = Float(cos(angle))
            untangleSin[index] = Float(sin(angle))
        }
        workReal = SampleStorage(count: half)
        workImaginary = SampleStorage(count: half)
    }

    /// Bins 0…size/2 of `input` (`size` samples) into `real` and `imaginary` (size/2 + 1 each).
    func forward(_ input: UnsafePointer<Float>, real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>) {
        let zr = workReal.pointer, zi = workImaginary.pointer
        for index in 0..<half {
            let source = bitReversed[index]
            zr[index] = input[2 * source]
            zi[index] = input[2 * source + 1]
        }
        butterflies(zr, zi)
        // X[k] = E[k] + W^k O[k], with E = (Z[k] + conj Z[half−k]) / 2 and O = (Z[k] − conj Z[half−k]) / 2i.
        real[0] = zr[0] + zi[0]
        imaginary[0] = 0
        real[half] = zr[0] - zi[0]
        imaginary[half] = 0
        for k in 1..<half {
            let ar = zr[k], ai = zi[k], br = zr[half - k], bi = -zi[half - k]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            let or = 0.5 * (ai - bi), oi = -0.5 * (ar - br)
            let wr = untangleCos[k], wi = untangleSin[k]
            real[k] = er + wr * or - wi * oi
            imaginary[k] = ei + wr * oi + wi * or
        }
    }

    /// The `size` samples whose bins are `real` and `imaginary` (size/2 + 1 each), into `output`.
    func inverse(real: UnsafePointer<Float>, imaginary: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>) {
        let zr = workReal.pointer, zi = workImaginary.pointer
        // E[k] = (X[k] + conj X[half−k]) / 2, O[k] = (X[k] − conj X[half−k]) · conj(W^k) / 2, Z[k] = E + iO.
        // Built in bit-reversed order, conjugated, so a forward transform computes the inverse.
        for k in 0..<half {
            let ar = real[k], ai = imaginary[k], br = real[half - k], bi = -imaginary[half - k]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            let dr = 0.5 * (ar - br), di = 0.5 * (ai - bi)
            let wr = untangleCos[k], wi = -untangleSin[k]
            let or = dr * wr - di * wi, oi = dr * wi + di * wr
            let target = bitReversed[k]
            zr[target] = er - oi
            zi[target] = -(ei + or)
        }
        butterflies(zr, zi)
        let scale = 1 / Float(half)
        for index in 0..<half {
            output[2 * index] = zr[index] * scale
            output[2 * index + 1] = -zi[index] * scale
        }
    }

    /// The in-place radix-2 decimation-in-time passes over bit-reversed data.
    private func butterflies(_ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>) {
        var span = 1
        while span < half {
            let stride = half / (2 * span)
            var start = 0
            while start < half {
                for offset in 0..<span {
                    let wr = cosines[offset * stride], wi = sines[offset * stride]
                    let top = start + offset, bottom = top + span
                    let tr = re[bottom] * wr - im[bottom] * wi
                    let ti = re[bottom] * wi + im[bottom] * wr
                    re[bottom] = re[top] - tr
                    im[bottom] = im[top] - ti
                    re[top] += tr
                    im[top] += ti
                }
                start += 2 * span
            }
            span *= 2
        }
    }
}
