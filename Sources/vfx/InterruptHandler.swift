import Dispatch
import Foundation
import VFXPipeline

/// Turns Ctrl-C (SIGINT) and SIGTERM into a cancelled run, so the writer removes its partial output before
/// `vfx` exits. A second signal exits at once (status 130).
///
/// ```swift
/// let interrupt = InterruptHandler()
/// defer { interrupt.restore() }
/// try runner.run(into: writer, cancellation: interrupt.flag)
/// ```
final class InterruptHandler {
    let flag = CancellationFlag()
    private var sources: [any DispatchSourceSignal] = []
    private static let signals = [SIGINT, SIGTERM]

    init() {
        for number in Self.signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let flag = flag
            source.setEventHandler {
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
