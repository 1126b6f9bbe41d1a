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
        name: "lut", summary: "A .cube lookup table (1D or 3D), blended with the original by intensity.",
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
        let cube = try CubeFile(contentsOf: arguments.text("file"))
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

/// A parsed `.cube` file.
///
/// ```swift
/// let cube = try CubeFile(contentsOf: "grade.cube")
/// let graded = cube.apply(SIMD3(0.2, 0.5, 0.8))
/// ```
public struct CubeFile: Sendable {
    public let title: String?
    /// 1 or 3.
    public let dimensions: Int
    /// Entries per axis.
    public let size: Int
    public let domainMin: SIMD3<Float>
    public let domainMax: SIMD3<Float>
    /// Output values, red index fastest (3D: `(b·size + g)·size + r`; 1D: one entry per step).
    public let values: [SIMD3<Float>]

    /// Reads and checks `path`; errors name the file and the line.
    public init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FilterError.badFile(filter: "lut", path: path, line: 0, reason: "cannot read the file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw FilterError.badFile(filter: "lut", path: path, line: 0, reason: "not a text file")
        }
        try self.init(parsing: text, path: path)
    }

    /// The text of a 3D `.cube` file that samples `function` at `size`³ nodes (red fastest).
    public static func text(size: Int, title: String = "VideoFX", _ function: (SIMD3<Float>) -> SIMD3<Float>) -> String {
        var lines = ["TITLE \"\(title)\"", "LUT_3D_SIZE \(size)"]
        lines.reserveCapacity(size * size * size + 2)
        let step = 1 / Float(size - 1)
        for b in 0..<size {
            for g in 0..<size {
                for r in 0..<size {
                    let value = function(SIMD3(Float(r), Float(g), Float(b)) * step).clampedToUnit
                    lines.append(String(format: "%.6f %.6f %.6f", value.x, value.y, value.z))
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses the text of a `.cube` file (`path` names it in errors).
    public init(parsing text: String, path: String) throws {
        func fail(_ line: Int, _ reason: String) -> FilterError { .badFile(filter: "lut", path: path, line: line, reason: reason) }
        var title: String?
        var dimensions = 0, size = 0
        var domainMin = SIMD3<Float>(0, 0, 0), domainMax = SIMD3<Float>(1, 1, 1)
        var values: [SIMD3<Float>] = []
        var lineNumber = 0, lastValueLine = 0
        func numbers(_ words: ArraySlice<Substring>, count: Int, line: Int, what: String) throws -> [Float] {
            guard words.count == count else { throw fail(line, "\(what) needs \(count) numbers, found \(words.count)") }
            return try words.map { word in
                guard let value = Float(word), value.isFinite else { throw fail(line, "'\(word)' is not a number") }
                return value
            }
        }
        // Swift reads "\r\n" as one Character, so Windows line ends must be named as separators themselves.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            lineNumber += 1
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            if let start = first.first, start.isNumber || start == "-" || start == "+" || start == "." {
                guard dimensions > 0 else { throw fail(lineNumber, "table values before LUT_1D_SIZE or LUT_3D_SIZE") }
                let entry = try numbers(words[...], count: 3, line: lineNumber, what: "a table entry")
                values.append(SIMD3(entry[0], entry[1], entry[2]))
                lastValueLine = lineNumber
                continue
            }
            guard values.isEmpty else { throw fail(lineNumber, "keyword '\(first)' after the table values") }
            switch first.uppercased() {
            case "TITLE":
                title = line.drop(while: { $0 != "\"" }).dropFirst().prefix(while: { $0 != "\"" }).description
            case "LUT_3D_SIZE", "LUT_1D_SIZE":
                guard dimensions == 0 else { throw fail(lineNumber, "a second table size") }
                let is3D = first.uppercased() == "LUT_3D_SIZE"
                let limit = is3D ? 256 : 65536
                guard words.count == 2, let value = Int(words[1]), (2...limit).contains(value) else {
                    throw fail(lineNumber, "\(first) must be an integer in 2…\(limit)")
                }
                (dimensions, size) = (is3D ? 3 : 1, value)
            case "DOMAIN_MIN":
                let v = try numbers(words.dropFirst(), count: 3, line: lineNumber, what: "DOMAIN_MIN")
                domainMin = SIMD3(v[0], v[1], v[2])
            case "DOMAIN_MAX":
                let v = try numbers(words.dropFirst(), count: 3, line: lineNumber, what: "DOMAIN_MAX")
                domainMax = SIMD3(v[0], v[1], v[2])
            case "LUT_1D_INPUT_RANGE", "LUT_3D_INPUT_RANGE":
                let v = try numbers(words.dropFirst(), count: 2, line: lineNumber, what: String(first))
                domainMin = SIMD3(repeating: v[0])
                domainMax = SIMD3(repeating: v[1])
            default:
                throw fail(lineNumber, "unknown keyword '\(first)'")
            }
        }
        guard dimensions > 0 else { throw fail(0, "no LUT_1D_SIZE or LUT_3D_SIZE") }
        let expected = dimensions == 3 ? size * size * size : size
        guard values.count == expected else {
            throw fail(max(lastValueLine, 1), "the table has \(values.count) entries, LUT_\(dimensions)D_SIZE \(size) needs \(expected)")
        }
        guard all(domainMax .> domainMin) else { throw fail(0, "DOMAIN_MAX must be above DOMAIN_MIN in every channel") }
        self.title = title
        self.dimensions = dimensions
        self.size = size
        self.domainMin = domainMin
        self.domainMax = domainMax
        self.values = values
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
