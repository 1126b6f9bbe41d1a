import Foundation
import VFXCore

/// A parsed `.cube` file (Adobe/Resolve lookup tables, 1D or 3D). Read here, in a module built with every check on,
/// because its input is a user's file; the `lut` filter applies it (`CubeFile.apply` in VFXFilters).
///
/// ```swift
/// let cube = try CubeFile(contentsOf: "grade.cube")   // CubeFileError: "grade.cube:12: 'x' is not a number"
/// print(cube.dimensions, cube.size)
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
            throw CubeFileError(path: path, line: 0, reason: "cannot read the file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CubeFileError(path: path, line: 0, reason: "not a text file")
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
        func fail(_ line: Int, _ reason: String) -> CubeFileError { CubeFileError(path: path, line: line, reason: reason) }
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
}

/// A `.cube` file that cannot be read or is malformed: one line naming the file and, where there is one, the line.
public struct CubeFileError: Error, Equatable, CustomStringConvertible {
    public let path: String
    /// 1-based; 0 when the problem is the file as a whole.
    public let line: Int
    public let reason: String

    public var description: String { line > 0 ? "\(path):\(line): \(reason)" : "\(path): \(reason)" }
}
