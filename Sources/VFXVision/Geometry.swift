import Foundation

/// A point in normalized frame coordinates: origin at the top-left corner, x to the right and y down,
/// 0…1 across the frame (values outside mean outside the frame).
///
/// ```swift
/// let nose = NormalizedPoint(x: 0.5, y: 0.4)
/// let inPixels = nose.pixels(width: 1280, height: 720)      // (640, 288)
/// ```
public struct NormalizedPoint: Sendable, Hashable, Codable {
    public var x: Float
    public var y: Float

    public init(x: Float, y: Float) {
        self.x = x
        self.y = y
    }

    /// The same point in pixels of a `width`×`height` frame (still top-left origin).
    public func pixels(width: Int, height: Int) -> (x: Float, y: Float) { (x * Float(width), y * Float(height)) }

    /// The point in Apple Vision's convention (origin bottom-left, y up): `y' = 1 - y`.
    public var bottomLeftOrigin: NormalizedPoint { NormalizedPoint(x: x, y: 1 - y) }
}

/// An axis-aligned rectangle in normalized frame coordinates: `x`, `y` is the top-left corner (origin at the
/// frame's top-left, y down), `width` and `height` are fractions of the frame's width and height.
///
/// ```swift
/// let box = NormalizedRect(x: 0.25, y: 0.1, width: 0.5, height: 0.3)
/// box.intersectionOverUnion(with: box)          // 1
/// box.bottomLeftOrigin.y                        // 0.6 (Apple Vision's convention)
/// ```
public struct NormalizedRect: Sendable, Hashable, Codable {
    public var x: Float
    public var y: Float
    public var width: Float
    public var height: Float

    public init(x: Float, y: Float, width: Float, height: Float) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Float { x + width }
    public var maxY: Float { y + height }
    public var center: NormalizedPoint { NormalizedPoint(x: x + width / 2, y: y + height / 2) }
    public var area: Float { max(width, 0) * max(height, 0) }

    /// Area of the intersection over area of the union; 0 when the union is empty.
    public func intersectionOverUnion(with other: NormalizedRect) -> Float {
        let overlapWidth = min(maxX, other.maxX) - max(x, other.x)
        let overlapHeight = min(maxY, other.maxY) - max(y, other.y)
        guard overlapWidth > 0, overlapHeight > 0 else { return 0 }
        let intersection = overlapWidth * overlapHeight
        let union = area + other.area - intersection
        return union > 0 ? intersection / union : 0
    }

    /// The rectangle in Apple Vision's convention (origin bottom-left, y up): `y' = 1 - y - height`.
    public var bottomLeftOrigin: NormalizedRect { NormalizedRect(x: x, y: 1 - y - height, width: width, height: height) }

    /// `[x, y, width, height]`, the order the `vfx detect` JSON uses.
    public var array: [Float] { [x, y, width, height] }
}

/// A rotated rectangle in pixels of a frame (origin top-left, y down): the region a model looks at.
/// `rotation` is in radians, positive turning clockwise on screen (x toward y).
///
/// ```swift
/// let region = PixelRegion(centerX: 640, centerY: 360, width: 1280, height: 720, rotation: 0)
/// ```
public struct PixelRegion: Sendable, Hashable {
    public var centerX: Float
    public var centerY: Float
    public var width: Float
    public var height: Float
    public var rotation: Float

    public init(centerX: Float, centerY: Float, width: Float, height: Float, rotation: Float = 0) {
        self.centerX = centerX
        self.centerY = centerY
        self.width = width
        self.height = height
        self.rotation = rotation
    }

    /// The whole frame, or (with `aspectOf` a tensor size) the whole frame grown on one axis to that
    /// tensor's aspect ratio, centred: MediaPipe's letterboxing, which keeps the picture's proportions.
    public static func frame(width: Int, height: Int, letterboxedTo tensor: (width: Int, height: Int)? = nil) -> PixelRegion {
        var regionWidth = Float(width), regionHeight = Float(height)
        if let tensor {
            let tensorAspect = Float(tensor.height) / Float(tensor.width)
            if regionHeight / regionWidth > tensorAspect {
                regionWidth = regionHeight / tensorAspect
            } else {
                regionHeight = regionWidth * tensorAspect
            }
        }
        return PixelRegion(centerX: Float(width) / 2, centerY: Float(height) / 2, width: regionWidth, height: regionHeight)
    }

    /// Maps a point given in the region's own normalized coordinates (0…1 across the region, before its
    /// rotation) to pixels of the frame.
    public func framePoint(u: Float, v: Float) -> (x: Float, y: Float) {
        let dx = (u - 0.5) * width, dy = (v - 0.5) * height
        let c = cos(rotation), s = sin(rotation)
        return (centerX + c * dx - s * dy, centerY + s * dx + c * dy)
    }
}

/// Wraps an angle in radians to -π…π.
@inlinable func normalizedAngle(_ angle: Float) -> Float {
    angle - 2 * Float.pi * ((angle + Float.pi) / (2 * Float.pi)).rounded(.down)
}
