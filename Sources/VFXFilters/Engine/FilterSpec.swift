import VFXCore
import VFXPipeline

/// A filter declared once: its name, what it does, its Core Image counterpart, its parameter table, and how it
/// becomes a stage. The same table drives parsing, validation, `vfx filters`, the Swift API and live changes.
///
/// ```swift
/// extension FilterSpec {
///     static let invert = FilterSpec(
///         name: "invert", summary: "Inverts each channel: 1 − value.", coreImage: "CIColorInvert",
///         parameters: [], example: "invert", swift: "FilterDescription.invert",
///         ffmpeg: { _ in "negate" }
///     ) { _, _ in .color(.rgb { 1 - $0 }) }
/// }
/// ```
public struct FilterSpec: ParameterTable {
    public let name: String
    /// The family it is listed under (`vfx filters` groups by it): Core Image's categories.
    public let family: FilterFamily
    /// One or two sentences: what the filter does (units and ranges are in the parameter table).
    public let summary: String
    /// The Core Image filter it corresponds to, when there is one (`CISepiaTone`).
    public let coreImage: String?
    public let parameters: [ParameterSpec]
    /// The pixel formats it takes.
    public let pixelFormats: [PixelFormat]
    /// One chain string that uses it.
    public let example: String
    /// One line of Swift that makes it.
    public let swift: String
    /// FFmpeg's filtergraph for the same work (for `vfx bench` and the docs), when FFmpeg has one.
    public let ffmpeg: (@Sendable (FilterArguments) -> String?)?
    /// Makes the stage for resolved `arguments` and the frames in `context`.
    public let makeStage: @Sendable (FilterArguments, FilterContext) throws -> FilterStage

    public init(name: String, family: FilterFamily = .other, summary: String, coreImage: String? = nil, parameters: [ParameterSpec],
                pixelFormats: [PixelFormat] = PixelFormat.allCases, example: String, swift: String,
                ffmpeg: (@Sendable (FilterArguments) -> String?)? = nil,
                makeStage: @escaping @Sendable (FilterArguments, FilterContext) throws -> FilterStage) {
        self.name = name
        self.family = family
        self.summary = summary
        self.coreImage = coreImage
        self.parameters = parameters
        self.pixelFormats = pixelFormats
        self.example = example
        self.swift = swift
        self.ffmpeg = ffmpeg
        self.makeStage = makeStage
    }
}

/// The family a filter is listed under, after Core Image's categories (`CICategoryColorAdjustment`…). Modules
/// outside VFXFilters may add their own (`FilterFamily("vision")`).
///
/// ```swift
/// FilterRegistry.all.filter { $0.family == .distortion }.map(\.name)
/// ```
public struct FilterFamily: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ name: String) { rawValue = name }

    public static let colorAdjustment = FilterFamily("color-adjustment")
    public static let colorEffect = FilterFamily("color-effect")
    public static let blur = FilterFamily("blur")
    public static let sharpen = FilterFamily("sharpen")
    public static let stylize = FilterFamily("stylize")
    public static let halftone = FilterFamily("halftone")
    public static let distortion = FilterFamily("distortion")
    public static let tile = FilterFamily("tile")
    public static let composite = FilterFamily("composite")
    public static let overlay = FilterFamily("overlay")
    public static let generator = FilterFamily("generator")
    public static let geometry = FilterFamily("geometry")
    public static let other = FilterFamily("other")

    /// The order families are listed in (others after these, by name).
    static let listingOrder: [FilterFamily] = [.colorAdjustment, .colorEffect, .blur, .sharpen, .stylize, .halftone,
                                                .distortion, .tile, .composite, .overlay, .generator, .geometry]

    public static func < (a: FilterFamily, b: FilterFamily) -> Bool {
        let i = listingOrder.firstIndex(of: a) ?? listingOrder.count, j = listingOrder.firstIndex(of: b) ?? listingOrder.count
        return i != j ? i < j : a.rawValue < b.rawValue
    }

    public var description: String { rawValue }
}

/// A filter's parameter values, complete (defaults filled in) and validated against its table.
///
/// ```swift
/// let intensity = arguments.number("intensity")   // Double
/// let tint = arguments.color("color")              // FilterColor
/// ```
public struct FilterArguments: Sendable, Hashable {
    public let filter: String
    public let values: [String: ParameterValue]
    /// The keys the chain gave (the others hold their defaults): `face-sticker` keeps a drawn sticker's own
    /// anchor unless `anchor` is given, even as `anchor=face`.
    public let given: Set<String>

    public init(filter: String, values: [String: ParameterValue], given: Set<String> = []) {
        self.filter = filter
        self.values = values
        self.given = given
    }

    /// A number or angle parameter (an integer converts).
    public func number(_ key: String) -> Double {
        switch values[key] {
        case .number(let value): value
        case .integer(let value): Double(value)
        default: 0
        }
    }

    /// `number(key)` as a Float, the type kernels work in.
    public func float(_ key: String) -> Float { Float(number(key)) }

    public func integer(_ key: String) -> Int {
        switch values[key] {
        case .integer(let value): value
        case .number(let value): Int(value)
        default: 0
        }
    }

    public func color(_ key: String) -> FilterColor {
        if case .color(let color) = values[key] { return color }
        return FilterColor(red: 0, green: 0, blue: 0)
    }

    public func point(_ key: String) -> FilterPoint {
        if case .point(let point) = values[key] { return point }
        return FilterPoint(x: 0.5, y: 0.5)
    }

    /// A file path or a choice.
    public func text(_ key: String) -> String {
        if case .text(let text) = values[key] { return text }
        return ""
    }

    public func flag(_ key: String) -> Bool {
        if case .flag(let value) = values[key] { return value }
        return false
    }
}

/// What a filter knows when it makes its stage: the format of the frames it will get, and the slice runner
/// for splitting work over the cores.
public struct FilterContext: Sendable {
    /// The format of the frames that reach this filter (after the filters before it).
    public let format: FrameFormat
    public let slices: SliceRunner

    public init(format: FrameFormat, slices: SliceRunner) {
        self.format = format
        self.slices = slices
    }

    /// The luma weights of the frames' matrix (BT.601 or BT.709), for filters that need "luma".
    public var luma: LumaWeights { LumaWeights(format.color.matrix) }
}
