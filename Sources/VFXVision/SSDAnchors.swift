import Foundation

/// The anchor layout of an SSD detector, as MediaPipe's `SsdAnchorsCalculator` options describe it.
///
/// ```swift
/// let anchors = SSDAnchorOptions.faceShortRange.anchors()   // 896 anchors, centres 0…1 in tensor coordinates
/// ```
public struct SSDAnchorOptions: Sendable, Hashable {
    public var inputWidth: Int
    public var inputHeight: Int
    public var minScale: Float
    public var maxScale: Float
    public var anchorOffsetX: Float
    public var anchorOffsetY: Float
    /// One stride per layer; consecutive layers with the same stride share one feature map.
    public var strides: [Int]
    public var aspectRatios: [Float]
    /// > 0 adds one anchor per layer at the geometric mean of this layer's and the next layer's scale.
    public var interpolatedScaleAspectRatio: Float
    /// Every anchor 1×1 (the box regressors carry the size).
    public var fixedAnchorSize: Bool

    /// BlazeFace short range: 128×128, strides 8, 16, 16, 16 (896 anchors).
    public static let faceShortRange = SSDAnchorOptions(
        inputWidth: 128, inputHeight: 128, minScale: 0.1484375, maxScale: 0.75, anchorOffsetX: 0.5, anchorOffsetY: 0.5,
        strides: [8, 16, 16, 16], aspectRatios: [1], interpolatedScaleAspectRatio: 1, fixedAnchorSize: true)
    /// BlazeFace full range: 192×192, stride 4, one anchor per cell (2304 anchors).
    public static let faceFullRange = SSDAnchorOptions(
        inputWidth: 192, inputHeight: 192, minScale: 0.1484375, maxScale: 0.75, anchorOffsetX: 0.5, anchorOffsetY: 0.5,
        strides: [4], aspectRatios: [1], interpolatedScaleAspectRatio: 0, fixedAnchorSize: true)

    /// The anchor scale of layer `index` of `count`: linear from `minScale` to `maxScale` (their mean for one layer).
    func scale(layer index: Int, of count: Int) -> Float {
        count == 1 ? (minScale + maxScale) / 2 : minScale + (maxScale - minScale) * Float(index) / Float(count - 1)
    }

    /// Generates the anchors: per feature map, row by row, column by column, then anchor by anchor.
    public func anchors() -> [Anchor] {
        var result: [Anchor] = []
        let layerCount = strides.count
        var layer = 0
        while layer < layerCount {
            var sizes: [(width: Float, height: Float)] = []
            var last = layer
            while last < layerCount && strides[last] == strides[layer] {
                let scale = scale(layer: last, of: layerCount)
                for ratio in aspectRatios {
                    sizes.append((scale * ratio.squareRoot(), scale / ratio.squareRoot()))
                }
                if interpolatedScaleAspectRatio > 0 {
                    let next = last == layerCount - 1 ? 1 : self.scale(layer: last + 1, of: layerCount)
                    let interpolated = (scale * next).squareRoot()
                    let ratio = interpolatedScaleAspectRatio.squareRoot()
                    sizes.append((interpolated * ratio, interpolated / ratio))
                }
                last += 1
            }
            let stride = strides[layer]
            let rows = (inputHeight + stride - 1) / stride, columns = (inputWidth + stride - 1) / stride
            for y in 0..<rows {
                for x in 0..<columns {
                    for size in sizes {
                        result.append(Anchor(
                            centerX: (Float(x) + anchorOffsetX) / Float(columns),
                            centerY: (Float(y) + anchorOffsetY) / Float(rows),
                            width: fixedAnchorSize ? 1 : size.width, height: fixedAnchorSize ? 1 : size.height))
                    }
                }
            }
            layer = last
        }
        return result
    }
}

/// One SSD anchor: centre and size in normalized tensor coordinates.
public struct Anchor: Sendable, Hashable {
    public var centerX: Float
    public var centerY: Float
    public var width: Float
    public var height: Float

    public init(centerX: Float, centerY: Float, width: Float, height: Float) {
        self.centerX = centerX
        self.centerY = centerY
        self.width = width
        self.height = height
    }
}
