import Foundation
import VFXCore
import VFXPipeline

// Generators: pictures that replace the frame (backgrounds, test patterns): a solid colour, a checkerboard, a
// linear and a radial gradient. Positions are pixel centres, (x + ½, y + ½), in frame pixels.

private func generator(_ name: String, _ pattern: some GeneratorPattern, _ context: FilterContext) -> FilterStage {
    .processor(GeneratorProcessor(name: name, pattern: pattern, slices: context.slices))
}

extension FilterSpec {
    /// The whole frame in one colour.
    /// - `color` (default black). Formats: all (fused with neighbouring colour filters).
    /// - Chain: `solid-color:color=#00b140` · Swift: `try FilterDescription("solid-color", ["color": .color(FilterColor(parsing: "#00b140")!)])`
    public static let solidColor = FilterSpec(
        name: "solid-color", family: .generator, summary: "The whole frame in one colour.",
        coreImage: "CIConstantColorGenerator",
        parameters: [ParameterSpec("color", .color, default: .color(FilterColor(red: 0, green: 0, blue: 0)), "the colour")],
        example: "solid-color:color=#00b140",
        swift: "try FilterDescription(\"solid-color\", [\"color\": .color(FilterColor(parsing: \"#00b140\")!)])",
        ffmpeg: { "drawbox=c=0x\($0.color("color").description.dropFirst()):t=fill" }
    ) { arguments, _ in
        // A zero matrix plus the colour as offset: an affine map, so YUV frames get the per-plane kernel (a fill of
        // each plane) and RGB frames three constant tables.
        return .color(.affine(ColorMatrix(rows: (.zero, .zero, .zero), offset: arguments.color("color").rgb)))
    }

    /// A checkerboard of two colours with squares of `size` pixels, one corner at `origin`.
    /// - `first` (default white), `second` (default black), `size` 1…2000 px (default 40), `origin` (default 0x0).
    /// - Formats: all (gray frames come out RGBA).
    /// - Chain: `checkerboard:size=64:first=#cccccc:second=#999999` · Swift: `try FilterDescription("checkerboard", ["size": .number(64)])`
    public static let checkerboard = FilterSpec(
        name: "checkerboard", family: .generator, summary: "A checkerboard of two colours.",
        coreImage: "CICheckerboardGenerator",
        parameters: [ParameterSpec("first", .color, default: .color(FilterColor(red: 1, green: 1, blue: 1)), "colour of the square at the origin"),
                     ParameterSpec("second", .color, default: .color(FilterColor(red: 0, green: 0, blue: 0)), "the other colour"),
                     ParameterSpec("size", .number(1...2000, unit: "px"), default: 40, "side of a square"),
                     ParameterSpec("origin", .point, default: .point(FilterPoint(x: 0, y: 0)), "a corner of the squares")],
        example: "checkerboard:size=64:first=#cccccc:second=#999999",
        swift: "try FilterDescription(\"checkerboard\", [\"size\": .number(64)])"
    ) { arguments, context in
        let origin = arguments.point("origin")
        return generator("checkerboard", Checkerboard(
            first: arguments.color("first").rgb, second: arguments.color("second").rgb, size: arguments.number("size"),
            origin: SIMD2(origin.x * Double(context.format.width), origin.y * Double(context.format.height))), context)
    }

    /// A linear ramp from `first` at `start` to `second` at `end`: t = ((p − start)·(end − start)) / |end − start|².
    /// - `start` (default 0x0.5), `end` (default 1x0.5), `first` (default black), `second` (default white).
    /// - Formats: all (gray frames come out RGBA).
    /// - Chain: `linear-gradient:start=0.5x0:end=0.5x1:first=navy:second=teal` · Swift: `try FilterDescription("linear-gradient")`
    public static let linearGradient = FilterSpec(
        name: "linear-gradient", family: .generator, summary: "A linear ramp between two colours.",
        coreImage: "CILinearGradient",
        parameters: [ParameterSpec("start", .point, default: .point(FilterPoint(x: 0, y: 0.5)), "where the first colour is"),
                     ParameterSpec("end", .point, default: .point(FilterPoint(x: 1, y: 0.5)), "where the second colour is"),
                     ParameterSpec("first", .color, default: .color(FilterColor(red: 0, green: 0, blue: 0)), "colour at start"),
                     ParameterSpec("second", .color, default: .color(FilterColor(red: 1, green: 1, blue: 1)), "colour at end")],
        example: "linear-gradient:start=0.5x0:end=0.5x1:first=navy:second=teal", swift: "try FilterDescription(\"linear-gradient\")"
    ) { arguments, context in
        let size = SIMD2(Double(context.format.width), Double(context.format.height))
        let start = arguments.point("start"), end = arguments.point("end")
        let ramp = LinearRamp(start: SIMD2(start.x, start.y) * size, end: SIMD2(end.x, end.y) * size)
        let (first, second) = (arguments.color("first").rgb, arguments.color("second").rgb)
        return generator("linear-gradient", Gradient(ramp: .linear(ramp), first: first, second: second), context)
    }

    /// A radial ramp around `center`: `first` inside `inner`, `second` outside `outer`, linear in between (radii as
    /// fractions of the frame's height): t = (r − inner) / (outer − inner).
    /// - `center` (default 0.5x0.5), `inner` 0…4 (default 0), `outer` 0…4 (default 0.5), `first` (white), `second` (black).
    /// - Formats: all (gray frames come out RGBA).
    /// - Chain: `radial-gradient:outer=0.7:first=white:second=navy` · Swift: `try FilterDescription("radial-gradient")`
    public static let radialGradient = FilterSpec(
        name: "radial-gradient", family: .generator, summary: "A radial ramp between two colours.",
        coreImage: "CIRadialGradient",
        parameters: [ParameterSpec("center", .point, default: .point(FilterPoint(x: 0.5, y: 0.5)), "centre"),
                     ParameterSpec("inner", .number(0...4), default: 0, "radius where the ramp starts (× height)"),
                     ParameterSpec("outer", .number(0...4), default: 0.5, "radius where it ends (× height)"),
                     ParameterSpec("first", .color, default: .color(FilterColor(red: 1, green: 1, blue: 1)), "colour inside"),
                     ParameterSpec("second", .color, default: .color(FilterColor(red: 0, green: 0, blue: 0)), "colour outside")],
        example: "radial-gradient:outer=0.7:first=white:second=navy", swift: "try FilterDescription(\"radial-gradient\")"
    ) { arguments, context in
        let height = Double(context.format.height)
        let center = arguments.point("center")
        let c = SIMD2(center.x * Double(context.format.width), center.y * height)
        let ramp = RadialRamp(center: c, inner: arguments.number("inner") * height, outer: arguments.number("outer") * height)
        let (first, second) = (arguments.color("first").rgb, arguments.color("second").rgb)
        return generator("radial-gradient", Gradient(ramp: .radial(ramp), first: first, second: second), context)
    }
}
