import Foundation
import VFXCore
import VFXFilters
import VFXPipeline

/// The commands of a live run, one per line: `set CHAIN`, `param NAME.KEY=VALUE`, `stats`, `quit`. Each gets
/// one JSON line back: `{"ok": true, "frame": N}` (N: the first output frame the change reaches),
/// `{"ok": true, "stats": {…}}`, `{"ok": true}` for quit, or `{"ok": false, "error": "…"}`.
///
/// A change is compiled on the thread that reads the command, then swapped in by the frame thread at the
/// next frame boundary (`RealtimeRunner.replaceProcessor`); changes are applied one at a time. Only the stages
/// that changed are made anew: the others are kept with their state (`LiveStages`, `KeyedStageChain`).
///
/// ```swift
/// control.answer("param vignette.strength=0.8")   // {"ok": true, "frame": 412}
/// ```
final class LiveControl: @unchecked Sendable {
    // Sendable: `chain` and `stages` are read and written only while holding `changing`; the runner is
    // thread-safe; a successor chain reads only what `stages` fixed when it was configured (KeyedStageChain).
    private let runner: RealtimeRunner
    private let changing = NSLock()
    private var chain: FilterChain
    /// The stages running now (the last change the runner installed).
    private var stages: KeyedStageChain
    private let rotation: Rotation

    init(runner: RealtimeRunner, chain: FilterChain, stages: KeyedStageChain, rotation: Rotation) {
        self.runner = runner
        self.chain = chain
        self.stages = stages
        self.rotation = rotation
    }

    /// The answer to one command line (nil for a blank line).
    func answer(_ line: String) -> String? {
        let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }
        let word = text.prefix { !$0.isWhitespace }
        let rest = text.dropFirst(word.count).trimmingCharacters(in: .whitespaces)
        do {
            switch word {
            case "set":
                return try change { _ in try FilterChain(parsing: rest) }
            case "param":
                return try change { current in try Self.applying(assignment: rest, to: current) }
            case "stats":
                return "{\"ok\": true, \"stats\": \(runner.snapshot.json)}"
            case "quit":
                runner.stop()
                return "{\"ok\": true}"
            default:
                return Self.failure("unknown command '\(word)' (set, param, stats, quit)")
            }
        } catch {
            return Self.failure("\(error)")
        }
    }

    /// Builds the new chain from the current one, compiles it and waits for the frame that carries it.
    private func change(_ make: (FilterChain) throws -> FilterChain) throws -> String {
        changing.lock()
        defer { changing.unlock() }
        let next = try make(chain)
        let successor = LiveStages.chain(next, rotation: rotation, replacing: stages)
        let frame = try runner.replaceProcessor(successor)
        chain = next
        stages = successor
        return "{\"ok\": true, \"frame\": \(frame)}"
    }

    /// `current` with `NAME.KEY=VALUE` applied to the first filter called NAME.
    static func applying(assignment: String, to current: FilterChain) throws -> FilterChain {
        guard let equals = assignment.firstIndex(of: "="), let dot = assignment[..<equals].firstIndex(of: ".") else {
            throw LiveError(description: "param needs NAME.KEY=VALUE, got '\(assignment)'")
        }
        let name = assignment[..<dot].lowercased()
        let key = String(assignment[assignment.index(after: dot)..<equals])
        let value = String(assignment[assignment.index(after: equals)...])
        var next = current
        guard let index = next.filters.firstIndex(where: { $0.name.lowercased() == name }) else {
            throw LiveError(description: "no filter '\(name)' in the chain \"\(current)\"")
        }
        try next.filters[index].set(key, to: value)
        return next
    }

    static func failure(_ message: String) -> String {
        var escaped = ""
        for scalar in message.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default:
                if scalar.value < 0x20 { escaped += String(format: "\\u%04x", scalar.value) } else { escaped.unicodeScalars.append(scalar) }
            }
        }
        return "{\"ok\": false, \"error\": \"\(escaped)\"}"
    }

    /// Reads commands from the file descriptor `input` on a thread of its own until it ends, answering on
    /// `output`.
    func serve(input: Int32, output: Int32) {
        let thread = Thread { [self] in
            let lines = LineReader(descriptor: input)
            while let line = lines.next() {
                guard let reply = answer(line) else { continue }
                let bytes = Array((reply + "\n").utf8)
                _ = bytes.withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
            }
        }
        thread.name = "vfx.live.control"
        thread.start()
    }
}

/// Lines from a file descriptor (no buffering beyond what one line needs).
final class LineReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// The next line without its newline; nil at the end.
    func next() -> String? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got <= 0 {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(contentsOf: chunk[..<got])
        }
    }
}

/// `--control PATH`: a Unix socket taking the same line commands; each connection gets its own answers.
final class LiveControlSocket: @unchecked Sendable {
    // Sendable: `descriptor` and `path` are set in init and only read afterwards; `control` is thread-safe.
    private let descriptor: Int32
    private let path: String
    private let control: LiveControl

    init(path: String, control: LiveControl) throws {
        self.path = path
        self.control = control
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw UsageError("--control \(path): a file that is not a socket is in the way")
            }
            unlink(path)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw UsageError("--control \(path): the path is too long for a Unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { target in
            for (index, byte) in bytes.enumerated() { target[index] = byte }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw UsageError("--control \(path): \(String(cString: strerror(errno)))") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            let reason = String(cString: strerror(errno))
            Foundation.close(fd)
            throw UsageError("--control \(path): \(reason)")
        }
        descriptor = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "vfx.live.socket"
        thread.start()
    }

    private func acceptLoop() {
        while true {
            let client = accept(descriptor, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let thread = Thread { [control] in
                let lines = LineReader(descriptor: client)
                while let line = lines.next() {
                    guard let reply = control.answer(line) else { continue }
                    let data = Array((reply + "\n").utf8)
                    _ = data.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
                Foundation.close(client)
            }
            thread.start()
        }
    }

    /// Stops listening and removes the socket file.
    func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        Foundation.close(descriptor)
        unlink(path)
    }
}
