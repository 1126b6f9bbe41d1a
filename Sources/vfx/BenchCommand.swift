/// `vfx bench`: times a model (`--model`) or a filter chain (`--filter`), optionally beside FFmpeg or LiteRT.
///
/// ```sh
/// vfx bench --model models/selfie_segmentation.tflite --runs 200 --json
/// vfx bench --filter sepia --size 1920x1080 --threads 1
/// ```
enum BenchCommand {
    static func run(_ arguments: inout Arguments) throws {
        let words = arguments.words
        if words.contains(where: { $0 == "--model" || $0.hasPrefix("--model=") }) {
            try ModelBenchCommand.run(&arguments)
        } else {
            throw UsageError("bench needs --model MODEL (see vfx bench --help)")
        }
    }
}
