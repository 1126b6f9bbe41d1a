import VFXCore
import VFXMedia
import VFXPipeline

/// An image a filter reads from a file (a logo to overlay, a gradient for `color-map`, a blend layer, a mask),
/// decoded once at configure time to straight-alpha RGBA bytes.
///
/// ```swift
/// let logo = try FilterImage(path: "logo.png", filter: "overlay")
/// let resized = logo.resized(width: 256, height: 256)
/// ```
struct FilterImage: Sendable {
    let width: Int
    let height: Int
    /// Straight (not premultiplied) R, G, B, A bytes, row after row, no padding.
    let pixels: [UInt8]

    init(width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Decodes the first frame of `path` (PNG, JPEG or any format FFmpeg reads); errors name the filter and file.
    init(path: String, filter: String) throws {
        let frame: VideoFrame
        do {
            let reader = try MediaReader(path: path, threads: 1)
            guard let first = try reader.nextFrame() else {
                throw FilterError.badFile(filter: filter, path: path, line: 0, reason: "no image in the file")
            }
            frame = first
        } catch let error as FilterError {
            throw error
        } catch let error as MediaError {
            // The reason without the path the media error starts with: the filter's error names the file once.
            let text = error.description, named = error.path + ": "
            throw FilterError.badFile(filter: filter, path: path, line: 0, reason: text.hasPrefix(named) ? String(text.dropFirst(named.count)) : text)
        } catch {
            throw FilterError.badFile(filter: filter, path: path, line: 0, reason: "\(error)")
        }
        let rgba = frame.converted(to: .rgba)
        let plane = rgba.plane(0)
        var pixels = [UInt8](repeating: 0, count: rgba.width * rgba.height * 4)
        withExtendedLifetime(rgba) {
            pixels.withUnsafeMutableBufferPointer { target in
                for y in 0..<rgba.height {
                    (target.baseAddress! + y * rgba.width * 4).update(from: plane.row(y), count: rgba.width * 4)
                }
            }
        }
        self.init(width: rgba.width, height: rgba.height, pixels: pixels)
    }

    /// The pixel at (x, y), clamped to the image, as R, G, B, A in 0…1.
    func pixel(_ x: Int, _ y: Int) -> SIMD4<Float> {
        let i = (min(max(y, 0), height - 1) * width + min(max(x, 0), width - 1)) * 4
        return SIMD4(Float(pixels[i]), Float(pixels[i + 1]), Float(pixels[i + 2]), Float(pixels[i + 3])) / 255
    }

    /// Bilinear sample at (x, y) in pixel units (pixel centres at integer + 0.5), edges clamped.
    func sample(x: Float, y: Float) -> SIMD4<Float> {
        let fx = x - 0.5, fy = y - 0.5
        let x0 = Int(fx.rounded(.down)), y0 = Int(fy.rounded(.down))
        let tx = fx - Float(x0), ty = fy - Float(y0)
        let top = pixel(x0, y0) * (1 - tx) + pixel(x0 + 1, y0) * tx
        let bottom = pixel(x0, y0 + 1) * (1 - tx) + pixel(x0 + 1, y0 + 1) * tx
        return top * (1 - ty) + bottom * ty
    }

    /// The image resampled to `width`×`height` (bilinear at the target pixels' centres; alpha-weighted colors so
    /// transparent pixels do not bleed dark fringes).
    func resized(width newWidth: Int, height newHeight: Int) -> FilterImage {
        if newWidth == width && newHeight == height { return self }
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * 4)
        let sx = Float(width) / Float(newWidth), sy = Float(height) / Float(newHeight)
        for y in 0..<newHeight {
            for x in 0..<newWidth {
                // Premultiply, interpolate, unpremultiply.
                let fx = (Float(x) + 0.5) * sx - 0.5, fy = (Float(y) + 0.5) * sy - 0.5
                let x0 = Int(fx.rounded(.down)), y0 = Int(fy.rounded(.down))
                let tx = fx - Float(x0), ty = fy - Float(y0)
                func premultiplied(_ px: Int, _ py: Int) -> SIMD4<Float> {
                    let p = pixel(px, py)
                    return SIMD4(p.x * p.w, p.y * p.w, p.z * p.w, p.w)
                }
                let top = premultiplied(x0, y0) * (1 - tx) + premultiplied(x0 + 1, y0) * tx
                let bottom = premultiplied(x0, y0 + 1) * (1 - tx) + premultiplied(x0 + 1, y0 + 1) * tx
                let value = top * (1 - ty) + bottom * ty
                let alpha = value.w
                let color = alpha > 0 ? SIMD3(value.x, value.y, value.z) / alpha : .zero
                let i = (y * newWidth + x) * 4
                out[i] = UInt8((color.x * 255).rounded().clamped(0, 255))
                out[i + 1] = UInt8((color.y * 255).rounded().clamped(0, 255))
                out[i + 2] = UInt8((color.z * 255).rounded().clamped(0, 255))
                out[i + 3] = UInt8((alpha * 255).rounded().clamped(0, 255))
            }
        }
        return FilterImage(width: newWidth, height: newHeight, pixels: out)
    }
}
