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
    private var items: [Element] = []
    private var head = 0
    private var closed = false
    private var cancelled = false
    public let capacity: Int

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        items.reserveCapacity(self.capacity)
    }

    /// Appends `item`, waiting for room. Returns false (dropping the item) when the queue was cancelled.
    @discardableResult
    public func push(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count - head >= capacity && !cancelled { condition.wait() }
        if cancelled { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    /// The oldest item, waiting for one; nil when the queue is closed and empty, or cancelled.
    public func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count && !closed && !cancelled { condition.wait() }
        if cancelled || head == items.count { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
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
        items.removeAll()
        head = 0
        condition.broadcast()
        condition.unlock()
    }
}
