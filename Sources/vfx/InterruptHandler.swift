import Dispatch
import Foundation
import VFXPipeline

/// Turns Ctrl-C (SIGINT), SIGTERM and SIGHUP (a closed terminal) into a cancelled run, so the writer
/// removes its partial output before `vfx` exits. A second signal exits at once (status 130).
///
/// With a `cleanup`, the first signal runs it and exits at once (status 128 + the signal's number): for
/// work that cannot stop part-way, such as `vfx bench` removing its files in /dev/shm.
///
/// ```swift
/// let interrupt = InterruptHandler()
/// defer { interrupt.restore() }
/// try runner.run(into: writer, cancellation: interrupt.flag)
/// ```
final class InterruptHandler {
    let flag = CancellationFlag()
    private var sources: [any DispatchSourceSignal] = []
    static let signals = [SIGINT, SIGTERM, SIGHUP]

    init(cleanup: (@Sendable () -> Void)? = nil) {
        for number in Self.signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let flag = flag
            source.setEventHandler {
                if let cleanup {
                    cleanup()
                    exit(128 + number)
                }
                if flag.isCancelled { exit(130) }
                flag.cancel()
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Puts the default signal behaviour back.
    func restore() {
        for source in sources { source.cancel() }
        for number in Self.signals { signal(number, SIG_DFL) }
    }
}
