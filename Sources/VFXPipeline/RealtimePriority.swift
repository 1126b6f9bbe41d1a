import Foundation

/// The scheduling priority of a real-time run's own threads (capture, the chain, the sink, audio).
///
/// `.raised` asks the system to run them ahead of ordinary work (a nice value of −10 on Linux, about nine
/// times the CPU share of a normal thread when the cores are busy), as call apps and media servers do for
/// their capture and media threads; where the system refuses (an unprivileged user without a raised nice
/// limit) they keep the normal priority. Analysis beside the chain (segmentation) keeps the normal priority,
/// so it never delays a frame.
///
/// ```swift
/// let runner = RealtimeRunner(source: camera, processor: chain, options: .init(pacing: .arrival, priority: .raised))
/// ```
public enum RealtimePriority: Sendable, Equatable {
    case normal
    case raised

    /// The nice value `.raised` asks for.
    static let raisedNice: Int32 = -10

    /// Applies the priority to the calling thread; returns whether it took effect (`.normal`: always true).
    @discardableResult
    func apply() -> Bool {
        guard self == .raised, let thread = ThreadID.current else { return self == .normal }
        return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread), Self.raisedNice) == 0
    }

    /// Gives the calling thread the normal priority back (the frame thread is the caller's, lent to the run).
    static func restore(to nice: Int32) {
        guard let thread = ThreadID.current else { return }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread), nice)
    }

    /// The calling thread's nice value.
    static var currentNice: Int32 {
        guard let thread = ThreadID.current else { return 0 }
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread))
    }
}

/// The calling thread's kernel id, from /proc/thread-self (Glibc's `gettid` is not visible to Swift).
enum ThreadID {
    static var current: Int32? {
        var target = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &target, target.count - 1)
        guard count > 0 else { return nil }
        let text = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "/").last.flatMap { Int32($0) }
    }
}
