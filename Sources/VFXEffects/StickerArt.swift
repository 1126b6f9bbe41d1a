import Foundation
import VFXCore

/// The stickers VideoFX draws itself (no picture files needed): sunglasses for the eyes, a moustache for the
/// mouth, and a round logo badge. Each is drawn once as an RGBA picture with soft (4×4 supersampled) edges
/// and transparent surroundings, then used as any sticker file would be.
///
/// ```
/// vfx apply call.mp4 -o cool.mp4 --filter face-sticker:sticker=glasses:anchor=eyes:scale=1.1
/// ```
/// ```swift
/// let glasses: VideoFrame = StickerArt.glasses.picture()      // RGBA 512×200
/// ```
public enum StickerArt: String, CaseIterable, Sendable {
    case glasses, moustache, badge

    /// The anchor and width (in face widths) that suit the sticker when none is given.
    var placement: (anchor: String, scale: Double) {
        switch self {
        case .glasses: ("eyes", 1.1)
        case .moustache: ("mouth", 0.7)
        case .badge: ("forehead", 0.45)
        }
    }

    /// The sticker as an RGBA picture (straight alpha).
    public func picture() -> VideoFrame {
        switch self {
        case .glasses: Self.draw(width: 512, height: 200, layers: Self.glassesLayers)
        case .moustache: Self.draw(width: 512, height: 180, layers: Self.moustacheLayers)
        case .badge: Self.draw(width: 256, height: 256, layers: Self.badgeLayers)
        }
    }

    /// A shape (inside test on coordinates where the picture spans −1…1 across its width, y down) and its
    /// straight-alpha color (0…1).
    typealias Layer = (inside: (Float, Float) -> Bool, color: SIMD4<Float>)

    static func draw(width: Int, height: Int, layers: [Layer]) -> VideoFrame {
        let frame = VideoFrame(format: .rgba, width: width, height: height)
        let plane = frame.plane(0)
        let scale = 2 / Float(width)
        let halfHeight = Float(height) / Float(width)
        for y in 0..<height {
            let row = plane.row(y)
            for x in 0..<width {
                var color = SIMD4<Float>(0, 0, 0, 0)                     // premultiplied
                for layer in layers {
                    func inside(_ sx: Int, _ sy: Int) -> Bool {
                        layer.inside((Float(x) + (Float(sx) + 0.5) / 4) * scale - 1, (Float(y) + (Float(sy) + 0.5) / 4) * scale - halfHeight)
                    }
                    // The four corner samples first: when they agree the pixel is taken as wholly in or out (the
                    // shapes' parts are many pixels wide, so none fits between them); else all sixteen are counted.
                    let corners = (inside(0, 0) ? 1 : 0) + (inside(3, 0) ? 1 : 0) + (inside(0, 3) ? 1 : 0) + (inside(3, 3) ? 1 : 0)
                    var covered = corners == 4 ? 16 : 0
                    if corners != 0 && corners != 4 {
                        for sy in 0..<4 { for sx in 0..<4 where inside(sx, sy) { covered += 1 } }
                    }
                    let alpha = layer.color.w * Float(covered) / 16
                    let source = SIMD4(layer.color.x * alpha, layer.color.y * alpha, layer.color.z * alpha, alpha)
                    color = source + color * (1 - alpha)
                }
                let a = color.w
                let straight = a > 0 ? SIMD3(color.x, color.y, color.z) / a : SIMD3<Float>(0, 0, 0)
                row[4 * x] = UInt8(min(straight.x * 255 + 0.5, 255))
                row[4 * x + 1] = UInt8(min(straight.y * 255 + 0.5, 255))
                row[4 * x + 2] = UInt8(min(straight.z * 255 + 0.5, 255))
                row[4 * x + 3] = UInt8(min(a * 255 + 0.5, 255))
            }
        }
        return frame
    }

    /// Inside a rounded rectangle centred at (cx, cy) with half sizes (hx, hy) and corner radius r.
    static func roundedRect(_ cx: Float, _ cy: Float, _ hx: Float, _ hy: Float, _ r: Float) -> (Float, Float) -> Bool {
        { u, v in
            let dx = max(abs(u - cx) - (hx - r), 0), dy = max(abs(v - cy) - (hy - r), 0)
            return abs(u - cx) <= hx && abs(v - cy) <= hy && dx * dx + dy * dy <= r * r
        }
    }

    static func ellipse(_ cx: Float, _ cy: Float, _ rx: Float, _ ry: Float) -> (Float, Float) -> Bool {
        { u, v in let x = (u - cx) / rx, y = (v - cy) / ry; return x * x + y * y <= 1 }
    }

    /// Inside a polygon (even-odd rule).
    static func polygon(_ corners: [(Float, Float)]) -> (Float, Float) -> Bool {
        { u, v in
            var inside = false
            var j = corners.count - 1
            for i in corners.indices {
                let (xi, yi) = corners[i], (xj, yj) = corners[j]
                if (yi > v) != (yj > v) && u < (xj - xi) * (v - yi) / (yj - yi) + xi { inside.toggle() }
                j = i
            }
            return inside
        }
    }

    static var glassesLayers: [Layer] {
        let rim = SIMD4<Float>(0.05, 0.05, 0.07, 1), lens = SIMD4<Float>(0.1, 0.15, 0.3, 0.8), shine = SIMD4<Float>(1, 1, 1, 0.35)
        var layers: [Layer] = []
        for side: Float in [-1, 1] {
            let cx = side * 0.47
            layers.append((roundedRect(cx, 0, 0.42, 0.3, 0.14), rim))
            layers.append((roundedRect(cx, 0, 0.36, 0.24, 0.1), lens))
            layers.append(({ u, v in let d = (u - cx + 0.15) + (v + 0.05); return abs(d) < 0.04 && abs(v + 0.05) < 0.15 }, shine))
        }
        layers.append(({ u, v in abs(u) < 0.1 && v > -0.14 && v < -0.06 }, rim))        // the bridge
        layers.append(({ u, v in abs(u) > 0.86 && abs(u) < 1 && v > -0.3 && v < -0.2 }, rim))   // the temples
        return layers
    }

    static var moustacheLayers: [Layer] {
        let hair = SIMD4<Float>(0.24, 0.14, 0.07, 1)
        let body: (Float, Float) -> Bool = { u, v in
            // Two lobes from the middle outward, thinning and curling up at the tips.
            let a = abs(u)
            guard a <= 0.86 else { return false }
            let centre = -0.05 + 0.22 * a - 0.55 * a * a * a
            let thickness = 0.2 * (1 - a / 0.95) + 0.03 + (a < 0.12 ? -0.06 * (1 - a / 0.12) : 0)
            return abs(v - centre) <= thickness
        }
        let tips: (Float, Float) -> Bool = { u, v in
            let x = abs(u) - 0.82, y = v + 0.24
            return x * x + y * y <= 0.075 * 0.075
        }
        return [(body, hair), (tips, hair)]
    }

    static var badgeLayers: [Layer] {
        let gold = SIMD4<Float>(0.95, 0.75, 0.15, 1), blue = SIMD4<Float>(0.1, 0.3, 0.8, 1), white = SIMD4<Float>(1, 1, 1, 1)
        // A five-pointed star: ten corners alternating between the outer and the inner radius, first point up.
        let corners: [(Float, Float)] = (0..<10).map { k in
            let radius: Float = k % 2 == 0 ? 0.62 : 0.25
            let angle = Float(k) * .pi / 5
            return (radius * sin(angle), -radius * cos(angle))
        }
        let star = polygon(corners)
        return [(ellipse(0, 0, 1, 1), gold), (ellipse(0, 0, 0.84, 0.84), blue), (star, white)]
    }
}
