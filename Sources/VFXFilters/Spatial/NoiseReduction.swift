import VFXCore
import VFXPipeline

extension FilterSpec {
    /// Edge-preserving smoothing (Lee's sigma filter): each sample becomes the mean of the samples in the
    /// (2·radius + 1)² square around it (edges repeat the border) that differ from it by at most `threshold` codes,
    /// so noise is averaged away while edges, which differ by more, stay sharp. Alpha is kept.
    /// - `threshold` 0…255 codes (default 12), `radius` 1…4 (default 2). Formats: all.
    /// - Chain: `noise-reduction:threshold=10` · Swift: `try FilterDescription("noise-reduction", ["threshold": .number(10)])`
    public static let noiseReduction = FilterSpec(
        name: "noise-reduction", family: .blur, summary: "Edge-preserving smoothing: averages only the neighbours close in value.",
        coreImage: "CINoiseReduction",
        parameters: [ParameterSpec("threshold", .number(0...255), default: 12, "largest difference (codes) that is averaged"),
                     ParameterSpec("radius", .integer(1...4), default: 2, "half the side of the square")],
        example: "noise-reduction:threshold=10", swift: "try FilterDescription(\"noise-reduction\", [\"threshold\": .number(10)])"
    ) { arguments, context in
        .processor(NoiseReductionProcessor(threshold: Int(arguments.number("threshold")), radius: arguments.integer("radius"),
                                           slices: context.slices))
    }
}

/// The stage of `noise-reduction`: out of place, per plane, rows in slices.
final class NoiseReductionProcessor: VideoProcessor {
    let threshold: Int
    let radius: Int
    let slices: SliceRunner
    private var configured: FrameFormat?
    private var pool: BufferPool?

    init(threshold: Int, radius: Int, slices: SliceRunner) {
        self.threshold = threshold
        self.radius = radius
        self.slices = slices
    }

    func configure(for input: FrameFormat) throws -> FrameFormat {
        configured = input
        pool = BufferPool(format: input.pixelFormat, width: input.width, height: input.height, capacity: 3)
        return input
    }

    func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        try FrameCheck.require(frame, matches: configured, filter: "noise-reduction")
        let source = frame
        let output = source.makeSibling(pool: pool)
        let keepsAlpha = source.format.isRGB
        for index in 0..<source.planeCount {
            let (input, target) = (source.plane(index), output.plane(index))
            let (radius, threshold) = (self.radius, self.threshold)
            slices.run(rows: input.height) { rows in
                for y in rows {
                    Self.filter(row: y, input: input, target: target, radius: radius, threshold: threshold, keepsAlpha: keepsAlpha)
                }
            }
        }
        return withExtendedLifetime(source) { output }
    }

    private static func filter(row y: Int, input: Plane, target: Plane, radius: Int, threshold: Int, keepsAlpha: Bool) {
        let c = input.bytesPerPixel, width = input.width, height = input.height
        let output = target.row(y), here = input.row(y)
        let rows = (-radius...radius).map { input.row(min(max(y + $0, 0), height - 1)) }
        for x in 0..<width {
            for k in 0..<c {
                let center = Int(here[x * c + k])
                if keepsAlpha && k == 3 {
                    output[x * c + k] = UInt8(center)
                    continue
                }
                var sum = 0, count = 0
                for row in rows {
                    for dx in -radius...radius {
                        let value = Int(row[min(max(x + dx, 0), width - 1) * c + k])
                        if abs(value - center) <= threshold {
                            sum += value
                            count += 1
                        }
                    }
                }
                output[x * c + k] = UInt8((sum + count / 2) / count)
            }
        }
    }

    func release() { pool = nil }
}
