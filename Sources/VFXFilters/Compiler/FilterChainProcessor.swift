import Foundation
import VFXCore
import VFXPipeline

/// A filter chain compiled for one frame format: runs of point-wise color filters fused into one pass each,
/// other filters as their own stages. The chain can change while frames flow: `set(_:to:filterAt:)` changes one
/// parameter and `replace(with:)` the whole chain; either compiles the new stages on the calling thread (never
/// on the frame thread) and the frame thread swaps them in at the next frame boundary, after flushing what the
/// old stages still held.
///
/// ```swift
/// let processor = FilterChainProcessor(try FilterChain(parsing: "sepia,vignette"), threads: 1)
/// _ = try processor.configure(for: FrameFormat(pixelFormat: .i420, width: 1920, height: 1080))
/// try processor.process(frame) { output in try writer.write(output) }
/// try processor.set("intensity", to: "0.5", filterAt: 0)   // from any thread; applies from the next frame
/// ```
public final class FilterChainProcessor: FrameProcessor, @unchecked Sendable {
    // Sendable: `chain`, `input`, `pending` and `generation` (the state other threads touch through `set`,
    // `replace` and `currentChain`) are guarded by `lock`; `stages` is used only by the thread that calls
    // configure/process/flush, as FrameProcessor requires, and a pending compiled chain is handed from the
    // compiling thread to that thread under the lock and never touched by the compiling thread again.
    public let slices: SliceRunner
    private let lock = NSLock()
    private var chain: FilterChain
    private var input: FrameFormat?
    private var generation = 0
    /// Stages compiled by `replace` for the current input format, waiting for the next frame boundary.
    private var pending: ProcessorChain?
    /// The compiled stages, each already configured for the format reaching it.
    private var stages = ProcessorChain([])

    public init(_ chain: FilterChain, threads: Int? = nil) {
        self.chain = chain
        slices = SliceRunner(threads: threads)
    }

    /// The chain as it runs now, or will from the next frame (with every change made by `set` or `replace`).
    public var currentChain: FilterChain {
        lock.lock()
        defer { lock.unlock() }
        return chain
    }

    /// Changes parameter `key` of the filter at `index` to `text`: checked and compiled now, on the calling
    /// thread; applied from the next frame.
    public func set(_ key: String, to text: String, filterAt index: Int) throws {
        var next = currentChain
        guard next.filters.indices.contains(index) else { throw FilterError.noSuchFilterIndex(index, count: next.filters.count) }
        try next.filters[index].set(key, to: text)
        try replace(with: next)
    }

    /// Replaces the whole chain: compiled now, on the calling thread (a bad chain throws here and changes
    /// nothing); swapped in at the next frame boundary.
    public func replace(with newChain: FilterChain) throws {
        lock.lock()
        let format = input
        generation += 1
        let ticket = generation
        lock.unlock()
        // Compile outside the lock: the frame thread keeps running the old stages meanwhile.
        let compiled = try format.map { ProcessorChain(try FilterChainProcessor.compile(newChain, for: $0, slices: slices).stages) }
        lock.lock()
        defer { lock.unlock() }
        guard ticket == generation else { return }   // a later change won
        chain = newChain
        pending = compiled   // nil before the first `configure`, which compiles `chain` itself
    }

    public func configure(for input: FrameFormat) throws -> FrameFormat {
        lock.lock()
        let current = chain
        self.input = input
        pending = nil
        lock.unlock()
        release()
        let (compiled, output) = try FilterChainProcessor.compile(current, for: input, slices: slices)
        stages = ProcessorChain(compiled)
        return output
    }

    public func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
        if let next = takePending() {
            // The old stages hand over what they hold before the new ones take the stream.
            try stages.flush(emit: emit)
            stages.release()
            stages = next
        }
        try stages.process(frame, emit: emit)
    }

    public func flush(emit: FrameEmitter) throws {
        try stages.flush(emit: emit)
    }

    public func release() {
        stages.release()
        stages = ProcessorChain([])
    }

    /// The compiled stages of a change made since the last frame, if any.
    private func takePending() -> ProcessorChain? {
        lock.lock()
        defer { lock.unlock() }
        defer { pending = nil }
        return pending
    }

    /// The stages for `chain` on frames of `input`, and the format that comes out.
    static func compile(_ chain: FilterChain, for input: FrameFormat, slices: SliceRunner)
        throws -> (stages: [any FrameProcessor], output: FrameFormat) {
        var format = input
        var stages: [any FrameProcessor] = []
        var run: [ColorTransform] = []
        func flush() throws {
            guard !run.isEmpty else { return }
            let fused = FusedColorProcessor(run, slices: slices)
            format = try fused.configure(for: format)
            stages.append(fused)
            run = []
        }
        for description in chain.filters {
            guard let spec = description.spec else { throw FilterError.unknownFilter(description.name) }
            if !spec.pixelFormats.contains(format.pixelFormat) {
                // The pending colour run may change the layout (gray comes out RGBA): settle it first, then convert
                // the frames to a layout the filter takes, as FFmpeg's graphs insert a conversion.
                try flush()
                if !spec.pixelFormats.contains(format.pixelFormat) {
                    guard let target = FormatConversion.target(for: format.pixelFormat, supported: spec.pixelFormats) else {
                        throw FilterError.unsupportedFormat(filter: spec.name, format: format.pixelFormat.rawValue)
                    }
                    let conversion = FormatConversion(to: target)
                    format = try conversion.configure(for: format)
                    stages.append(conversion)
                }
            }
            switch try spec.makeStage(description.arguments(), FilterContext(format: format, slices: slices)) {
            case .color(let transform):
                run.append(transform)
            case .processor(let processor):
                if let vignette = processor as? VignetteProcessor, !run.isEmpty, format.pixelFormat != .gray8 {
                    // A vignette right after a colour run darkens each band of rows inside the run's own pass,
                    // while the rows are still in cache (no second pass over the frame).
                    let fused = FusedColorProcessor(run, slices: slices, vignette: vignette)
                    format = try fused.configure(for: format)
                    stages.append(fused)
                    run = []
                    continue
                }
                if let vignette = processor as? VignetteProcessor, run.isEmpty, let blur = stages.last as? GaussianBlurProcessor,
                   blur.vignette == nil {
                    // A vignette right after a Gaussian blur darkens the blurred rows in the blur's last pass, before
                    // they are rounded and stored.
                    blur.fuse(vignette)
                    format = try blur.configure(for: format)
                    continue
                }
                try flush()
                format = try processor.configure(for: format)
                stages.append(processor)
            }
        }
        try flush()
        return (stages, format)
    }
}
