import Foundation
import VFXCore

/// The third-order recursive Gaussian of Young and van Vliet (1995), with the exact initial conditions of
/// Triggs and Sdika (2006) for edges that repeat the border sample ("clamped" edges).
///
/// One forward pass `w[n] = g·x[n] + a1·w[n-1] + a2·w[n-2] + a3·w[n-3]` and one backward pass over `w`
/// with the same coefficients approximate a Gaussian of standard deviation `sigma` at a cost independent of
/// `sigma`. The forward pass starts in the steady state of the repeated first sample; the backward pass starts
/// where it would be had both passes run on forever over the repeated last sample, so a constant signal stays
/// exactly constant and nothing darkens or spreads at the borders.
///
/// On a real photo (media/astronaut.png), run at full resolution, the result is within 45–51 dB PSNR of an
/// exact Gaussian with clamped edges for σ from 0.5 to 20 (see docs/filters-spatial.md).
///
/// ```swift
/// let g = RecursiveGaussian(sigma: 5)
/// g.feedback   // (a1, a2, a3)
/// ```
struct RecursiveGaussian: Sendable {
    /// Feedback coefficients a1, a2, a3.
    let feedback: (Float, Float, Float)
    /// Input gain g = 1 − (a1 + a2 + a3): unit gain at DC.
    let gain: Float
    /// Maps the forward pass's last three deviations from the border value to the backward pass's three
    /// starting deviations (row i, column k: state after the end i, forward deviation k samples before the end).
    let boundary: [[Float]]
    /// True when sigma is so small that the filter is the identity.
    let isIdentity: Bool

    init(sigma: Double) {
        let q: Double
        if sigma >= 2.5 {
            q = 0.98711 * sigma - 0.96330
        } else {
            q = 3.97156 - 4.14554 * (1 - 0.26891 * min(max(sigma, 0), 2.5)).squareRoot()
        }
        guard q > 0.01 else {
            feedback = (0, 0, 0)
            gain = 1
            boundary = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
            isIdentity = true
            return
        }
        let b0 = 1.57825 + 2.44413 * q + 1.4281 * q * q + 0.422205 * q * q * q
        let a1 = (2.44413 * q + 2.85619 * q * q + 1.26661 * q * q * q) / b0
        let a2 = -(1.4281 * q * q + 1.26661 * q * q * q) / b0
        let a3 = 0.422205 * q * q * q / b0
        let g = 1 - (a1 + a2 + a3)
        feedback = (Float(a1), Float(a2), Float(a3))
        gain = Float(g)
        boundary = RecursiveGaussian.boundaryMatrix(a1: a1, a2: a2, a3: a3, gain: g, length: Int(40 * sigma) + 200)
        isIdentity = false
    }

    /// Computes the boundary matrix numerically: for each unit deviation of the forward state at the end,
    /// the forward pass continues over the repeated border sample (its deviation decays by the homogeneous
    /// recursion), then the backward pass runs back from far beyond the end, where everything has decayed.
    private static func boundaryMatrix(a1: Double, a2: Double, a3: Double, gain: Double, length: Int) -> [[Float]] {
        var matrix = [[Float]](repeating: [0, 0, 0], count: 3)
        for k in 0..<3 {
            // deviation[3 + i] is the forward deviation i samples past the end; [2], [1], [0] the last three.
            var deviation = [Double](repeating: 0, count: length + 3)
            deviation[2 - k] = 1
            for n in 3..<(length + 3) {
                deviation[n] = a1 * deviation[n - 1] + a2 * deviation[n - 2] + a3 * deviation[n - 3]
            }
            var backward = [Double](repeating: 0, count: length + 6)
            for n in stride(from: length + 2, through: 3, by: -1) {
                backward[n] = gain * deviation[n] + a1 * backward[n + 1] + a2 * backward[n + 2] + a3 * backward[n + 3]
            }
            for i in 0..<3 { matrix[i][k] = Float(backward[3 + i]) }
        }
        return matrix
    }
}
