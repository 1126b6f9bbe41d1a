import Foundation

/// A vision model that cannot be loaded or used: one line that names the model file.
public struct VisionError: Error, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}
