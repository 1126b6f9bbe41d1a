import Foundation
import VFXCore
import VFXPipeline

/// A filter chain compiled for one frame format: runs of point-wise color filters fused into one pass each,
/// other filters as their own stages. Parameters can change while frames flow (`set(_:to:filterAt:)`): the
/// chain is recompiled before the next frame.
///
/// ```swift
/// let processor = FilterChainProcessor(try FilterChain(parsing: "sepia,vignette"), threads: 1)
/// _ = try processor.configure(for: FrameFormat(pixelFormat: .i420, width: 1920, height: 1080))
/// let output = try processor.process(frame)
/// try processor.set("intensity", to: "0.5", filterAt: 0)   // from any thread
/// ```
public final class FilterChainProcessor: VideoProcessor, @unchecked Sendable {
    // Sendable: `pending` (the only state other threads touch, through `set`) is guarded by `lock`; the
    // compiled stages are used only by the thread that calls configure/process, as VideoProcessor requires.
    public let slices: SliceRunner
    private var chain: FilterChain
    /// The compiled stages, each already configured for the format reaching it.
    private var stages = ProcessorChain([])
    private var input: FrameFormat?
    private let lock = NSLock()
    private var pending: FilterChain?

    public init(_ chain: FilterChain, threads: Int? = nil) {
        self.chain = chain
        slices = SliceRunner(threads: threads)
    }

    /// The chain as it runs now (with any change made by `set`).
    public var currentChain: FilterChain {
        lock.lock()
        defer { lock.unlock() }
        return pending ?? chain
    }

    /// Changes parameter `key` of the filter at `index` to `text` (checked now, applied from the next frame).
    public func set(_ key: String, to text: String, filterAt index: Int) throws {
        lock.lock()
        defer { lock.unlock() }
        var next = pending ?? chain
        guard next.filters.indices.contains(index) else { throw FilterError.noSuchFilterIndex(index, count: next.filters.count) }
        try next.filters[index].set(key, to: text)
        pending = next
    }

    public func configure(for input: FrameFormat) throws -> FrameFormat {
        takePending()
        release()
        self.input = input
        let (compiled, output) = try FilterChainProcessor.compile(chain, for: input, slices: slices)
        stages = ProcessorChain(compiled)
        return output
    }

    public func process(_ frame: consuming VideoFrame) throws -> VideoFrame? {
        if let input, takePending() {
            release()
            stages = ProcessorChain(try FilterChainProcessor.compile(chain, for: input, slices: slices).stages)
        }
        return try stages.process(frame)
    }

    public func release() {
        stages.release()
        stages = ProcessorChain([])
    }

    /// Moves a pending change into `chain`; true when there was one.
    @discardableResult private func takePending() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let next = pending else { return false }
        chain = next
        pending = nil
        return true
    }

    /// The stages for `chain` on frames of `input`, and the format that comes out.
    static func compile(_ chain: FilterChain, for input: FrameFormat, slices: SliceRunner)
        throws -> (stages: [any VideoProcessor], output: FrameFormat) {
        var format = input
        var stages: [any VideoProcessor] = []
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
            guard spec.pixelFormats.contains(format.pixelFormat) else {
                throw FilterError.unsupportedFormat(filter: spec.name, format: format.pixelFormat.rawValue)
            }
            switch try spec.makeStage(description.arguments(), FilterContext(format: format, slices: slices)) {
            case .color(let transform):
                run.append(transform)
            case .processor(let processor):
                try flush()
                format = try processor.configure(for: format)
                stages.append(processor)
            }
        }
        try flush()
        return (stages, format)
    }
}
