import Foundation
import VFXCore
import VFXFilters
import VFXMedia
import VFXPipeline

/// Times a filter chain on a y4m clip and FFmpeg's equivalent on the same clip in the same run.
///
/// What is timed:
/// - FFmpeg's floor: `ffmpeg -i in.y4m -f yuv4mpegpipe out.y4m` (reading and writing only), best of `repeats`.
/// - FFmpeg's filter: the same command with `-vf GRAPH`, best of `repeats`.
/// - VideoFX: the clip's frames are read into memory once (untimed); each frame is copied into a fresh pool
///   buffer (untimed, as a decoder would hand one over) and the compiled chain's `process` is timed. VideoFX's
///   total is FFmpeg's floor plus that processing time (best of `repeats` passes), so the ratio
///   `(ffmpeg − floor) / (vfx − floor)` compares the filtering work alone.
/// - The memory floor: the same frames, each copied (untimed) into a fresh pool buffer as above, then copied
///   plane by plane into a second one, timed (`copySeconds`): what a pass that reads and writes every byte of the
///   frame once costs at least. `copyRatio` = processing / copy.
/// - The `repeats` rounds interleave the four (a VideoFX pass, a copy pass, the floor, FFmpeg's filter), so that
///   all see the shared machine in the same state; each keeps its best round. A filter that FFmpeg runs in under a
///   tenth of its floor gets twice as many rounds again (`withinFloorNoise`).
/// All files live in a private folder in /dev/shm (RAM), removed at the end (`BenchWorkspace`).
///
/// ```swift
/// let result = try FilterBenchmark.run(.init(chain: "sepia", source: .generated(width: 1920, height: 1080)))
/// print(result.ratio ?? 0)
/// ```
public enum FilterBenchmark {
    public enum Source: Sendable {
        /// A y4m file (4:2:0) or any clip FFmpeg reads (converted to y4m first, scaled to `size` when given).
        case file(String, width: Int?, height: Int?)
        /// FFmpeg's `testsrc2` pattern at this size.
        case generated(width: Int, height: Int)
    }

    public struct Options: Sendable {
        public var chain: String
        public var source: Source
        public var frames: Int
        public var threads: Int
        /// FFmpeg's filtergraph; nil = derived from the chain's filters (`FilterSpec.ffmpeg`).
        public var ffmpegGraph: String?
        public var repeats: Int
        /// Also run FFmpeg (floor and filter).
        public var compare: Bool
        /// The frames' format on both sides, one of `FilterBenchmark.pixelFormats`: `.i420` (y4m) or `.nv12` (raw NV12
        /// for FFmpeg, as cameras deliver it).
        public var pixelFormat: PixelFormat

        public init(chain: String, source: Source, frames: Int = 60, threads: Int = 1, ffmpegGraph: String? = nil,
                    repeats: Int = 3, compare: Bool = true, pixelFormat: PixelFormat = .i420) {
            self.chain = chain
            self.source = source
            self.frames = frames
            self.threads = threads
            self.ffmpegGraph = ffmpegGraph
            self.repeats = repeats
            self.compare = compare
            self.pixelFormat = pixelFormat
        }
    }

    public struct Result: Sendable, Encodable {
        public let chain: String
        public let width: Int
        public let height: Int
        public let frames: Int
        public let threads: Int
        /// The frames' pixel format on both sides (`i420` or `nv12`).
        public let pixelFormat: String
        /// The filter kernels that ran (`FilterKernels.name`: "avx512", "avx2" or "portable").
        public let kernels: String
        /// VideoFX's processing time for all frames (best pass), seconds.
        public let processingSeconds: Double
        /// A plain copy of the same frames into another buffer (best pass), seconds: the memory floor.
        public let copySeconds: Double
        /// processingSeconds / copySeconds: what the chain costs in plain frame copies.
        public let copyRatio: Double
        public let floorSeconds: Double?
        public let ffmpegSeconds: Double?
        public let ffmpegGraph: String?
        /// (ffmpeg − floor) / processing: how many times faster VideoFX does the filtering work (nil when FFmpeg's
        /// filter time does not exceed its floor).
        public let ratio: Double?
        public let timed: String

        public var vfxFramesPerSecond: Double { Double(frames) / processingSeconds }
        public var ffmpegFramesPerSecond: Double? {
            guard let ffmpegSeconds, let floorSeconds, ffmpegSeconds > floorSeconds else { return nil }
            return Double(frames) / (ffmpegSeconds - floorSeconds)
        }
    }

    public struct BenchError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The pixel formats the benchmark times frames in.
    public static let pixelFormats: [PixelFormat] = [.i420, .nv12]

    public static func run(_ options: Options) throws -> Result {
        let chain = try FilterChain(parsing: options.chain)
        let files = try BenchWorkspace()
        defer { files.remove() }
        let workspace = files.folder
        let clip = try prepareClip(options.source, frames: options.frames, in: workspace)
        let frames = try Y4MClip(path: clip, limit: options.frames)
        guard !frames.frames.isEmpty else { throw BenchError("\(clip): no frames") }
        guard pixelFormats.contains(options.pixelFormat) else {
            throw BenchError("pixel format \(options.pixelFormat.rawValue): the benchmark takes i420 or nv12")
        }
        let width = frames.width, height = frames.height
        // I420 to NV12 only interleaves the chroma planes: the same samples on both sides.
        let inputs = frames.frames.map { $0.converted(to: options.pixelFormat) }

        // The rounds interleave the three measurements, so that each sees the machine in the same state (the
        // machines are shared); each keeps its best round.
        let timer = try ProcessingTimer(chain, frames: inputs, threads: options.threads)
        defer { timer.processor.release() }
        var graph: String?
        var commands: [[String]] = []
        if options.compare {
            graph = try options.ffmpegGraph ?? ffmpegGraph(for: chain, width: width, height: height, in: workspace)
                .replacingOccurrences(of: "source_fps", with: "(\(frames.rate))")
            let files = try FFmpegFiles(clip: clip, frames: frames, format: options.pixelFormat, in: workspace)
            let base = ["-hide_banner", "-v", "error", "-threads", "\(options.threads)",
                        "-filter_threads", "\(options.threads)"] + files.input + ["-frames:v", "\(frames.frames.count)"]
            commands.append(base + floorFilter(width: width, height: height, output: timer.output) + files.output)
            if let graph { commands.append(base + ["-vf", graph + ",format=\(files.pixelFormat)"] + files.output) }
        }
        var processing = Double.infinity, copy = Double.infinity
        var ffmpegTimes = [Double](repeating: .infinity, count: commands.count)
        var rounds = 0
        func round() throws {
            rounds += 1
            processing = min(processing, try timer.pass())
            copy = min(copy, timer.copyPass())
            for (index, command) in commands.enumerated() {
                ffmpegTimes[index] = min(ffmpegTimes[index], try bestTime(repeats: 1) { try runFFmpeg(command) })
            }
        }
        try runRounds(options.repeats, round: round) {
            ffmpegTimes.count > 1 && withinFloorNoise(floor: ffmpegTimes[0], ffmpeg: ffmpegTimes[1])
        }
        let floor = ffmpegTimes.first
        let ffmpeg = ffmpegTimes.count > 1 ? ffmpegTimes[1] : nil
        // FFmpeg's filter can cost less than the noise of its own floor (hue=s=0 at 720p): then there is no ratio.
        let ratio: Double? = if let floor, let ffmpeg, ffmpeg > floor { (ffmpeg - floor) / processing } else { nil }
        return Result(chain: chain.description, width: width, height: height, frames: frames.frames.count,
                      threads: options.threads, pixelFormat: options.pixelFormat.rawValue, kernels: FilterKernels.name,
                      processingSeconds: processing, copySeconds: copy, copyRatio: processing / copy, floorSeconds: floor, ffmpegSeconds: ffmpeg, ffmpegGraph: graph, ratio: ratio,
                      timed: "vfx: process() on frames held in memory (fresh buffer each, copy untimed), best of "
                        + "\(rounds); copy: the same frames copied plane by plane into another buffer, best of "
                        + "\(rounds); ffmpeg: whole command minus the y4m read/write floor, best of \(rounds)")
    }

    /// FFmpeg's filtergraph for `chain`: each filter's own equivalent, or for a color filter without one, FFmpeg's
    /// `lut3d` (tetrahedral) on a 65³ `.cube` that samples the filter.
    public static func ffmpegGraph(for chain: FilterChain, width: Int, height: Int, in folder: String) throws -> String {
        guard !chain.filters.isEmpty else { return "null" }
        return try chain.filters.enumerated().map { index, description in
            guard let spec = description.spec else { throw FilterError.unknownFilter(description.name) }
            let arguments = try description.arguments()
            if let graph = spec.ffmpeg?(arguments) { return graph }
            let format = FrameFormat(pixelFormat: .rgba, width: width, height: height)
            let context = FilterContext(format: format, slices: SliceRunner(threads: 1))
            guard case .color(let transform) = try spec.makeStage(arguments, context) else {
                throw BenchError("\(spec.name) has no FFmpeg equivalent: pass --ffmpeg 'GRAPH', or --no-ffmpeg")
            }
            let path = "\(folder)/filter\(index).cube"
            try CubeFile.text(size: 65) { transform.apply($0) }.write(toFile: path, atomically: true, encoding: .utf8)
            return "lut3d=file=\(path):interp=tetrahedral"
        }.joined(separator: ",")
    }

    /// What FFmpeg reads and writes for frames in `format`: for I420 the y4m clip itself; for NV12 the same frames
    /// written once as raw NV12 (y4m has no NV12), read and written raw, so FFmpeg's floor and filter see NV12.
    struct FFmpegFiles {
        /// Input options, output options (muxer and file), and FFmpeg's name of the format.
        let input: [String], output: [String], pixelFormat: String

        init(clip: String, frames: Y4MClip, format: PixelFormat, in folder: String) throws {
            guard format == .nv12 else {
                (input, output, pixelFormat) = (["-i", clip], ["-f", "yuv4mpegpipe", "-y", folder + "/out.y4m"], "yuv420p")
                return
            }
            let raw = folder + "/in.nv12"
            try runFFmpeg(["-hide_banner", "-v", "error", "-i", clip, "-frames:v", "\(frames.frames.count)",
                           "-f", "rawvideo", "-pix_fmt", "nv12", "-y", raw])
            input = ["-f", "rawvideo", "-pix_fmt", "nv12", "-video_size", "\(frames.width)x\(frames.height)",
                     "-framerate", frames.rate, "-i", raw]
            output = ["-f", "rawvideo", "-pix_fmt", "nv12", "-y", folder + "/out.nv12"]
            pixelFormat = "nv12"
        }
    }

    /// A y4m file with the clip (converted or generated by FFmpeg when needed).
    static func prepareClip(_ source: Source, frames: Int, in folder: String) throws -> String {
        let clip = folder + "/in.y4m"
        switch source {
        case .file(let path, let width, let height):
            let scale = width.flatMap { w in height.map { h in ["-vf", "scale=\(w):\(h)"] } } ?? []
            guard FileManager.default.fileExists(atPath: path) else { throw BenchError("\(path): no such file") }
            if path.hasSuffix(".y4m") && scale.isEmpty { return path }
            do {
                try runFFmpeg(["-hide_banner", "-v", "error", "-i", path] + scale
                              + ["-frames:v", "\(frames)", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "-y", clip])
            } catch let error as BenchError {
                throw BenchError("\(path): not a video FFmpeg can read (\(error.description))")
            }
        case .generated(let width, let height):
            try runFFmpeg(["-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=30",
                           "-frames:v", "\(frames)", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "-y", clip])
        }
        return clip
    }

    /// Whether FFmpeg's filter costs under a tenth of its floor beyond it (`eq`, `vflip`, `transpose`: 0.1–0.8 ms
    /// beyond about 8 ms per 1080p frame): the floor's noise from one round to the next on a shared machine (a few
    /// percent) is then as large as the filter's whole work, and one unlucky round can hide it. Such a row gets twice
    /// its rounds again (three times in all), each measurement keeping its best, so both minima settle.
    static func withinFloorNoise(floor: Double, ffmpeg: Double) -> Bool {
        ffmpeg - floor < 0.1 * floor
    }

    /// `repeats` (at least 1) calls of `round`, then twice as many again when `withinNoise` holds after them.
    static func runRounds(_ repeats: Int, round: () throws -> Void, extraWhen withinNoise: () -> Bool) rethrows {
        for _ in 0..<max(1, repeats) { try round() }
        guard withinNoise() else { return }
        for _ in 0..<2 * max(1, repeats) { try round() }
    }

    static func bestTime(repeats: Int, _ body: () throws -> Void) throws -> Double {
        var best = Double.infinity
        for _ in 0..<max(1, repeats) {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return best
    }

    /// Runs the `ffmpeg` command; a failure throws its first line of error output.
    public static func runFFmpeg(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-nostdin"] + arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: message, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            throw BenchError("ffmpeg failed (\(process.terminationStatus)): \(text)")
        }
    }
}

/// VideoFX's side: the compiled chain's `process` on frames held in memory, each first copied (untimed) into a
/// fresh pool buffer as a decoder would hand it over.
struct ProcessingTimer {
    /// The frames each pass goes through (the catalog sets a longer prefix of its clip for the fast filters).
    var frames: [VideoFrame]
    let processor: FilterChainProcessor
    let pool: BufferPool
    /// The chain's output format (its size differs from the input's for scale, crop, quarter turns).
    let output: FrameFormat
    /// Where `copyPass` copies to.
    let copies: BufferPool

    init(_ chain: FilterChain, frames: [VideoFrame], threads: Int) throws {
        let first = frames[0]
        self.frames = frames
        processor = chain.makeProcessor(threads: threads)
        output = try processor.configure(for: FrameFormat(of: first))
        pool = BufferPool(format: first.format, width: first.width, height: first.height, capacity: 4)
        copies = BufferPool(format: first.format, width: first.width, height: first.height, capacity: 4)
    }

    /// Seconds spent copying all frames, each first put in a fresh buffer as `pass` does (untimed), then copied
    /// plane by plane into another (timed): the memory floor of a pass over the frame.
    func copyPass() -> Double {
        var total = 0.0
        for source in frames {
            var frame = source.makeSibling(pool: pool)
            frame.withMutablePlanes { planes in
                for (from, to) in zip(source.planes, planes) { from.copy(to: to) }
            }
            var copy = frame.makeSibling(pool: copies)
            let start = DispatchTime.now().uptimeNanoseconds
            copy.withMutablePlanes { planes in
                for (from, to) in zip(frame.planes, planes) { from.copy(to: to) }
            }
            total += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            withExtendedLifetime(copy) {}
        }
        return total
    }

    /// Seconds spent in `process` for all frames.
    func pass() throws -> Double {
        var total = 0.0
        for source in frames {
            var frame = source.makeSibling(pool: pool)
            frame.withMutablePlanes { planes in
                for (from, to) in zip(source.planes, planes) { from.copy(to: to) }
            }
            let start = DispatchTime.now().uptimeNanoseconds
            try processor.process(consume frame) { output in withExtendedLifetime(output) {} }
            total += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        return total
    }
}

/// FFmpeg's I/O floor for a chain whose output is `output` on frames of `width`×`height`: reading the clip and writing
/// frames of the output's size. A smaller output is cropped (FFmpeg's crop only moves plane pointers), so the floor
/// writes what the filter's own command writes; otherwise the whole frame.
func floorFilter(width: Int, height: Int, output: FrameFormat) -> [String] {
    guard output.width <= width, output.height <= height, output.width * output.height < width * height else { return [] }
    return ["-vf", "crop=\(output.width):\(output.height):0:0"]
}

/// The frames of a 4:2:0 y4m file, read into memory as I420 frames.
struct Y4MClip {
    let width: Int
    let height: Int
    /// The frame rate as FFmpeg reads a ratio (`30000/1001`): an FFmpeg graph's `source_fps` stands for it.
    let rate: String
    let frames: [VideoFrame]

    init(path: String, limit: Int) throws {
        // Mapped, not read: the catalog's clip may be a gigabyte, and the frames below are the one copy it needs.
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else {
            throw FilterBenchmark.BenchError("\(path): cannot read")
        }
        guard let headerEnd = data.firstIndex(of: 0x0a) else { throw FilterBenchmark.BenchError("\(path): not a y4m file") }
        let header = String(decoding: data[data.startIndex..<headerEnd], as: UTF8.self).split(separator: " ")
        guard header.first == "YUV4MPEG2" else { throw FilterBenchmark.BenchError("\(path): not a y4m file") }
        var width = 0, height = 0, rate = "25"
        for field in header.dropFirst() {
            switch field.first {
            case "F": rate = field.dropFirst().replacingOccurrences(of: ":", with: "/")
            case "W": width = Int(field.dropFirst()) ?? 0
            case "H": height = Int(field.dropFirst()) ?? 0
            case "C":
                guard field.dropFirst().hasPrefix("420") else {
                    throw FilterBenchmark.BenchError("\(path): chroma \(field.dropFirst()) is not 4:2:0")
                }
            default: break
            }
        }
        guard width > 0, height > 0 else { throw FilterBenchmark.BenchError("\(path): no frame size in the header") }
        self.width = width
        self.height = height
        self.rate = rate
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        let frameBytes = width * height + 2 * chroma
        var frames: [VideoFrame] = []
        var offset = headerEnd + 1
        while frames.count < limit, offset < data.endIndex, let lineEnd = data[offset...].firstIndex(of: 0x0a) {
            let start = lineEnd + 1
            guard start + frameBytes <= data.endIndex else { break }
            var frame = VideoFrame(format: .i420, width: width, height: height)
            frame.withMutablePlanes { planes in
                data.withUnsafeBytes { raw in
                    guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return }
                    var cursor = start - data.startIndex
                    for plane in planes {
                        for y in 0..<plane.height {
                            plane.row(y).update(from: base + cursor, count: plane.width)
                            cursor += plane.width
                        }
                    }
                }
            }
            frames.append(frame)
            offset = start + frameBytes
        }
        self.frames = frames
    }
}

/// Every filter of the catalog timed in one run with its example's parameters (files it reads are made in the
/// workspace: a `.cube` grade, a 256×256 logo with alpha, a gradient ramp, a mask), beside FFmpeg's equivalent
/// graph where the filter has one (`FilterSpec.ffmpeg`): ratio beyond FFmpeg's read/write floor, as `run` does for
/// one chain; the others in milliseconds per frame. The clip is I420; a filter that does not take I420
/// (`mask-to-alpha`) is timed on the same frames converted, untimed, to its first format. `overlay` and `text` have a second row each for the issue's
/// per-frame targets (the logo at 256×256; a running timecode in the default style).
///
/// Each filter is timed on its own number of frames (`CatalogEntry.frames`, see `catalogFrameCount`): `frames` for
/// a slow one, more for a fast one, whose FFmpeg time beyond the floor would otherwise be lost in the floor's noise.
/// The clip is made once with `framesHeld` frames and each filter takes a prefix of it; FFmpeg's floor runs on the
/// filter's count in the filter's own rounds (best of `repeats`, as its graph; three times as many rounds for a
/// filter FFmpeg runs within a tenth of its floor, `withinFloorNoise`).
///
/// ```swift
/// let rows = try FilterBenchmark.catalog(.init(width: 1920, height: 1080, frames: 30, maxFrames: 240))
/// print(rows.map { "\($0.name) \($0.frames) \($0.ratio ?? 0)" })   // e.g. "hue 240 8.1", "gaussian-blur 60 4.6"
/// ```
extension FilterBenchmark {
    public struct CatalogOptions: Sendable {
        public var width: Int
        public var height: Int
        /// The frames every filter is timed on (the fewest).
        public var frames: Int
        /// The most frames a fast filter is timed on (never below `frames`; see `framesHeld`).
        public var maxFrames: Int
        public var threads: Int
        public var repeats: Int
        /// Only the filters whose names contain one of these (all when empty).
        public var only: [String]

        /// The frames in memory at most (I420): 1 GiB, 240 frames at 1080p fit, 4K gets 86.
        public static let heldBytes = 1 << 30
        /// How long VideoFX's pass should last at least for a filter to keep `frames` (see `catalogFrameCount`).
        public static let passSeconds = 0.1

        public init(width: Int = 1920, height: Int = 1080, frames: Int = 20, maxFrames: Int = 240, threads: Int = 1,
                    repeats: Int = 2, only: [String] = []) {
            self.width = width
            self.height = height
            self.frames = frames
            self.maxFrames = maxFrames
            self.threads = threads
            self.repeats = repeats
            self.only = only
        }

        /// The clip's length: `maxFrames` if that many frames fit in `heldBytes`, else as many as fit, never
        /// fewer than `frames`. `CatalogOptions(width: 3840, height: 2160, frames: 20).framesHeld` is 86.
        public var framesHeld: Int {
            let frameBytes = width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
            return max(frames, min(maxFrames, Self.heldBytes / frameBytes))
        }
    }

    public struct CatalogEntry: Sendable, Encodable {
        public let name: String
        public let family: String
        public let chain: String
        /// The frames' layout: `i420` (the clip's), or the filter's first format when it does not take I420.
        public let pixelFormat: String
        /// The frames both sides were timed on (from `frames` to `framesHeld`: more for a fast filter).
        public let frames: Int
        public let vfxMillisecondsPerFrame: Double
        public let ffmpegGraph: String?
        /// FFmpeg's time per frame beyond its floor (nil without an equivalent, or when it does not exceed the floor).
        public let ffmpegMillisecondsPerFrame: Double?
        public let ratio: Double?
        /// FFmpeg's complaint when its graph failed (the row then has no ratio).
        public let ffmpegError: String?
    }

    /// The frames a filter is timed on in the catalog: `frames`, doubled while VideoFX's pass over them would last
    /// under `CatalogOptions.passSeconds` (0.1 s) at `secondsPerFrame` (its time on a first pass), at most `most`.
    /// Doubling keeps the counts to a short list (30, 60, 120, 240): a filter lands on the same count from one run to
    /// the next despite the noise of its first pass, and rows on the same count compare directly.
    /// `catalogFrameCount(secondsPerFrame: 0.0002, frames: 30, most: 240)` (`hue` at 1080p) is 240; a 2.5 ms blur
    /// gets 60, a 5 ms distortion keeps 30. A filter that reaches the 0.1 s costs FFmpeg, at the issue's ≥ 2×, at
    /// least 0.2 s beyond its floor, and FFmpeg's one-time setup of its graph is spread over that many frames. (The
    /// floor's own noise grows with the count, so the fastest rows stay noisier than the slow ones.)
    public static func catalogFrameCount(secondsPerFrame: Double, frames: Int, most: Int) -> Int {
        var count = frames
        while count < most, Double(count) * secondsPerFrame < CatalogOptions.passSeconds { count *= 2 }
        return min(count, most)
    }

    public static func catalog(_ options: CatalogOptions, skipped: (_ filter: String, _ reason: String) -> Void = { _, _ in },
                               progress: (CatalogEntry) -> Void = { _ in }) throws -> [CatalogEntry] {
        let files = try BenchWorkspace()
        defer { files.remove() }
        let workspace = files.folder
        let clip = try prepareClip(.generated(width: options.width, height: options.height), frames: options.framesHeld, in: workspace)
        let frames = try Y4MClip(path: clip, limit: options.framesHeld)
        guard !frames.frames.isEmpty else { throw BenchError("\(clip): no frames") }
        let least = min(options.frames, frames.frames.count)
        let inputs = try catalogFiles(in: workspace)
        func base(_ count: Int) -> [String] {
            ["-hide_banner", "-v", "error", "-threads", "\(options.threads)", "-filter_threads", "\(options.threads)",
             "-i", clip, "-frames:v", "\(count)"]
        }
        let output = workspace + "/out.y4m"
        var entries: [CatalogEntry] = []
        // Each filter's own example (parameters that do something); `overlay` and `text` also as the per-frame
        // targets name them: the 256×256 logo at its own size, a running timecode with the defaults (size 48, outline 2).
        var runs: [(FilterSpec, String)] = []
        for spec in FilterRegistry.all where options.only.isEmpty || options.only.contains(where: { spec.name.contains($0) }) {
            runs.append((spec, spec.example))
            if spec.name == "overlay" { runs.append((spec, "overlay:file=logo.png:position=0.85x0.05:scale=1")) }
            if spec.name == "text" { runs.append((spec, "text:text={timecode}")) }
        }
        // A filter that does not take I420 (`mask-to-alpha`: RGBA, BGRA) is timed on the clip's frames converted
        // (untimed) to its first format, at most `heldBytes` of them.
        var converted: [PixelFormat: [VideoFrame]] = [:]
        func heldFrames(_ format: PixelFormat, _ count: Int) -> [VideoFrame] {
            guard format != .i420 else { return Array(frames.frames.prefix(count)) }
            var held = converted[format] ?? []
            let frameBytes = (0..<format.planeCount).reduce(0) { total, plane in
                let size = format.planeSize(plane, width: frames.width, height: frames.height)
                return total + size.width * size.height * format.bytesPerPixel(plane: plane)
            }
            let most = max(least, CatalogOptions.heldBytes / frameBytes)
            for frame in frames.frames.dropFirst(held.count).prefix(min(count, most) - held.count) { held.append(frame.converted(to: format)) }
            converted[format] = held
            return Array(held.prefix(count))
        }
        for (spec, example) in runs {
            guard let input = spec.pixelFormats.contains(.i420) ? .i420 : spec.pixelFormats.first else { continue }
            // The example, with the files it reads made here.
            var description = try FilterChain(parsing: example).filters.first { $0.name == spec.name } ?? FilterDescription(spec.name)
            for parameter in spec.parameters {
                guard case .file(let extensions) = parameter.kind, parameter.defaultValue == nil || example.contains("\(parameter.key)=") else { continue }
                let file = extensions.contains("cube") ? inputs.cube : spec.name == "overlay" ? inputs.logo
                    : spec.name == "color-map" ? inputs.ramp : inputs.mask
                try description.set(parameter.key, .text(file))
            }
            let chain = FilterChain([description])
            // FFmpeg reads the I420 clip: a filter timed on other frames gets no ratio.
            let graph = input != .i420 ? nil
                : spec.ffmpeg?(try description.arguments())?.replacingOccurrences(of: "source_fps", with: "(\(frames.rate))")
            // An example that does not fit the frame (`crop` 100 pixels in, at 64×36) is reported and left out.
            var timer: ProcessingTimer
            do {
                timer = try ProcessingTimer(chain, frames: heldFrames(input, least), threads: options.threads)
            } catch {
                skipped(spec.name, "\(error)")
                continue
            }
            // A first pass (untimed in the row) on the fewest frames picks the filter's count.
            timer.frames = heldFrames(input, try catalogFrameCount(secondsPerFrame: timer.pass() / Double(least), frames: least,
                                                                   most: frames.frames.count))
            let count = timer.frames.count
            // FFmpeg's floor on as many frames, in the same rounds (on a shared machine it moves by a third from one
            // run to the next, as much as a fast filter's whole work); a filter that shrinks the frame gets a floor
            // that writes frames of its output's size.
            let floorCommand = base(count) + floorFilter(width: frames.width, height: frames.height, output: timer.output)
                + ["-f", "yuv4mpegpipe", "-y", output]
            var processing = Double.infinity, ffmpeg = Double.infinity, floor = Double.infinity
            var failure: String?
            func round() throws {
                processing = min(processing, try timer.pass())
                if graph != nil { floor = min(floor, try bestTime(repeats: 1) { try runFFmpeg(floorCommand) }) }
                if let graph, failure == nil {
                    do {
                        ffmpeg = min(ffmpeg, try bestTime(repeats: 1) {
                            try runFFmpeg(base(count) + ["-vf", graph + ",format=yuv420p", "-f", "yuv4mpegpipe", "-y", output])
                        })
                    } catch {
                        failure = "\(error)"
                    }
                }
            }
            try runRounds(options.repeats, round: round) { graph != nil && failure == nil && withinFloorNoise(floor: floor, ffmpeg: ffmpeg) }
            timer.processor.release()
            let beyond = graph != nil && failure == nil && ffmpeg > floor ? (ffmpeg - floor) : nil
            let entry = CatalogEntry(name: spec.name, family: spec.family.rawValue, chain: chain.description,
                                     pixelFormat: input.rawValue, frames: count,
                                     vfxMillisecondsPerFrame: processing / Double(count) * 1000, ffmpegGraph: graph,
                                     ffmpegMillisecondsPerFrame: beyond.map { $0 / Double(count) * 1000 },
                                     ratio: beyond.map { $0 / processing }, ffmpegError: failure)
            progress(entry)
            entries.append(entry)
        }
        return entries
    }

    /// The files the catalog's filters read, made with FFmpeg and written here.
    static func catalogFiles(in folder: String) throws -> (cube: String, logo: String, ramp: String, mask: String) {
        let cube = folder + "/grade.cube"
        try CubeFile.text(size: 17) { rgb in rgb * rgb * SIMD3(0.9, 1, 1.1) }.write(toFile: cube, atomically: true, encoding: .utf8)
        func png(_ name: String, _ source: String) throws -> String {
            let path = "\(folder)/\(name).png"
            try runFFmpeg(["-hide_banner", "-v", "error", "-f", "lavfi", "-i", source, "-frames:v", "1", "-y", path])
            return path
        }
        let logo = try png("logo", "color=c=0xff8800@0.6:s=256x256,format=rgba,drawbox=x=32:y=32:w=192:h=192:c=white@0.9:t=fill")
        let ramp = try png("ramp", "gradients=s=256x4:c0=black:c1=orange:nb_colors=2:x0=0:y0=0:x1=255:y1=0")
        let mask = try png("mask", "gradients=s=320x180:c0=black:c1=white:nb_colors=2:x0=0:y0=0:x1=0:y1=179")
        return (cube, logo, ramp, mask)
    }
}
