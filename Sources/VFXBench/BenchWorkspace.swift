import Foundation
import VFXCore

/// A private folder for a benchmark's files: `/dev/shm/vfx-bench-XXXXXX` (RAM; the system's temporary
/// folder where there is no /dev/shm; the folder named by `VFX_BENCH_FOLDER` when set), made with
/// `mkdtemp`, so two runs never share a name. Every live workspace is registered, so a signal handler can
/// remove them all (`removeAll`) before the process exits.
///
/// ```swift
/// let workspace = try BenchWorkspace()
/// defer { workspace.remove() }
/// let clip = workspace.path("clip.y4m")
/// ```
public final class BenchWorkspace: Sendable {
    public let folder: String

    public init() throws {
        let parent = ProcessInfo.processInfo.environment["VFX_BENCH_FOLDER"]
            ?? (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory())
        var template = Array((parent + "/vfx-bench-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw MediaBenchmarkError(message: "\(parent): cannot make a benchmark folder: \(String(cString: strerror(errno)))")
        }
        folder = String(cString: made)
        _ = BenchWorkspace.live.withLock { $0.insert(folder) }
    }

    deinit { remove() }

    /// A file inside the workspace.
    public func path(_ name: String) -> String { folder + "/" + name }

    /// Removes the folder and everything in it (safe to call more than once).
    public func remove() {
        BenchWorkspace.removeFolder(folder)
    }

    /// Removes every workspace still present (for signal handlers).
    public static func removeAll() {
        for folder in live.withLock({ $0 }) { removeFolder(folder) }
    }

    private static func removeFolder(_ folder: String) {
        guard live.withLock({ $0.remove(folder) }) != nil else { return }
        try? FileManager.default.removeItem(atPath: folder)
    }

    private static let live = Locked<Set<String>>([])
}
