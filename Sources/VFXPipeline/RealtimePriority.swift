import Foundation

/// The scheduling priority of a real-time run's own threads (capture, the chain, the sink, audio).
///
/// `.raised` asks the system to run them ahead of ordinary work, as call apps and media servers do for their
/// media threads (PipeWire and JACK through RTKit): the round-robin real-time class at a low priority (10 of
/// 99) where allowed (root, or `RLIMIT_RTPRIO`, e.g. `@audio - rtprio 20` in `/etc/security/limits.conf`),
/// else a nice value of −10, else nothing. Nice alone matters only within the program's session on a system
/// that groups sessions (Linux's autogroup, on by default on desktops), which is why the real-time class comes
/// first. The threads sleep whenever no frame is waiting, and Linux keeps at least 5 % of each core for
/// ordinary work (`sched_rt_runtime_us`). Analysis beside the chain (segmentation) keeps the normal priority,
/// so when the cores are short it is the one that falls behind, never a frame.
///
/// ```swift
/// let runner = RealtimeRunner(source: camera, processor: chain, options: .init(pacing: .arrival, priority: .raised))
/// ```
public enum RealtimePriority: Sendable, Equatable {
    case normal
    case raised

    /// The real-time priority and the nice value `.raised` asks for.
    static let realtimePriority: Int32 = 10
    static let raisedNice: Int32 = -10

    /// Applies the priority to the calling thread; returns whether it took effect (`.normal`: always true).
    @discardableResult
    func apply() -> Bool {
        guard self == .raised else { return true }
        var parameters = sched_param()
        parameters.sched_priority = Self.realtimePriority
        if pthread_setschedparam(pthread_self(), Int32(SCHED_RR), &parameters) == 0 { return true }
        guard let thread = ThreadID.current else { return false }
        return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread), Self.raisedNice) == 0
    }

    /// Gives the calling thread the ordinary class and `nice` back (the frame thread is the caller's, lent to
    /// the run).
    static func restore(to nice: Int32) {
        var parameters = sched_param()
        parameters.sched_priority = 0
        _ = pthread_setschedparam(pthread_self(), Int32(SCHED_OTHER), &parameters)
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
