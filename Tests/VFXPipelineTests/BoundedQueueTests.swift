import Foundation
import Testing
import VFXPipeline

/// Counts the instances alive, so a test sees whether a queue keeps popped items.
final class Tracked: Sendable {
    static let alive = LiveCount()
    init() { Tracked.alive.add(1) }
    deinit { Tracked.alive.add(-1) }
}

final class LiveCount: @unchecked Sendable {
    // Sendable: `value` is read and written only while holding `lock`.
    private let lock = NSLock()
    private var value = 0
    func add(_ n: Int) { lock.lock(); value += n; lock.unlock() }
    var current: Int { lock.lock(); defer { lock.unlock() }; return value }
}

@Suite(.serialized) struct BoundedQueueTests {
    /// A consumer slower than its producer keeps the queue full the whole run (the encoder behind the
    /// decoder): popped items must be released at once, so what is alive stays bounded by the capacity.
    @Test func aQueueThatNeverDrainsKeepsNoPoppedItem() {
        let queue = BoundedQueue<Tracked>(capacity: 4)
        for _ in 0..<4 { queue.push(Tracked()) }
        var peak = 0
        for _ in 0..<1000 {
            _ = queue.pop()            // released here
            queue.push(Tracked())      // and the queue is full again
            peak = max(peak, Tracked.alive.current)
        }
        #expect(peak <= 4)
        queue.close()
        while queue.pop() != nil {}
        #expect(Tracked.alive.current == 0)
    }

    @Test func itemsComeOutInOrderAcrossThreads() {
        let queue = BoundedQueue<Int>(capacity: 3)
        let producer = Thread {
            for i in 0..<10_000 { queue.push(i) }
            queue.close()
        }
        producer.start()
        var received: [Int] = []
        while let i = queue.pop() { received.append(i) }
        #expect(received == Array(0..<10_000))
    }
}
