/// The conversions between 4:2:0 YUV planes (I420, NV12) and packed RGBA or BGRA pixels, a band of rows at a time:
/// the kernels behind `VideoFrame.converted(to:)` between those formats, also used by stages that convert a few rows
/// into a small cache-resident buffer, work on them and convert them back.
///
/// The arithmetic is `ColorConversion.Coefficients`' 16.16 fixed point: YUV → RGB shares each chroma sample across
/// its 2×2 block (alpha 255); RGB → YUV averages the block's chroma, the last column or row repeated at odd sizes.
/// Each row is converted alone with the same arithmetic, so it comes out with the same bytes whichever band it is
/// converted in. The loops are plain per-pixel loops over pointers with wrapping arithmetic, which the compiler
/// turns into vector code (Swift's SIMD types, lane by lane, compile to much slower code here).
///
/// ```swift
/// let rows = YUVRows(yuv: .i420, packed: .rgba, color: frame.color)
/// rows.unpack(frame.planes, rows: 16..<32, width: frame.width, into: band)        // frame rows 16…31 → band rows 0…15
/// rows.pack(band, rows: 16..<32, width: frame.width, height: frame.height, into: output.planes)
/// ```
public struct YUVRows: Sendable {
    let coefficients: ColorConversion.Coefficients
    /// NV12 (one interleaved chroma plane) rather than I420.
    let interleaved: Bool
    /// The bit position of red in a little-endian packed pixel (0 for RGBA, 16 for BGRA); blue is at 16 − this.
    let redShift: UInt32

    /// The conversion between `yuv` (.i420 or .nv12) coded with `color` and `packed` (.rgba or .bgra).
    public init(yuv: PixelFormat, packed: PixelFormat, color: ColorDescription) {
        precondition(yuv.isYUV && packed.isRGB, "YUVRows converts between I420/NV12 and RGBA/BGRA")
        coefficients = ColorConversion.Coefficients(color)
        interleaved = yuv == .nv12
        redShift = packed == .bgra ? 16 : 0
    }

    /// Rows `rows` of the YUV `planes` (`width` pixels each) as packed pixels: frame row y goes to row
    /// y − rows.lowerBound of `packed`.
    public func unpack(_ planes: [Plane], rows: Range<Int>, width: Int, into packed: Plane) {
        // Each layout gets its own copy of the loop, with its constants folded in.
        switch (interleaved, redShift) {
        case (false, 0): unpack(planes, rows: rows, width: width, into: packed, interleaved: false, redShift: 0)
        case (false, _): unpack(planes, rows: rows, width: width, into: packed, interleaved: false, redShift: 16)
        case (true, 0): unpack(planes, rows: rows, width: width, into: packed, interleaved: true, redShift: 0)
        case (true, _): unpack(planes, rows: rows, width: width, into: packed, interleaved: true, redShift: 16)
        }
    }

    /// The packed pixels of frame rows `rows` (row y at row y − rows.lowerBound of `packed`) written into the YUV
    /// `planes` of a `width`×`height` frame: their luma, and the chroma rows they complete. `rows` must start on an
    /// even row and end on one or at `height`, so that each chroma row has both of its luma rows.
    public func pack(_ packed: Plane, rows: Range<Int>, width: Int, height: Int, into planes: [Plane]) {
        precondition(rows.lowerBound % 2 == 0 && (rows.upperBound % 2 == 0 || rows.upperBound == height),
                     "a band of rows packed into 4:2:0 must hold whole chroma rows")
        switch (interleaved, redShift) {
        case (false, 0): pack(packed, rows: rows, width: width, height: height, into: planes, interleaved: false, redShift: 0)
        case (false, _): pack(packed, rows: rows, width: width, height: height, into: planes, interleaved: false, redShift: 16)
        case (true, 0): pack(packed, rows: rows, width: width, height: height, into: planes, interleaved: true, redShift: 0)
        case (true, _): pack(packed, rows: rows, width: width, height: height, into: planes, interleaved: true, redShift: 16)
        }
    }

    /// Chroma row `row`: (U, V, bytes between samples).
    @inline(__always)
    private func chroma(_ planes: [Plane], row: Int, interleaved: Bool) -> (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>, Int) {
        if interleaved {
            let p = planes[1].row(row)
            return (p, p + 1, 2)
        }
        return (planes[1].row(row), planes[2].row(row), 1)
    }

    @inline(__always)
    private func unpack(_ planes: [Plane], rows: Range<Int>, width: Int, into packed: Plane, interleaved: Bool, redShift: UInt32) {
        let c = coefficients
        let blueShift = 16 &- redShift
        @inline(__always) func pixel(_ luma: UInt8, _ red: Int32, _ green: Int32, _ blue: Int32) -> UInt32 {
            let l = (Int32(luma) &- c.yOffset) &* c.yScale &+ (1 << 15)
            return Self.clamp8((l &+ red) &>> 16) << redShift | Self.clamp8((l &- green) &>> 16) << 8
                | Self.clamp8((l &+ blue) &>> 16) << blueShift | 0xFF00_0000
        }
        for y in rows {
            let luma = planes[0].row(y)
            let out = UnsafeMutableRawPointer(packed.row(y &- rows.lowerBound)).assumingMemoryBound(to: UInt32.self)
            let (uRow, vRow, step) = chroma(planes, row: y / 2, interleaved: interleaved)
            @inline(__always) func chromaTerms(_ cx: Int) -> (Int32, Int32, Int32) {
                let cb = Int32(uRow[cx &* step]) &- 128, cr = Int32(vRow[cx &* step]) &- 128
                return (cr &* c.crToR, cb &* c.cbToG &+ cr &* c.crToG, cb &* c.cbToB)
            }
            // A plain loop over the pairs of pixels that share a chroma sample (the compiler vectorizes it), then
            // the last pixel of an odd row.
            for cx in 0..<(width / 2) {
                let (red, green, blue) = chromaTerms(cx)
                out[2 &* cx] = pixel(luma[2 &* cx], red, green, blue)
                out[2 &* cx &+ 1] = pixel(luma[2 &* cx &+ 1], red, green, blue)
            }
            if width % 2 == 1 {
                let (red, green, blue) = chromaTerms(width / 2)
                out[width &- 1] = pixel(luma[width &- 1], red, green, blue)
            }
        }
    }

    @inline(__always)
    private func pack(_ packed: Plane, rows: Range<Int>, width: Int, height: Int, into planes: [Plane], interleaved: Bool,
                      redShift: UInt32) {
        let c = coefficients
        let blueShift = 16 &- redShift
        @inline(__always) func channels(_ p: UInt32) -> (Int32, Int32, Int32) {
            (Int32(truncatingIfNeeded: (p &>> redShift) & 0xFF), Int32(truncatingIfNeeded: (p &>> 8) & 0xFF),
             Int32(truncatingIfNeeded: (p &>> blueShift) & 0xFF))
        }
        func pixels(_ row: Int) -> UnsafeMutablePointer<UInt32> {
            UnsafeMutableRawPointer(packed.row(row &- rows.lowerBound)).assumingMemoryBound(to: UInt32.self)
        }
        for y in rows {
            let input = pixels(y), luma = planes[0].row(y)
            for x in 0..<width {
                let (r, g, b) = channels(input[x])
                luma[x] = UInt8(truncatingIfNeeded: Self.clamp8((r &* c.rToY &+ g &* c.gToY &+ b &* c.bToY &+ c.yAdd) &>> 16))
            }
        }
        // Sums of four samples: divide by 4 inside the shift (>> 18), rounding at bit 17.
        let chromaAdd = (128 << 18) + (1 << 17) as Int32
        for cy in (rows.lowerBound / 2)..<((rows.upperBound &+ 1) / 2) {
            let row0 = pixels(2 &* cy), row1 = pixels(min(2 &* cy &+ 1, height &- 1))
            let (uRow, vRow, step) = chroma(planes, row: cy, interleaved: interleaved)
            // Chroma sample cx from the pixels x0, x1 of both rows.
            @inline(__always) func sample(_ cx: Int, _ x0: Int, _ x1: Int) {
                let (r0, g0, b0) = channels(row0[x0]), (r1, g1, b1) = channels(row0[x1])
                let (r2, g2, b2) = channels(row1[x0]), (r3, g3, b3) = channels(row1[x1])
                let r = r0 &+ r1 &+ r2 &+ r3, g = g0 &+ g1 &+ g2 &+ g3, b = b0 &+ b1 &+ b2 &+ b3
                uRow[cx &* step] = UInt8(truncatingIfNeeded: Self.clamp8((r &* c.rToU &+ g &* c.gToU &+ b &* c.bToU &+ chromaAdd) &>> 18))
                vRow[cx &* step] = UInt8(truncatingIfNeeded: Self.clamp8((r &* c.rToV &+ g &* c.gToV &+ b &* c.bToV &+ chromaAdd) &>> 18))
            }
            for cx in 0..<(width / 2) { sample(cx, 2 &* cx, 2 &* cx &+ 1) }
            if width % 2 == 1 { sample(width / 2, width &- 1, width &- 1) }   // the last column repeated
        }
    }

    @inline(__always)
    private static func clamp8(_ v: Int32) -> UInt32 { UInt32(truncatingIfNeeded: min(max(v, 0), 255)) }
}
