import Foundation
import Testing
@testable import VFXCore
import VFXTestSupport

/// The vectorized 4:2:0 ↔ RGBA/BGRA conversions (`YUVRows`, behind `VideoFrame.converted`) against the fixed-point
/// formulas written out here pixel by pixel, as VideoFX converted before: 0 codes of difference, at odd sizes, for
/// I420 and NV12, RGBA and BGRA, limited and full range; and a frame converted in bands of rows gives the same bytes
/// as converted whole.
@Suite struct YUVRowsTests {
    static let colors: [ColorDescription] = [.bt601, .bt709, .jpeg, ColorDescription(matrix: .bt709, range: .full)]
    static let sizes = [(37, 23), (64, 2), (1, 1), (17, 6), (33, 9)]

    /// Pseudo-random bytes (a fixed linear congruential sequence), with the extremes of each range mixed in.
    static func bytes(_ count: Int, seed: UInt32) -> [UInt8] {
        var state = seed
        return (0..<count).map { i in
            state = state &* 1_664_525 &+ 1_013_904_223
            return i % 17 == 0 ? 0 : i % 19 == 0 ? 255 : UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    static func clamp(_ v: Int32) -> UInt8 { UInt8(min(max(v, 0), 255)) }

    /// Packed pixels (R, G, B, A) of a YUV frame: Y' from luma, the 2×2 block's chroma, 16.16 fixed point.
    static func referenceRGB(_ frame: VideoFrame) -> [UInt8] {
        let c = ColorConversion.Coefficients(frame.color)
        let bytes = RawFrames.bytes(frame), w = frame.width, h = frame.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        var out = [UInt8]()
        for y in 0..<h {
            for x in 0..<w {
                let luma = Int32(bytes[y * w + x])
                let (u, v): (UInt8, UInt8) = frame.format == .nv12
                    ? (bytes[w * h + (y / 2) * 2 * cw + 2 * (x / 2)], bytes[w * h + (y / 2) * 2 * cw + 2 * (x / 2) + 1])
                    : (bytes[w * h + (y / 2) * cw + x / 2], bytes[w * h + cw * ch + (y / 2) * cw + x / 2])
                let yy = (luma - c.yOffset) * c.yScale + (1 << 15), cb = Int32(u) - 128, cr = Int32(v) - 128
                out += [clamp((yy + cr * c.crToR) >> 16), clamp((yy - cb * c.cbToG - cr * c.crToG) >> 16), clamp((yy + cb * c.cbToB) >> 16), 255]
            }
        }
        return out
    }

    /// The I420 bytes of RGBA pixels: luma per pixel, chroma from the sums of each 2×2 block (edges repeated).
    static func referenceI420(_ rgba: [UInt8], width w: Int, height h: Int, color: ColorDescription) -> [UInt8] {
        let c = ColorConversion.Coefficients(color)
        func channel(_ x: Int, _ y: Int, _ k: Int) -> Int32 { Int32(rgba[(y * w + x) * 4 + k]) }
        var luma = [UInt8](), u = [UInt8](), v = [UInt8]()
        for y in 0..<h {
            for x in 0..<w {
                luma.append(clamp((channel(x, y, 0) * c.rToY + channel(x, y, 1) * c.gToY + channel(x, y, 2) * c.bToY + c.yAdd) >> 16))
            }
        }
        for cy in 0..<((h + 1) / 2) {
            for cx in 0..<((w + 1) / 2) {
                let xs = [2 * cx, min(2 * cx + 1, w - 1)], ys = [2 * cy, min(2 * cy + 1, h - 1)]
                func sum(_ k: Int) -> Int32 { ys.reduce(0) { total, y in xs.reduce(total) { $0 + channel($1, y, k) } } }
                let (r, g, b) = (sum(0), sum(1), sum(2))
                u.append(clamp((r * c.rToU + g * c.gToU + b * c.bToU + (128 << 18) + (1 << 17)) >> 18))
                v.append(clamp((r * c.rToV + g * c.gToV + b * c.bToV + (128 << 18) + (1 << 17)) >> 18))
            }
        }
        return luma + u + v
    }

    /// I420 bytes laid out as NV12 (chroma interleaved).
    static func nv12(_ i420: [UInt8], width w: Int, height h: Int) -> [UInt8] {
        let n = ((w + 1) / 2) * ((h + 1) / 2)
        return Array(i420[..<(w * h)]) + (0..<n).flatMap { [i420[w * h + $0], i420[w * h + n + $0]] }
    }

    static func swizzled(_ rgba: [UInt8]) -> [UInt8] {
        var out = rgba
        for i in stride(from: 0, to: rgba.count, by: 4) { (out[i], out[i + 2]) = (rgba[i + 2], rgba[i]) }
        return out
    }

    @Test(arguments: colors)
    func yuvToPackedMatchesTheFormula(color: ColorDescription) throws {
        for (w, h) in Self.sizes {
            let yuv = Self.bytes(w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2), seed: UInt32(w * 31 + h))
            let i420 = RawFrames.frame(yuv, format: .i420, width: w, height: h, color: color)
            let nv12 = RawFrames.frame(Self.nv12(yuv, width: w, height: h), format: .nv12, width: w, height: h, color: color)
            let reference = Self.referenceRGB(i420)
            #expect(Self.referenceRGB(nv12) == reference)
            for frame in [i420, nv12] {
                #expect(RawFrames.bytes(frame.converted(to: .rgba)) == reference, "\(frame.format) \(w)x\(h) \(color)")
                #expect(RawFrames.bytes(frame.converted(to: .bgra)) == Self.swizzled(reference), "\(frame.format) \(w)x\(h) \(color)")
            }
        }
    }

    @Test(arguments: colors)
    func packedToYUVMatchesTheFormula(color: ColorDescription) throws {
        for (w, h) in Self.sizes {
            let rgba = Self.bytes(4 * w * h, seed: UInt32(w * 7 + h))
            let reference = Self.referenceI420(rgba, width: w, height: h, color: color)
            let frame = RawFrames.frame(rgba, format: .rgba, width: w, height: h)
            let bgra = RawFrames.frame(Self.swizzled(rgba), format: .bgra, width: w, height: h)
            for source in [frame, bgra] {
                #expect(RawFrames.bytes(source.converted(to: .i420, color: color)) == reference, "\(source.format) \(w)x\(h) \(color)")
                #expect(RawFrames.bytes(source.converted(to: .nv12, color: color)) == Self.nv12(reference, width: w, height: h),
                        "\(source.format) \(w)x\(h) \(color)")
            }
        }
    }

    @Test func bandsGiveTheWholeFramesBytes() throws {
        let (w, h) = (45, 13)
        let yuv = Self.bytes(w * h + 2 * 23 * 7, seed: 5)
        for format in [PixelFormat.i420, .nv12] {
            let frame = RawFrames.frame(format == .nv12 ? Self.nv12(yuv, width: w, height: h) : yuv, format: format, width: w, height: h,
                                        color: .bt709)
            let rows = YUVRows(yuv: format, packed: .rgba, color: .bt709)
            let band = PixelBuffer(format: .rgba, width: w, height: 4)
            var output = VideoFrame(format: format, width: w, height: h, color: .bt709)
            var unpacked = [UInt8]()
            output.withMutablePlanes { planes in
                for start in stride(from: 0, to: h, by: 4) {
                    let part = start..<min(start + 4, h)
                    rows.unpack(frame.planes, rows: part, width: w, into: band.planes[0])
                    for y in 0..<part.count { unpacked += UnsafeBufferPointer(start: band.planes[0].row(y), count: 4 * w) }
                    rows.pack(band.planes[0], rows: part, width: w, height: h, into: planes)
                }
            }
            let whole = frame.converted(to: .rgba)
            #expect(unpacked == RawFrames.bytes(whole))
            #expect(RawFrames.bytes(output) == RawFrames.bytes(whole.converted(to: format, color: .bt709)))
        }
    }
}
