import Foundation

/// A first-in first-out queue of limited capacity between two threads: `push` waits while it is full,
/// `pop` waits while it is empty. `close()` ends the stream (pop returns nil once drained); `cancel()` also
/// wakes and releases a waiting producer.
///
/// ```swift
/// let queue = BoundedQueue<Int>(capacity: 4)
/// queue.push(1); queue.close()
/// queue.pop()   // 1, then nil
/// ```
public final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    // Sendable: every stored property is read and written only while holding `condition`.
    private let condition = NSCondition()
    /// A ring of `capacity` slots; a popped slot is emptied at once, so the queue never keeps a frame alive.
    private var slots: [Element?]
    private var head = 0
    private var count = 0
    private var closed = false
    private var cancelled = false
    public let capacity: Int

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        slots = Array(repeating: nil, count: self.capacity)
    }

    /// Appends `item`, waiting for room. Returns false (dropping the item) when the queue was cancelled.
    @discardableResult
    public func push(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while count >= capacity && !cancelled { condition.wait() }
        if cancelled { return false }
        slots[(head + count) % capacity] = item
        count += 1
        condition.broadcast()
        return true
    }

    /// The oldest item, waiting for one; nil when the queue is closed and empty, or cancelled.
    public func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while count == 0 && !closed && !cancelled { condition.wait() }
        if cancelled || count == 0 { return nil }
        let item = slots[head].take()
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
        return item
    }

    /// True once `cancel()` was called.
    public var wasCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// No more items will come: consumers drain what is queued, then get nil.
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Stops both sides at once: waiting producers and consumers return immediately.
    public func cancel() {
        condition.lock()
        cancelled = true
        for index in slots.indices { slots[index] = nil }
        head = 0
        count = 0
        condition.broadcast()
        condition.unlock()
    }
}
