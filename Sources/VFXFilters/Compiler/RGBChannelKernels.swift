import VFXCore

/// A run that works on each channel alone (curves, gains, posterize, levels…) as three exact 256-entry tables
/// on RGBA/BGRA pixels; alpha is kept.
///
/// ```swift
/// let invert = RGBChannelKernel(red: (0..<256).map { 255 - Float($0) }, green: …, blue: …, redOffset: 0)
/// ```
final class RGBChannelKernel: ColorKernel {
    /// Red, green and blue tables back to back.
    private let tables: UnsafeMutablePointer<UInt8>
    let redOffset: Int

    /// Tables of output values in 0…255 (rounded here).
    init(red: [Float], green: [Float], blue: [Float], redOffset: Int) {
        tables = .allocate(capacity: 768)
        for (index, table) in [red, green, blue].enumerated() {
            for code in 0..<256 { tables[index * 256 + code] = UInt8(table[code].rounded().clamped(0, 255)) }
        }
        self.redOffset = redOffset
    }

    deinit { tables.deallocate() }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        let plane = planes[0]
        let red = tables, green = tables + 256, blue = tables + 512
        let redOffset = self.redOffset, blueOffset = 2 - self.redOffset
        slices.run(rows: height) { rows in
            for y in rows {
                var pixel = plane.row(y)
                for _ in 0..<width {
                    pixel[redOffset] = red[Int(pixel[redOffset])]
                    pixel[1] = green[Int(pixel[1])]
                    pixel[blueOffset] = blue[Int(pixel[blueOffset])]
                    pixel += 4
                }
            }
        }
    }
}

/// A run that only bends luma and/or removes chroma, on RGBA/BGRA pixels: luma is computed per pixel in quarter
/// codes (0…1020) and looked up in a table of the new gray (chroma removed) or of the luma change added to all
/// three channels (chroma kept); alpha is kept.
///
/// ```swift
/// let mono = RGBLumaKernel(weights: LumaWeights(.bt709), curve: nil, removesChroma: true, redOffset: 0)
/// ```
final class RGBLumaKernel: ColorKernel {
    /// Quarter codes of luma per unit of each channel's code, in 1/2¹⁶ (so that the sum stays in 32 bits).
    private let weights: SIMD3<Int32>
    /// Indexed by luma in quarter codes: the new gray (chroma removed) or the change to add (chroma kept).
    private let table: UnsafeMutablePointer<Int16>
    let removesChroma: Bool
    let redOffset: Int

    init(weights: LumaWeights, curve: (@Sendable (Float) -> Float)?, removesChroma: Bool, redOffset: Int) {
        self.weights = SIMD3<Int32>(Int32((weights.red * 4 * 65536).rounded()), Int32((weights.green * 4 * 65536).rounded()),
                                    Int32((weights.blue * 4 * 65536).rounded()))
        self.removesChroma = removesChroma
        self.redOffset = redOffset
        table = .allocate(capacity: 1021)
        for quarter in 0...1020 {
            let luma = Float(quarter) / 1020
            let out = (curve?(luma) ?? luma).clamped(0, 1)
            table[quarter] = Int16((removesChroma ? out * 255 : (out - luma) * 255).rounded())
        }
    }

    deinit { table.deallocate() }

    func apply(to planes: [Plane], width: Int, height: Int, slices: SliceRunner) {
        let plane = planes[0]
        let (table, weights, removesChroma) = (self.table, self.weights, self.removesChroma)
        let redOffset = self.redOffset, blueOffset = 2 - self.redOffset
        slices.run(rows: height) { rows in
            for y in rows {
                var pixel = plane.row(y)
                for _ in 0..<width {
                    let r = Int32(pixel[redOffset]), g = Int32(pixel[1]), b = Int32(pixel[blueOffset])
                    let quarter = Int((weights.x * r + weights.y * g + weights.z * b + 32768) >> 16)
                    let value = Int32(table[min(quarter, 1020)])
                    if removesChroma {
                        let gray = UInt8(truncatingIfNeeded: value)
                        pixel[redOffset] = gray
                        pixel[1] = gray
                        pixel[blueOffset] = gray
                    } else {
                        pixel[redOffset] = UInt8(truncatingIfNeeded: min(max(r + value, 0), 255))
                        pixel[1] = UInt8(truncatingIfNeeded: min(max(g + value, 0), 255))
                        pixel[blueOffset] = UInt8(truncatingIfNeeded: min(max(b + value, 0), 255))
                    }
                    pixel += 4
                }
            }
        }
    }
}
