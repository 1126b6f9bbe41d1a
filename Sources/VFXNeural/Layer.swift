/// One prepared step of a program: its tensors are fixed offsets into the arena (planned at load time),
/// its weights are already packed, so `run` only computes.
///
/// ```swift
/// for layer in layers { layer.run(arena.pointer) }
/// ```
protocol Layer: AnyObject {
    func run(_ arena: UnsafeMutablePointer<Float>)
}

/// A fused activation: the output is clamped to `lower...upper`.
struct Activation: Equatable {
    var lower: Float
    var upper: Float

    static let none = Activation(lower: -.infinity, upper: .infinity)
    static let relu = Activation(lower: 0, upper: .infinity)
    static let relu6 = Activation(lower: 0, upper: 6)
    static let reluN1To1 = Activation(lower: -1, upper: 1)

    /// The schema's `ActivationFunctionType`: 0 none, 1 relu, 2 relu_n1_to_1, 3 relu6 (tanh and sign bit
    /// are not used by the supported models).
    init(code: Int8) throws(ModelError) {
        switch code {
        case 0: self = .none
        case 1: self = .relu
        case 2: self = .reluN1To1
        case 3: self = .relu6
        default: throw ModelError("unsupported fused activation \(code)")
        }
    }

    init(lower: Float, upper: Float) {
        self.lower = lower
        self.upper = upper
    }

    /// The activation applied after this one (both clamps, intersected).
    func followed(by next: Activation) -> Activation {
        Activation(lower: max(lower, next.lower), upper: min(upper, next.upper))
    }
}

/// Why a well-formed file cannot be run (unsupported operator, inconsistent shapes...).
struct ModelError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
