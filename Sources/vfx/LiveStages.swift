import Foundation
import VFXCore
import VFXEffects
import VFXFilters
import VFXPipeline

/// The stages of a live chain, each with a key (what it does) so that a change keeps the stages it does not
/// touch, with their state (`KeyedStageChain`): the source's rotation undone first; the person-mask analysis
/// when a background effect reads the mask (segmentation runs beside the chain, on the newest frame); then each
/// run of color filters as one stage (fused into one pass, with a vignette that follows them) and every other
/// filter as a stage of its own.
///
/// ```swift
/// let first = LiveStages.chain(try FilterChain(parsing: "temporal-denoise,sepia"), rotation: .none, replacing: nil)
/// let next = LiveStages.chain(try FilterChain(parsing: "temporal-denoise,mono"), rotation: .none, replacing: first)
/// // next keeps first's denoiser (and its history); only `mono` is compiled anew
/// ```
enum LiveStages {
    static func chain(_ chain: FilterChain, rotation: Rotation, replacing current: KeyedStageChain?) -> KeyedStageChain {
        KeyedStageChain(plan(chain, rotation: rotation), replacing: current)
    }

    static func plan(_ chain: FilterChain, rotation: Rotation) -> [KeyedStageChain.Stage] {
        var stages: [KeyedStageChain.Stage] = []
        if rotation != .none {
            stages.append(.init(key: "upright:\(rotation.rawValue)") { ApplyCommand.Upright(rotation: rotation, threads: 1) })
        }
        if let quality = VFXEffects.personMaskQuality(in: chain) {
            stages.append(.init(key: "person-mask:\(quality)") { try VFXEffects.makePersonMaskAnalysis(quality: quality) })
        }
        var run: [FilterDescription] = []
        func add(_ filters: [FilterDescription]) {
            guard !filters.isEmpty else { return }
            let part = FilterChain(filters)
            stages.append(.init(key: part.description) { part.makeProcessor(threads: 1) })
        }
        for filter in chain.filters {
            let family = filter.spec?.family
            if family == .colorAdjustment || family == .colorEffect {
                run.append(filter)
            } else {
                add(run)
                run = []
                add([filter])
            }
        }
        add(run)
        return stages
    }
}
