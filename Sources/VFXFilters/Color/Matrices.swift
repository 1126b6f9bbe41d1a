// Matrices: any affine map of R'G'B' (color-matrix) and channel reordering (channel-swap).

extension FilterSpec {
    /// `out = M·rgb + bias` on gamma-encoded values, clipped to 0…1. Rows are output channels: `rr rg rb` make red.
    /// - `rr rg rb gr gg gb br bg bb` −4…4 (identity), `red-bias green-bias blue-bias` −1…1 (0). Formats: all.
    ///
    /// Chain: `color-matrix:rr=0.5:rg=0.5:rb=0` · Swift: `FilterDescription.colorMatrix(ColorMatrix(rows: (SIMD3(0.5, 0.5, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1))))`
    public static let colorMatrix = FilterSpec(
        name: "color-matrix", family: .colorAdjustment, summary: "Any 3×3 matrix plus bias on R'G'B' (rows are output channels).",
        coreImage: "CIColorMatrix",
        parameters: ["rr", "rg", "rb", "gr", "gg", "gb", "br", "bg", "bb"].map { key in
            ParameterSpec(key, .number(-4...4), default: key.first == key.last ? 1 : 0,
                          "weight of input \(key.last!) in output \(key.first!)")
        } + ["red", "green", "blue"].map { channel in
            ParameterSpec("\(channel)-bias", .number(-1...1), default: 0, "added to output \(channel)")
        },
        example: "color-matrix:rr=0.5:rg=0.5:rb=0",
        swift: "FilterDescription.colorMatrix(ColorMatrix(rows: (SIMD3(0.5, 0.5, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1))))",
        ffmpeg: { Matrices.matrix($0).ffmpegChannelMixer }
    ) { arguments, _ in .color(.affine(Matrices.matrix(arguments))) }

    /// Channels reordered: `order` names the input channel that feeds output red, green and blue.
    /// - `order` one of rgb, rbg, grb, gbr, brg, bgr (bgr). Formats: all.
    ///
    /// Chain: `channel-swap:order=bgr` · Swift: `FilterDescription.channelSwap(order: "bgr")`
    public static let channelSwap = FilterSpec(
        name: "channel-swap", family: .colorAdjustment, summary: "Channels reordered (e.g. bgr swaps red and blue).", coreImage: nil,
        parameters: [ParameterSpec("order", .choice(["rgb", "rbg", "grb", "gbr", "brg", "bgr"]), default: .text("bgr"),
                                   "input channels feeding output red, green, blue")],
        example: "channel-swap:order=bgr", swift: "FilterDescription.channelSwap(order: \"bgr\")",
        ffmpeg: { Matrices.swap($0.text("order")).ffmpegChannelMixer }
    ) { arguments, _ in .color(.affine(Matrices.swap(arguments.text("order")))) }
}

extension FilterDescription {
    public static func colorMatrix(_ matrix: ColorMatrix) -> FilterDescription {
        let rows = [matrix.red, matrix.green, matrix.blue]
        var values: [String: ParameterValue] = [:]
        for (row, output) in zip(rows, ["r", "g", "b"]) {
            for (input, value) in zip(["r", "g", "b"], [row.x, row.y, row.z]) { values[output + input] = .number(Double(value)) }
        }
        for (channel, value) in zip(["red", "green", "blue"], [matrix.offset.x, matrix.offset.y, matrix.offset.z]) {
            values["\(channel)-bias"] = .number(Double(value))
        }
        return FilterDescription(builtIn: "color-matrix", values)
    }
    public static func channelSwap(order: String) -> FilterDescription {
        FilterDescription(builtIn: "channel-swap", ["order": .text(order)])
    }
}

enum Matrices {
    static func matrix(_ arguments: FilterArguments) -> ColorMatrix {
        func row(_ output: String) -> SIMD3<Float> {
            SIMD3(arguments.float(output + "r"), arguments.float(output + "g"), arguments.float(output + "b"))
        }
        return ColorMatrix(rows: (row("r"), row("g"), row("b")),
                           offset: SIMD3(arguments.float("red-bias"), arguments.float("green-bias"), arguments.float("blue-bias")))
    }

    static func swap(_ order: String) -> ColorMatrix {
        let unit: [Character: SIMD3<Float>] = ["r": SIMD3(1, 0, 0), "g": SIMD3(0, 1, 0), "b": SIMD3(0, 0, 1)]
        let rows = order.map { unit[$0] ?? .zero }
        guard rows.count == 3 else { return .identity }
        return ColorMatrix(rows: (rows[0], rows[1], rows[2]))
    }
}
