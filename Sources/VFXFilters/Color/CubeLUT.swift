import VFXCore
import VFXMedia
import Foundation

// Lookup tables from `.cube` files (1D and 3D), applied with tetrahedral (3D) or linear (1D) interpolation.

extension FilterSpec {
    /// A `.cube` lookup table (Adobe/Resolve format): 3D (`LUT_3D_SIZE`, 2…256, red fastest) with tetrahedral
    /// interpolation, or 1D (`LUT_1D_SIZE`, 2…65536) with linear interpolation per channel; `DOMAIN_MIN`/`DOMAIN_MAX`
    /// (or `LUT_*_INPUT_RANGE`), `TITLE` and `#` comments are understood. The result is blended with the original by
    /// `intensity`. A malformed file is refused with its path and line number.
    /// - `file` (required), `intensity` 0…1 (1). Formats: all. Fused with neighbouring color filters; on RGB frames a
    ///   cube of up to 65 nodes per axis is applied exactly at its own nodes.
    ///
    /// Chain: `lut:file=grade.cube:intensity=0.8` · Swift: `try FilterDescription.lut(file: "grade.cube", intensity: 0.8)`
    public static let lut = FilterSpec(
        name: "lut", family: .colorEffect, summary: "A .cube lookup table (1D or 3D), blended with the original by intensity.",
        coreImage: "CIColorCube",
        parameters: [ParameterSpec("file", .file(extensions: ["cube"]), "the .cube file"),
                     ParameterSpec("intensity", .number(0...1), default: 1, "blend with the original")],
        example: "lut:file=grade.cube:intensity=0.8", swift: "try FilterDescription.lut(file: \"grade.cube\", intensity: 0.8)",
        ffmpeg: { arguments in
            let path = arguments.text("file")
            let escaped = path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:")
            let is1D = (try? CubeFile(contentsOf: path))?.dimensions == 1
            return is1D ? "lut1d=file=\(escaped):interp=linear" : "lut3d=file=\(escaped):interp=tetrahedral"
        }
    ) { arguments, _ in
        let cube = try CubeFile.forLUT(arguments.text("file"))
        let amount = arguments.float("intensity")
        return .color(ColorTransform(kind: cube.dimensions == 1 ? .perChannel : .general, gridSize: cube.size) { rgb in
            rgb + (cube.apply(rgb) - rgb) * amount
        })
    }
}

extension FilterDescription {
    /// The `.cube` file at `file`, checked when the chain is compiled.
    public static func lut(file: String, intensity: Double = 1) throws -> FilterDescription {
        try FilterDescription("lut", ["file": .text(file), "intensity": .number(intensity)])
    }
}

extension CubeFile {
    /// `path` read as a `.cube` file, its errors as the `lut` filter's ("lut: grade.cube:12: …").
    static func forLUT(_ path: String) throws -> CubeFile {
        do {
            return try CubeFile(contentsOf: path)
        } catch let error as CubeFileError {
            throw FilterError.badFile(filter: "lut", path: error.path, line: error.line, reason: error.reason)
        }
    }

    /// The table at `rgb`: tetrahedral interpolation (3D) or linear per channel (1D); inputs outside the domain
    /// are clamped to it.
    public func apply(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
        let last = Float(size - 1)
        let position = pointwiseMin(pointwiseMax((rgb - domainMin) / (domainMax - domainMin), .zero), .one) * last
        let lower = SIMD3<Int32>(pointwiseMin(position.rounded(.down), SIMD3(repeating: last - 1)), rounding: .towardZero)
        let f = position - SIMD3<Float>(lower)
        if dimensions == 1 {
            func channel(_ c: Int) -> Float {
                let i = Int(lower[c])
                return values[i][c] + (values[i + 1][c] - values[i][c]) * f[c]
            }
            return SIMD3(channel(0), channel(1), channel(2))
        }
        let dg = size, db = size * size
        let origin = (Int(lower.z) * size + Int(lower.y)) * size + Int(lower.x)
        return tetrahedral(f, greenStride: dg, blueStride: db) { values[origin + $0] }
    }
}
