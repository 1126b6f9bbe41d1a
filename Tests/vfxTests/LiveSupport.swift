import Foundation
import VFXTestSupport

/// A program running beside a test, with its standard input, output and error as pipes the test drives.
final class LiveProcess: @unchecked Sendable {
    // Sendable: the pipes and the process are thread-safe to use from one writer and one reader each;
    // `errors` locks itself.
    let process = Process()
    private let input = Pipe(), output = Pipe(), errorPipe = Pipe()
    private let errors = LockedData()
    private let errorsDone = DispatchSemaphore(value: 0)

    init(_ executable: String, _ arguments: [String], inputFromNull: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = inputFromNull ? FileHandle.nullDevice : input
        process.standardOutput = output
        process.standardError = errorPipe
        try process.run()
        let handle = errorPipe.fileHandleForReading
        let errors = errors, done = errorsDone
        DispatchQueue.global().async {
            errors.set(handle.readDataToEndOfFile())
            done.signal()
        }
    }

    convenience init(vfx arguments: [String], inputFromNull: Bool = false) throws {
        try self.init(CommandLineRun.vfx, arguments, inputFromNull: inputFromNull)
    }

    var stdin: FileHandle { input.fileHandleForWriting }
    var stdout: FileHandle { output.fileHandleForReading }

    /// Writes one line to standard input (ignoring a closed pipe).
    func send(_ line: String) {
        try? stdin.write(contentsOf: Data((line + "\n").utf8))
    }

    func closeInput() { try? stdin.close() }

    /// Waits up to `timeout` seconds for the exit; false (and the process killed) when it did not end.
    @discardableResult
    func wait(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return false
        }
        process.waitUntilExit()
        return true
    }

    var status: Int32 { process.terminationStatus }

    /// Everything written on standard error (after the process ended).
    var stderr: String {
        errorsDone.wait()
        errorsDone.signal()
        return String(decoding: errors.data, as: UTF8.self)
    }
}

/// Reads lines, or exact byte counts, from a pipe.
final class PipeReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(_ handle: FileHandle) { descriptor = handle.fileDescriptor }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard got > 0 else { return false }
        buffer.append(contentsOf: chunk[..<got])
        return true
    }

    func line() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                defer { buffer.removeSubrange(...newline) }
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            guard fill() else { return nil }
        }
    }

    func bytes(_ count: Int) -> [UInt8]? {
        while buffer.count < count { guard fill() else { return nil } }
        defer { buffer.removeSubrange(..<count) }
        return Array(buffer[..<count])
    }
}

/// y4m streams as the tests write and read them (I420).
enum Y4MStream {
    static func header(width: Int, height: Int, rate: String) -> Data {
        Data("YUV4MPEG2 W\(width) H\(height) F\(rate) Ip A1:1 C420jpeg XYSCSS=420JPEG\n".utf8)
    }

    static func frameBytes(width: Int, height: Int) -> Int { width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2) }

    /// The frames of a whole y4m file or stream.
    static func frames(_ data: Data) -> (width: Int, height: Int, frames: [[UInt8]]) {
        let bytes = [UInt8](data)
        guard let newline = bytes.firstIndex(of: 10) else { return (0, 0, []) }
        let header = String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ")
        let width = header.first { $0.hasPrefix("W") }.flatMap { Int($0.dropFirst()) } ?? 0
        let height = header.first { $0.hasPrefix("H") }.flatMap { Int($0.dropFirst()) } ?? 0
        let size = frameBytes(width: width, height: height)
        var frames: [[UInt8]] = []
        var index = newline + 1
        while index < bytes.count, let end = bytes[index...].firstIndex(of: 10) {
            let start = end + 1
            guard start + size <= bytes.count else { break }
            frames.append(Array(bytes[start..<(start + size)]))
            index = start + size
        }
        return (width, height, frames)
    }

    /// PSNR over all bytes (planes together), in dB; infinity when equal.
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return 0 }
        var sum = 0.0
        for index in a.indices {
            let d = Double(Int(a[index]) - Int(b[index]))
            sum += d * d
        }
        if sum == 0 { return .infinity }
        return 10 * log10(255 * 255 / (sum / Double(a.count)))
    }
}

/// A free TCP/UDP port number on the loopback interface (asked from the kernel, then released).
func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The machine's load, printed beside the live measurements. Real-time bounds (latency p99, no drops) are
/// speed targets: the tests check order, counts and content, and print the timings; the bounds themselves
/// are measured on a quiet machine with the commands in docs/live.md, not judged by the suite.
enum MachineLoad {
    /// The one-minute load average over the number of cores.
    static var perCore: Double {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "0"
        let first = Double(text.split(separator: " ").first ?? "0") ?? 0
        return first / Double(max(1, ProcessInfo.processInfo.activeProcessorCount))
    }

    static var note: String { String(format: "load %.1f per core", perCore) }
}
