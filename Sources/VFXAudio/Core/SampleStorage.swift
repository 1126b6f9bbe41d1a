/// A fixed run of zeroed numbers allocated when a filter is initialized and freed with it, so that
/// `process` only reads and writes memory that already exists (no allocation, no copy-on-write checks).
///
/// ```swift
/// let delay = SampleStorage<Float>(count: 48_000)
/// delay[10] = 0.5
/// ```
final class SampleStorage<Element: Numeric> {
    let pointer: UnsafeMutablePointer<Element>
    let count: Int

    init(count: Int) {
        self.count = max(count, 1)
        pointer = .allocate(capacity: self.count)
        pointer.initialize(repeating: 0, count: self.count)
    }

    deinit { pointer.deallocate() }

    subscript(index: Int) -> Element {
        get { pointer[index] }
        set { pointer[index] = newValue }
    }

    /// Sets every element to zero.
    func zero() { pointer.update(repeating: 0, count: count) }
}
