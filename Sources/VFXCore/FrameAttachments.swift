/// A value that rides along with a frame: an analysis result (faces, a person mask) or anything a stage wants
/// later stages to see. Attachments are looked up by their type.
///
/// ```swift
/// struct SceneBrightness: FrameAttachment { var mean: Float }
/// frame.attachments[SceneBrightness.self] = SceneBrightness(mean: 0.4)
/// frame.attachments[SceneBrightness.self]?.mean   // 0.4
/// ```
public protocol FrameAttachment: Sendable {}

/// The attachments of one frame, at most one value per type. Copying a frame copies its attachments.
public struct FrameAttachments: Sendable {
    private var values: [ObjectIdentifier: any FrameAttachment] = [:]

    public init() {}

    /// The attached value of type `type`, or nil; assigning nil removes it.
    public subscript<Value: FrameAttachment>(_ type: Value.Type) -> Value? {
        get { values[ObjectIdentifier(type)] as? Value }
        set { values[ObjectIdentifier(type)] = newValue }
    }

    public var isEmpty: Bool { values.isEmpty }
    public var count: Int { values.count }
}

/// A value with the timestamp of the frame it was computed from: analysis that runs beside the chain may be a
/// frame or two behind the frame it is applied to, and effects can tell by how much.
///
/// ```swift
/// let faces = Timestamped(value: observations, timestamp: frame.timestamp)
/// ```
public struct Timestamped<Value: Sendable>: Sendable {
    public var value: Value
    /// The timestamp of the frame `value` came from (nil when that frame had none).
    public var timestamp: MediaTime?

    public init(value: Value, timestamp: MediaTime?) {
        self.value = value
        self.timestamp = timestamp
    }
}

extension Timestamped: FrameAttachment where Value: FrameAttachment {}
