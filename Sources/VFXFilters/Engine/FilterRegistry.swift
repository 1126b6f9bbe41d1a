import Foundation

/// The filter catalog: the built-in filters, listed once, plus those other modules register (vision effects,
/// temporal effects…). Parsing, `vfx filters` and the docs read `all`, so a registered filter works everywhere
/// a built-in does without `VFXFilters` knowing of it.
///
/// ```swift
/// FilterRegistry.spec(named: "sepia")?.summary
/// FilterRegistry.register([.temporalDenoise, .interpolate])   // from another module, once at startup
/// FilterRegistry.all.map(\.name)
/// ```
public enum FilterRegistry {
    public static let builtIns: [FilterSpec] = [
        // Tone effects (Color/ToneEffects.swift)
        .sepia, .mono, .thermal, .xRay, .invert, .falseColor, .colorMonochrome, .tint,
        // Photo effects (Color/PhotoEffects.swift)
        .photoChrome, .photoFade, .photoInstant, .photoNoir, .photoProcess, .photoTonal, .photoTransfer,
        // Adjustments (Color/Adjustments.swift)
        .colorControls, .brightness, .exposure, .gamma, .hue, .vibrance, .whiteBalance, .temperature,
        // Levels and curves (Color/LevelsAndCurves.swift)
        .posterize, .threshold, .solarize, .levels, .lumaGamma, .colorClamp,
        // Matrices (Color/Matrices.swift)
        .colorMatrix, .channelSwap,
        // Lookup tables (Color/CubeLUT.swift)
        .lut,
        // Spatial filters (Spatial/*.swift)
        .gaussianBlur, .boxBlur, .motionBlur, .zoomBlur, .unsharpMask, .bloom, .gloom, .sharpen, .edges, .emboss, .median, .vignette, .pixellate,
        // Geometry (Geometry/*.swift)
        .crop, .scale, .flip, .rotate,
    ]

    /// Every filter: the built-ins, then the registered ones in the order they were registered.
    public static var all: [FilterSpec] { catalog.withLock { $0.specs } }

    /// Adds filters from another module. Registering a name again is harmless (the first spec is kept), so a
    /// module's `register()` may be called more than once.
    public static func register(_ specs: [FilterSpec]) {
        catalog.withLock { catalog in
            for spec in specs where catalog.byName[spec.name] == nil {
                catalog.specs.append(spec)
                catalog.byName[spec.name] = spec
            }
        }
    }

    /// The filter named `name` (case-insensitive), or nil.
    public static func spec(named name: String) -> FilterSpec? { catalog.withLock { $0.byName[name.lowercased()] } }

    /// The catalog behind a lock: registration may happen on any thread.
    private struct Catalog {
        var specs: [FilterSpec]
        var byName: [String: FilterSpec]
    }

    private static let catalog = Locked(Catalog(specs: builtIns, byName: Dictionary(builtIns.map { ($0.name, $0) },
                                                                                   uniquingKeysWith: { first, _ in first })))

    /// Names close to `name` (for "did you mean").
    static func suggestions(for name: String) -> [String] {
        let lower = name.lowercased()
        return all.map(\.name).filter { candidate in
            candidate.hasPrefix(lower) || lower.hasPrefix(candidate) || editDistance(candidate, lower) <= 2
        }.prefix(3).map { $0 }
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// A value behind a lock.
final class Locked<Value>: @unchecked Sendable {
    // Sendable: `value` is read and written only inside `withLock`, while holding `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
