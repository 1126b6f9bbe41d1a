import Foundation
import Testing
import VFXCore
import VFXTestSupport

/// VideoFX's conversions against FFmpeg's swscale (run through the `ffmpeg` command) on a real photo.
///
/// swscale is asked for the same chroma filters VideoFX uses (nearest-neighbour upsampling, 2×2 area
/// averaging) with accurate rounding. Tolerance: PSNR ≥ 45 dB per plane. Both sides round to 8 bits, so a
/// ±1 difference on every sample would still give 48 dB; measured here: 67–78 dB (swscale's fixed-point
/// rounding differs from VideoFX's on a few samples).
@Suite struct ColorConversionTests {
    static let photo = TestMedia.path("astronaut.png")

    /// The photo as RGBA, decoded by FFmpeg.
    static func photoRGBA() throws -> VideoFrame {
        let bytes = try FFmpegCLI.run(["-i", photo, "-f", "rawvideo", "-pix_fmt", "rgba", "-"])
        return RawFrames.frame(bytes, format: .rgba, width: 512, height: 512)
    }

    @Test(arguments: [ColorDescription.bt601, .bt709, .jpeg, ColorDescription(matrix: .bt709, range: .full)])
    func yuvToRGBMatchesSwscale(color: ColorDescription) throws {
        // The reference I420 comes from FFmpeg; both sides then convert the same YUV bytes to RGB.
        let flags = FFmpegCLI.colorFlags(color)
        let yuvBytes = try FFmpegCLI.run(["-i", Self.photo] + flags.output + ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let yuv = RawFrames.frame(yuvBytes, format: .i420, width: 512, height: 512, color: color)
        let reference = try FFmpegCLI.run(["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "512x512"] + flags.input
            + ["-i", "-", "-sws_flags", "neighbor+accurate_rnd+full_chroma_int", "-f", "rawvideo", "-pix_fmt", "rgba", "-"], input: yuvBytes)
        let ours = RawFrames.bytes(yuv.converted(to: .rgba))
        let psnr = Quality.psnr(ours, reference, skipEvery: 4)
        #expect(psnr >= 45, "YUV→RGB \(color): \(psnr) dB")
    }

    @Test(arguments: [ColorDescription.bt601, .bt709, .jpeg])
    func rgbToYUVMatchesSwscale(color: ColorDescription) throws {
        let rgba = try Self.photoRGBA()
        let flags = FFmpegCLI.colorFlags(color)
        // `area` averages each 2×2 chroma block, as VideoFX does.
        let reference = try FFmpegCLI.run(["-i", Self.photo, "-sws_flags", "area+accurate_rnd"] + flags.output
            + ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let ours = RawFrames.bytes(rgba.converted(to: .i420, color: color))
        let lumaCount = 512 * 512
        let lumaPSNR = Quality.psnr(Array(ours[..<lumaCount]), Array(reference[..<lumaCount]))
        let chromaPSNR = Quality.psnr(Array(ours[lumaCount...]), Array(reference[lumaCount...]))
        #expect(lumaPSNR >= 45, "luma \(color): \(lumaPSNR) dB")
        #expect(chromaPSNR >= 45, "chroma \(color): \(chromaPSNR) dB")
    }

    @Test func nv12AndI420RoundTripExactly() throws {
        let i420 = try Self.photoRGBA().converted(to: .i420, color: .bt601)
        let nv12 = i420.converted(to: .nv12)
        #expect(nv12.format == .nv12)
        #expect(RawFrames.bytes(nv12.converted(to: .i420)) == RawFrames.bytes(i420))
    }

    @Test func bgraIsRGBASwizzled() throws {
        let rgba = try Self.photoRGBA()
        let bgra = rgba.converted(to: .bgra)
        let a = RawFrames.bytes(rgba), b = RawFrames.bytes(bgra)
        for i in stride(from: 0, to: a.count, by: 4099 * 4) {
            #expect(a[i] == b[i + 2] && a[i + 1] == b[i + 1] && a[i + 2] == b[i] && a[i + 3] == b[i + 3])
        }
    }

    @Test func grayMatchesLumaFormula() throws {
        let rgba = try Self.photoRGBA()
        let gray = rgba.converted(to: .gray8)
        let a = RawFrames.bytes(rgba), g = RawFrames.bytes(gray)
        // Full-range luma Y' = Kr R + Kg G + Kb B with BT.601 weights (the frame's matrix for 512×512).
        var worst = 0.0
        for i in 0..<g.count {
            let y = 0.299 * Double(a[4 * i]) + 0.587 * Double(a[4 * i + 1]) + 0.114 * Double(a[4 * i + 2])
            worst = max(worst, abs(y - Double(g[i])))
        }
        #expect(worst <= 0.51, "rounding only")
    }

    @Test func oddSizesKeepEveryPixel() throws {
        var frame = VideoFrame(format: .rgba, width: 5, height: 3)
        frame.withMutablePlanes { planes in
            for y in 0..<3 { for x in 0..<20 { planes[0].row(y)[x] = 200 } }
        }
        let yuv = frame.converted(to: .i420, color: .jpeg)
        #expect(yuv.plane(1).width == 3 && yuv.plane(1).height == 2)
        let back = RawFrames.bytes(yuv.converted(to: .rgba))
        #expect(back.allSatisfy { $0 >= 199 })
    }
}
