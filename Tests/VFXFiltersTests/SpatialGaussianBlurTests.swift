import Foundation
import Testing
import VFXCore
import VFXTestSupport
import VFXPipeline
import VFXFilters

/// gaussian-blur against an exact Gaussian: a direct separable convolution in Double with clamped edges,
/// truncated at 5σ, evaluated here on media/astronaut.png.
///
/// Tolerance: PSNR ≥ 38 dB, the accuracy the catalog promises. The recursive filter approximates the
/// Gaussian's shape (Young–van Vliet's fit leaves ~1 % error in the tails), large σ run on a reduced plane,
/// and results round to bytes; measured here 42–48 dB, so the bound leaves room for other photos without
/// hiding a real error (a wrong boundary start or a wrong chroma σ drops it below 30 dB).
@Suite struct SpatialGaussianBlurTests {
    static func blurred(_ frame: VideoFrame, sigma: Double) throws -> VideoFrame {
        try SpatialFixtures.apply("gaussian-blur:radius=\(sigma)", to: frame)
    }

    @Test(arguments: [0.8, 2.0, 3.0, 5.0, 9.0, 20.0])
    func grayPhotoMatchesExactGaussian(sigma: Double) throws {
        let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: "gray"), format: .gray8,
                                          width: 512, height: 512)
        let original = SpatialFixtures.doubles(SpatialFixtures.rows(frame, 0))
        let exact = SpatialFixtures.convolve(original, channels: 1, weights: SpatialFixtures.gaussianWeights(sigma: sigma))
        let ours = SpatialFixtures.doubles(SpatialFixtures.rows(try Self.blurred(frame, sigma: sigma), 0))
        let psnr = SpatialFixtures.psnr(ours, exact)
        #expect(psnr >= 38, "σ=\(sigma): \(psnr) dB")
    }

    @Test func rgbaPhotoMatchesExactGaussianPerChannel() throws {
        let sigma = 3.0
        let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: "rgba"), format: .rgba,
                                          width: 512, height: 512)
        let original = SpatialFixtures.doubles(SpatialFixtures.rows(frame, 0))
        let exact = SpatialFixtures.convolve(original, channels: 4, weights: SpatialFixtures.gaussianWeights(sigma: sigma))
        let ours = SpatialFixtures.doubles(SpatialFixtures.rows(try Self.blurred(frame, sigma: sigma), 0))
        #expect(SpatialFixtures.psnr(ours, exact) >= 38)
    }

    /// Chroma planes are blurred at their own resolution with σ halved: compared with the exact Gaussian of
    /// each plane (σ for Y, σ/2 for U and V).
    @Test(arguments: [5.0, 6.0]) func i420PlanesUseTheirOwnResolution(sigma: Double) throws {
        let bytes = try SpatialFixtures.decode("astronaut.png", pixelFormat: "yuv420p")
        let frame = RawFrames.frame(bytes, format: .i420, width: 512, height: 512)
        let output = try Self.blurred(frame, sigma: sigma)
        for index in 0..<3 {
            let planeSigma = index == 0 ? sigma : sigma / 2
            let original = SpatialFixtures.doubles(SpatialFixtures.rows(frame, index))
            let exact = SpatialFixtures.convolve(original, channels: 1, weights: SpatialFixtures.gaussianWeights(sigma: planeSigma))
            let psnr = SpatialFixtures.psnr(SpatialFixtures.doubles(SpatialFixtures.rows(output, index)), exact)
            #expect(psnr >= 38, "plane \(index): \(psnr) dB")
        }
    }

    /// A constant image stays exactly constant (no dark borders, nothing spreads): tolerance 0, since the
    /// filter has unit gain and its edge start is the steady state of the repeated border.
    @Test(arguments: [PixelFormat.i420, .nv12, .rgba, .gray8])
    func constantImageStaysConstant(format: PixelFormat) throws {
        var frame = VideoFrame(format: format, width: 67, height: 41)
        frame.withMutablePlanes { planes in
            for (index, plane) in planes.enumerated() {
                for y in 0..<plane.height { plane.row(y).update(repeating: UInt8(90 + 70 * index), count: plane.width * plane.bytesPerPixel) }
            }
        }
        for sigma in [0.6, 3.0, 30.0] {
            let output = try Self.blurred(frame, sigma: sigma)
            for index in 0..<frame.planeCount {
                #expect(SpatialFixtures.rows(output, index) == SpatialFixtures.rows(frame, index), "σ=\(sigma) plane \(index)")
            }
        }
    }

    /// Blurring a frame whose pixels are shared writes a new buffer and leaves the original alone; the result
    /// equals the in-place one.
    @Test func sharedFrameIsNotModified() throws {
        let frame = RawFrames.frame(try SpatialFixtures.decode("astronaut.png", pixelFormat: "nv12"), format: .nv12,
                                          width: 512, height: 512)
        let before = SpatialFixtures.rows(frame, 1)
        let shared = try Self.blurred(frame, sigma: 4)
        #expect(SpatialFixtures.rows(frame, 1) == before)
        var copy = VideoFrame(format: .nv12, width: 512, height: 512)
        copy.withMutablePlanes { planes in for (index, plane) in planes.enumerated() { frame.plane(index).copy(to: plane) } }
        let inPlace = try Self.blurred(copy, sigma: 4)
        #expect(SpatialFixtures.rows(inPlace, 0) == SpatialFixtures.rows(shared, 0))
        #expect(SpatialFixtures.rows(inPlace, 1) == SpatialFixtures.rows(shared, 1))
    }
}
