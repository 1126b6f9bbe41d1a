import Foundation

/// A `.npy` file that cannot be read or written; the description is one line naming the file.
public struct NumPyError: Error, CustomStringConvertible {
    /// The file (or other source) concerned.
    public let file: String
    /// What is wrong with it.
    public let reason: String

    public var description: String { "\(file): \(reason)" }
}

/// NumPy's `.npy` format: tensors in and out of `vfx model run`, and the reference tensors of the tests.
///
/// Reads format versions 1, 2 and 3 (the header length is 2 bytes in version 1, 4 bytes after), C-order
/// arrays of little-endian `float32`, `float64`, `int32` or `uint8`, and converts them to `Float`. Writes
/// version 1 files of little-endian `float32` (version 2 when the header would not fit in version 1).
///
/// ```swift
/// let input = try NumPy.read(contentsOf: URL(fileURLWithPath: "input_0.npy"))
/// try NumPy.write(Tensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6]), to: URL(fileURLWithPath: "out.npy"))
/// ```
public enum NumPy {
    /// The element types read (each is converted to `Float`).
    public enum ElementType: String, Sendable, CaseIterable {
        case float32 = "f4", float64 = "f8", int32 = "i4", uint8 = "u1"

        var byteCount: Int {
            switch self {
            case .float32, .int32: 4
            case .float64: 8
            case .uint8: 1
            }
        }
    }

    private static let magic: [UInt8] = [0x93] + Array("NUMPY".utf8)

    /// Reads a `.npy` file into a tensor of `Float`.
    public static func read(contentsOf url: URL) throws -> Tensor {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw NumPyError(file: url.path, reason: exists ? "cannot be read" : "no such file")
        }
        return try decode(data, file: url.path)
    }

    /// Writes `tensor` as a little-endian `float32` `.npy` file. The file appears complete or not at all.
    public static func write(_ tensor: Tensor, to url: URL) throws {
        let data = try encode(tensor, file: url.path)
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw NumPyError(file: url.path, reason: "cannot be written")
        }
    }

    /// Parses the bytes of a `.npy` file; `file` names it in errors.
    public static func decode(_ data: Data, file: String) throws -> Tensor {
        func fail(_ reason: String) -> NumPyError { NumPyError(file: file, reason: reason) }
        let bytes = [UInt8](data)
        guard bytes.count >= 10, Array(bytes[0..<6]) == magic else {
            throw fail("not a NumPy .npy file (no \\x93NUMPY signature)")
        }
        let major = bytes[6]
        let headerStart: Int
        let headerLength: Int
        switch major {
        case 1:
            headerStart = 10
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
        case 2, 3:
            guard bytes.count >= 12 else { throw fail("truncated .npy header") }
            headerStart = 12
            headerLength = (0..<4).reduce(0) { $0 | Int(bytes[8 + $1]) << (8 * $1) }
        default:
            throw fail("unsupported .npy format version \(major).\(bytes[7])")
        }
        guard headerLength <= bytes.count - headerStart else { throw fail("truncated .npy header") }
        let dataStart = headerStart + headerLength
        guard let header = String(bytes: bytes[headerStart..<dataStart], encoding: major == 3 ? .utf8 : .isoLatin1)
        else { throw fail("unreadable .npy header") }
        let (type, shape) = try parseHeader(header, fail: fail)

        var count = 1
        for dimension in shape {
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow else { throw fail("shape \(shape) is too large") }
            count = product
        }
        let (byteCount, overflow) = count.multipliedReportingOverflow(by: type.byteCount)
        guard !overflow, byteCount <= bytes.count - dataStart else {
            throw fail("data truncated: shape \(shape) of \(type) needs \(count) elements, "
                + "the file holds \((bytes.count - dataStart) / type.byteCount)")
        }
        var scalars = [Float](repeating: 0, count: count)
        bytes.withUnsafeBytes { raw in
            let source = UnsafeRawBufferPointer(rebasing: raw[dataStart..<dataStart + byteCount])
            func load<T: FixedWidthInteger>(_ index: Int, as type: T.Type) -> T {
                T(littleEndian: source.loadUnaligned(fromByteOffset: index * MemoryLayout<T>.size, as: T.self))
            }
            switch type {
            case .float32:
                for i in 0..<count { scalars[i] = Float(bitPattern: load(i, as: UInt32.self)) }
            case .float64:
                for i in 0..<count { scalars[i] = Float(Double(bitPattern: load(i, as: UInt64.self))) }
            case .int32:
                for i in 0..<count { scalars[i] = Float(load(i, as: Int32.self)) }
            case .uint8:
                for i in 0..<count { scalars[i] = Float(source[i]) }
            }
        }
        return Tensor(shape: shape, scalars: scalars)
    }

    /// The bytes of a `.npy` file holding `tensor` as little-endian `float32`; `file` names it in errors.
    public static func encode(_ tensor: Tensor, file: String = "tensor") throws -> Data {
        var count: Int? = 1
        for dimension in tensor.shape {
            let product = count.map { $0.multipliedReportingOverflow(by: dimension) }
            count = dimension >= 0 && product?.overflow == false ? product?.partialValue : nil
        }
        guard count == tensor.scalars.count else {
            throw NumPyError(file: file, reason: "shape \(tensor.shape) does not match \(tensor.scalars.count) values")
        }
        let dimensions = tensor.shape.map(String.init).joined(separator: ", ")
        let shapeText = tensor.shape.count == 1 ? "(\(dimensions),)" : "(\(dimensions))"
        var header = "{'descr': '<f4', 'fortran_order': False, 'shape': \(shapeText), }"
        // The data starts at a multiple of 64 bytes; the header ends with a newline. Version 1 stores the
        // header length in 2 bytes, version 2 in 4.
        let prefixLength = header.utf8.count + 64 <= 0xFFFF ? 10 : 12
        let padding = (64 - (prefixLength + header.utf8.count + 1) % 64) % 64
        header += String(repeating: " ", count: padding) + "\n"
        let length = header.utf8.count

        var data = Data(magic)
        if prefixLength == 10 {
            data.append(contentsOf: [1, 0, UInt8(length & 0xFF), UInt8(length >> 8)])
        } else {
            data.append(contentsOf: [2, 0] + (0..<4).map { UInt8((length >> (8 * $0)) & 0xFF) })
        }
        data.append(contentsOf: Array(header.utf8))
        data.reserveCapacity(data.count + 4 * tensor.scalars.count)
        tensor.scalars.withUnsafeBufferPointer { scalars in
            for value in scalars {
                withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) }
            }
        }
        return data
    }

    /// The element type and shape from a header such as
    /// `{'descr': '<f4', 'fortran_order': False, 'shape': (1, 128, 128, 3), }`.
    private static func parseHeader(_ header: String, fail: (String) -> NumPyError) throws -> (ElementType, [Int]) {
        func value(of key: String) throws -> Substring {
            guard let keyRange = header.range(of: "'\(key)'") ?? header.range(of: "\"\(key)\""),
                  let colon = header[keyRange.upperBound...].firstIndex(of: ":")
            else { throw fail("the .npy header has no '\(key)'") }
            return header[header.index(after: colon)...].drop(while: { $0 == " " })
        }

        let descrValue = try value(of: "descr")
        guard let quote = descrValue.first, quote == "'" || quote == "\"",
              let end = descrValue.dropFirst().firstIndex(of: quote)
        else { throw fail("unreadable 'descr' in the .npy header") }
        let descr = String(descrValue[descrValue.index(after: descrValue.startIndex)..<end])
        // Little-endian ('<'), or byte order not applicable ('|', single bytes); '=' is native, which is
        // little-endian on every platform VideoFX builds for.
        guard let order = descr.first, order == "<" || order == "|" || order == "=",
              let type = ElementType(rawValue: String(descr.dropFirst()))
        else {
            throw fail("element type '\(descr)' is not supported (little-endian float32, float64, int32 or uint8)")
        }

        let fortran = try value(of: "fortran_order")
        if fortran.hasPrefix("True") { throw fail("Fortran-order arrays are not supported (save a C-order array)") }
        guard fortran.hasPrefix("False") else { throw fail("unreadable 'fortran_order' in the .npy header") }

        let shapeValue = try value(of: "shape")
        guard shapeValue.first == "(", let close = shapeValue.firstIndex(of: ")") else {
            throw fail("unreadable 'shape' in the .npy header")
        }
        var shape: [Int] = []
        for part in shapeValue[shapeValue.index(after: shapeValue.startIndex)..<close].split(separator: ",") {
            let text = part.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            guard let dimension = Int(text.hasSuffix("L") ? String(text.dropLast()) : text), dimension >= 0 else {
                throw fail("unreadable 'shape' in the .npy header")
            }
            shape.append(dimension)
        }
        return (type, shape)
    }
}
