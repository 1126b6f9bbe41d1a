/// A stage broke the processor contract.
public enum PipelineError: Error, CustomStringConvertible, Equatable {
    /// A stage emitted a frame whose timestamp is not after the previous frame's.
    case timestampsNotIncreasing(previous: Double, next: Double)

    public var description: String {
        switch self {
        case .timestampsNotIncreasing(let previous, let next):
            "a stage emitted a frame at \(next) s after one at \(previous) s (timestamps must increase)"
        }
    }
}
