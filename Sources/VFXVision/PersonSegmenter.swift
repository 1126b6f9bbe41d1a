import Foundation
import VFXCore
import VFXNeural

/// A person mask the size of its frame: one byte per pixel, 255 = person, 0 = background, values between
/// for soft edges. Stored in a gray8 `PixelBuffer` (from the segmenter's pool), so `frame` shows it as video.
///
/// ```swift
/// let mask = segmenter.segment(frame)
/// let alpha = Float(mask[x: 100, y: 40]) / 255
/// try writer.write(mask.frame)                  // the mask as a gray picture
/// ```
public struct PersonMask: Sendable {
    public let buffer: PixelBuffer
    /// The timestamp of the frame the mask was computed from.
    public var timestamp: MediaTime?

    public var width: Int { buffer.width }
    public var height: Int { buffer.height }

    /// The mask value at pixel (x, y), origin top-left.
    public subscript(x x: Int, y y: Int) -> UInt8 { buffer.planes[0].row(y)[x] }

    /// The mask as a gray, full-range frame.
    public var frame: VideoFrame {
        VideoFrame(buffer: buffer, timestamp: timestamp, color: ColorDescription(matrix: .bt601, range: .full))
    }
}

/// Separates people from the background with MediaPipe's selfie segmentation models.
///
/// The frame is stretched to the model's input (as MediaPipe does), and the model's coarse probability map
/// is taken to the frame's size in one of two ways:
/// - `.raw`: bilinearly, nothing else (what MediaPipe's Python solution returns);
/// - refined (the default): first smoothed over time where the new map is uncertain (probabilities near 0.5
///   keep up to `smoothing` of the previous map; confident pixels follow the new map at once, so a moving
///   person is not left behind), then fitted to the frame's luma by a guided filter, so the mask's edges
///   follow hair and shoulders at full resolution rather than the model's grid.
///
/// ```swift
/// let segmenter = try PersonSegmenter(model: .general)
/// let mask = segmenter.segment(frame)                                  // PersonMask, frame size
/// let raw = try PersonSegmenter(model: .landscape, options: .raw)     // MediaPipe's own output
/// ```
///
/// One instance is used by one thread at a time; it keeps the previous mask for smoothing (`reset()` forgets it).
public final class PersonSegmenter {
    public enum Model: String, Sendable, CaseIterable {
        /// `selfie_segmentation.tflite`, 256×256.
        case general
        /// `selfie_segmentation_landscape.tflite`, 256×144 (16:9 video).
        case landscape

        public var fileName: String { self == .general ? "selfie_segmentation.tflite" : "selfie_segmentation_landscape.tflite" }
        var inputSize: (width: Int, height: Int) { self == .general ? (256, 256) : (256, 144) }
    }

    /// What is done to the model's output.
    public struct Options: Sendable, Hashable {
        /// Guided filter window radius in model cells (0 turns the refinement off).
        public var guidedRadius: Int
        /// Guided filter regularization, in squared luma (0…1 scale): larger keeps more of the model's own shape.
        public var guidedEpsilon: Float
        /// Weight (0…1) of the previous mask where the new one is 0.5; it falls to 0 as the new value nears 0 or 1.
        /// 0 turns temporal smoothing off.
        public var smoothing: Float

        public init(guidedRadius: Int = 2, guidedEpsilon: Float = 0.03, smoothing: Float = 0.97) {
            self.guidedRadius = guidedRadius
            self.guidedEpsilon = guidedEpsilon
            self.smoothing = smoothing
        }

        /// The refined, smoothed mask that background effects use.
        public static let `default` = Options()
        /// The model's output taken to the frame's size bilinearly, nothing else (MediaPipe's output).
        public static let raw = Options(guidedRadius: 0, guidedEpsilon: 0, smoothing: 0)
    }

    public let model: Model
    public let options: Options
    private let network: NeuralModel
    private let sampler: TensorSampler
    private let gridWidth: Int, gridHeight: Int
    private var guide: [Float]
    private var smoothed: [Float]
    private var hasPrevious = false
    private let guided: GuidedFilter?
    private let upsampler = GridUpsampler()
    private var pool: BufferPool?
    /// One row of computed luma for RGB frames (owned here, freed in deinit).
    private var lumaRow: UnsafeMutablePointer<UInt8>?
    private var lumaRowCapacity = 0

    public init(model: Model = .general, options: Options = .default, modelURL: URL? = nil, threads: Int = 1) throws {
        guard options.guidedRadius >= 0, options.guidedEpsilon >= 0, (0...1).contains(options.smoothing) else {
            throw VisionError("person segmenter: radius and epsilon must be ≥ 0 and smoothing 0…1")
        }
        self.model = model
        self.options = options
        let size = model.inputSize
        (gridWidth, gridHeight) = size
        network = try VisionModels.load(modelURL ?? VisionModels.url(for: model.fileName), threads: threads,
                                        inputs: [[1, size.height, size.width, 3]], outputs: [[1, size.height, size.width, 1]])
        sampler = TensorSampler(width: size.width, height: size.height, range: (0, 1), border: .zero)
        guide = [Float](repeating: 0, count: size.width * size.height)
        smoothed = guide
        guided = options.guidedRadius > 0
            ? GuidedFilter(width: size.width, height: size.height, radius: options.guidedRadius, epsilon: options.guidedEpsilon) : nil
    }

    /// Forgets the previous mask (the next one is not smoothed with it).
    public func reset() { hasPrevious = false }

    /// The person mask of `frame`, at the frame's size.
    public func segment(_ frame: VideoFrame) -> PersonMask {
        let width = frame.width, height = frame.height
        if pool.map({ $0.width != width || $0.height != height }) ?? true {
            pool = BufferPool(format: .gray8, width: width, height: height, capacity: 4)
            hasPrevious = false
        }
        let buffer = pool!.makeBuffer()
        let region = PixelRegion.frame(width: width, height: height)
        let refine = guided != nil
        guide.withUnsafeMutableBufferPointer { guide in
            network.withInputBuffer(0) { sampler.sample(frame, region: region, into: $0.baseAddress!, guide: refine ? guide.baseAddress! : nil) }
        }
        network.invoke()
        let count = gridWidth * gridHeight
        network.withOutputBuffer(0) { probabilities in
            smoothed.withUnsafeMutableBufferPointer { smoothed in
                let weight = options.smoothing
                if weight > 0 && hasPrevious {
                    for i in 0..<count {
                        let p = probabilities[i]
                        let uncertainty = 4 * p * (1 - p)
                        smoothed[i] = p + (smoothed[i] - p) * (weight * uncertainty)
                    }
                } else {
                    for i in 0..<count { smoothed[i] = probabilities[i] }
                }
            }
        }
        hasPrevious = true
        let target = buffer.planes[0]
        if let guided {
            let scale: Float = 1 / 255
            guide.withUnsafeMutableBufferPointer { guide in for i in 0..<count { guide[i] *= scale } }
            guide.withUnsafeBufferPointer { g in smoothed.withUnsafeBufferPointer { guided.coefficients(guide: g.baseAddress!, input: $0.baseAddress!) } }
            upsampler.prepare(grid: (gridWidth, gridHeight), frame: (width, height), channels: 2)
            upsampler.widen(first: guided.a, second: guided.b)
            if frame.format.isRGB && lumaRowCapacity < width {
                lumaRow?.deallocate()
                lumaRow = .allocate(capacity: width)
                lumaRowCapacity = width
            }
            for y in 0..<height {
                let luma = lumaRowPointer(frame, y)
                let out = target.row(y)
                upsampler.row(y, channel: 0) { a0, a1, ta in
                    upsampler.row(y, channel: 1) { b0, b1, tb in
                        for x in 0..<width {
                            let a = a0[x] + (a1[x] - a0[x]) * ta
                            let b = b0[x] + (b1[x] - b0[x]) * tb
                            let value = (a * Float(luma[x]) * scale + b) * 255 + 0.5
                            out[x] = UInt8(min(max(value, 0), 255))
                        }
                    }
                }
            }
        } else {
            upsampler.prepare(grid: (gridWidth, gridHeight), frame: (width, height), channels: 1)
            smoothed.withUnsafeBufferPointer { upsampler.widen(grid: $0.baseAddress!, channel: 0) }
            for y in 0..<height {
                let out = target.row(y)
                upsampler.row(y, channel: 0) { top, bottom, t in
                    for x in 0..<width {
                        let value = (top[x] + (bottom[x] - top[x]) * t) * 255 + 0.5
                        out[x] = UInt8(min(max(value, 0), 255))
                    }
                }
            }
        }
        return PersonMask(buffer: buffer, timestamp: frame.timestamp)
    }

    /// Row `y` of the frame's guide luma (the same measure `TensorSampler` gives the grid): the Y or gray
    /// plane itself, or 0.299 R + 0.587 G + 0.114 B computed into a row buffer for RGB frames.
    private func lumaRowPointer(_ frame: VideoFrame, _ y: Int) -> UnsafePointer<UInt8> {
        let plane = frame.plane(0)
        guard frame.format.isRGB else { return UnsafePointer(plane.row(y)) }
        let (r, g, b) = frame.format == .rgba ? (0, 1, 2) : (2, 1, 0)
        let row = plane.row(y)
        let out = lumaRow!
        for x in 0..<frame.width {
            let value = 0.299 * Float(row[4 * x + r]) + 0.587 * Float(row[4 * x + g]) + 0.114 * Float(row[4 * x + b])
            out[x] = UInt8(min(value + 0.5, 255))
        }
        return UnsafePointer(out)
    }

    deinit { lumaRow?.deallocate() }
}
