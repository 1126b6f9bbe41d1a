import Foundation
import VFXCore

/// A chain of stages, each named by a key that says what it does (a filter's name and parameters), which a
/// replacement can partly keep: `KeyedStageChain(next, replacing: current)` takes over every stage of
/// `current` whose key and incoming frame format equal those of a stage of `next`, the same instance with its
/// state (a temporal denoiser's history, a tracker's smoothing), and makes and configures only the others.
///
/// `RealtimeRunner` swaps such a successor in at a frame boundary through `retire(replacedBy:emit:)`: the old
/// stages that the successor does not keep are flushed (what they hold goes on through the old chain) and
/// released; the kept ones are neither flushed nor configured again.
///
/// ```swift
/// let current = KeyedStageChain([.init(key: "temporal-denoise") { denoiser() }, .init(key: "sepia") { sepia() }])
/// let next = KeyedStageChain([.init(key: "temporal-denoise") { denoiser() }, .init(key: "mono") { mono() }],
///                            replacing: current)
/// try runner.replaceProcessor(next)        // the denoiser keeps its history; only `mono` is new
/// ```
public final class KeyedStageChain: FrameProcessor, StageHandover, @unchecked Sendable {
    // Sendable: `stages`, `inputs` and `output` are written only by `configure`, which runs before the chain is
    // handed to the frame thread (by `prepare` or `replaceProcessor`, which publish it under a lock); afterwards
    // other threads only read `keys`, `stages` and `inputs` (to build a successor) and never call the stages.
    // `predecessor` is read only by `configure`; `kept` is written by `configure` before the hand-over, and
    // `handedOver` by the predecessor's `retire` on the frame thread, which alone releases the chain afterwards.

    /// A stage to be: its key and how to make it when no stage can be kept.
    public struct Stage {
        public let key: String
        public let make: () throws -> any FrameProcessor
        public init(key: String, make: @escaping () throws -> any FrameProcessor) {
            self.key = key
            self.make = make
        }
    }

    public let keys: [String]
    private let plan: [Stage]
    private weak var predecessor: KeyedStageChain?
    private var stages: [any FrameProcessor] = []
    /// The format reaching each stage, and the format that comes out.
    private var inputs: [FrameFormat] = []
    private var output: FrameFormat?
    /// The stages taken over from the predecessor by `configure`: until the predecessor hands over
    /// (`retire`), they are the predecessor's, and releasing this chain leaves them alone.
    private var kept: Set<ObjectIdentifier> = []
    private var handedOver = false

    /// How many stages were taken over from the predecessor in the last `configure`.
    public var keptCount: Int { kept.count }

    /// A chain of `stages` made afresh, or, with `predecessor`, keeping its stages where key and format match.
    public init(_ stages: [Stage], replacing predecessor: KeyedStageChain? = nil) {
        plan = stages
        keys = stages.map(\.key)
        self.predecessor = predecessor
    }

    /// The stage instances, in order (after `configure`).
    public var currentStages: [any FrameProcessor] { stages }

    public func configure(for input: FrameFormat) throws -> FrameFormat {
        var available: [(key: String, input: FrameFormat, stage: any FrameProcessor)] = []
        if let predecessor, predecessor.stages.count == predecessor.keys.count {
            available = zip(predecessor.keys, zip(predecessor.inputs, predecessor.stages)).map { ($0, $1.0, $1.1) }
        }
        var made: [any FrameProcessor] = []
        var formats: [FrameFormat] = []
        var format = input
        var taken: Set<ObjectIdentifier> = []
        for stage in plan {
            formats.append(format)
            if let match = available.firstIndex(where: { $0.key == stage.key && $0.input == format }) {
                // A kept stage is running on the frame thread: it is not configured again (that would reset it).
                let kept = available.remove(at: match)
                made.append(kept.stage)
                taken.insert(ObjectIdentifier(kept.stage))
                format = outputFormat(of: kept.stage, in: predecessor, input: format)
                continue
            }
            let fresh: any FrameProcessor
            do {
                fresh = try stage.make()
                do {
                    format = try fresh.configure(for: format)
                } catch {
                    fresh.release()
                    throw error
                }
            } catch {
                for earlier in made where !taken.contains(ObjectIdentifier(earlier)) { earlier.release() }
                throw error
            }
            made.append(fresh)
        }
        kept = taken
        stages = made
        inputs = formats
        output = format
        return format
    }

    /// The format a kept stage emits: the input of the predecessor's next stage, or the predecessor's output.
    private func outputFormat(of stage: any FrameProcessor, in chain: KeyedStageChain?, input: FrameFormat) -> FrameFormat {
        guard let chain, let index = chain.stages.firstIndex(where: { $0 === stage }) else { return input }
        return index + 1 < chain.inputs.count ? chain.inputs[index + 1] : chain.output ?? input
    }

    public func process(_ frame: consuming VideoFrame, emit: FrameEmitter) throws {
        try stages.run(frame, from: 0, emit: emit)
    }

    public func flush(emit: FrameEmitter) throws {
        try stages.flush(emit: emit)
    }

    /// Releases the stages; before the hand-over, those taken from the predecessor stay with it.
    public func release() {
        for stage in stages where handedOver || !kept.contains(ObjectIdentifier(stage)) { stage.release() }
    }

    /// Hands over to `next` (the frame thread, at a frame boundary): the stages `next` did not keep are
    /// flushed through the rest of this chain, then released.
    public func retire(replacedBy next: any FrameProcessor, emit: FrameEmitter) throws {
        let successor = next as? KeyedStageChain
        let taken = successor?.kept ?? []
        successor?.handedOver = true
        try stages.flush(emit: emit) { !taken.contains(ObjectIdentifier(stages[$0])) }
        for stage in stages where !taken.contains(ObjectIdentifier(stage)) { stage.release() }
    }
}

/// A processor that hands its stages on to the processor replacing it: `RealtimeRunner` calls `retire` on the
/// frame thread instead of `flush` and `release` when `next` takes its place.
public protocol StageHandover: FrameProcessor {
    /// Flushes (through `emit`) and releases what `next` does not take over.
    func retire(replacedBy next: any FrameProcessor, emit: FrameEmitter) throws
}
