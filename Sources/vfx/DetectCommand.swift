import Foundation
import VFXCore
import VFXMedia
import VFXPipeline
import VFXVision

/// `vfx detect faces|landmarks INPUT …`: faces or face meshes per frame, as JSON lines or drawn on the input.
///
/// ```
/// $ vfx detect faces media/astronaut.png --json
/// {"frame": 0, "time": 0.0, "faces": [{"box": [0.347, 0.162, 0.186, 0.186], "score": 0.92, "keypoints": [[…], …]}]}
/// $ vfx detect faces media/carphone_pristine.mp4 --model full -o faces.mp4
/// $ vfx detect landmarks media/carphone_pristine.mp4 -o mesh.jsonl
/// ```
enum DetectCommand {
    static let help = """
        usage: vfx detect faces INPUT [--model short|full] [--min-score S] [--json] [-o OUT]
               vfx detect landmarks INPUT [--json] [-o OUT]

          faces        MediaPipe's face detector: box, score and six keypoints (right eye, left eye, nose tip,
                       mouth centre, right ear tragion, left ear tragion: the subject's sides)
          landmarks    the 468-point face mesh, tracked from frame to frame (the detector runs only when
                       tracking is lost); z is a relative depth on the x scale, negative toward the camera
          --model      short (faces within about 2 m, the default) or full (small and far faces)
          --min-score  detection threshold 0…1 (default: MediaPipe's, 0.5 short, 0.6 full)
          --json       one JSON object per frame on standard output; coordinates normalized 0…1 to the
                       frame, origin top-left, box = [x, y, width, height] of its top-left corner and size
          -o OUT       .jsonl/.json: the JSON lines into a file; an image or video: the input with the
                       results drawn on it
        """

    static func run(_ arguments: inout Arguments) throws {
        guard let what = arguments.next() else { throw UsageError("detect needs faces or landmarks\n\(help)") }
        if what == "--help" || what == "-h" { print(help); return }
        guard what == "faces" || what == "landmarks" else {
            throw UsageError("unknown detect target '\(what)' (faces or landmarks)")
        }
        if arguments.flag("--help", "-h") { print(help); return }
        var model = FaceDetector.Model.shortRange
        var minScore: Float?
        if what == "faces" {
            if let name = try arguments.option("--model") {
                switch name {
                case "short": model = .shortRange
                case "full": model = .fullRange
                default: throw UsageError("--model must be short or full, got '\(name)'")
                }
            }
            if let text = try arguments.option("--min-score") {
                guard let value = Float(text), value >= 0, value <= 1 else {
                    throw UsageError("--min-score must be a number in 0...1, got '\(text)'")
                }
                minScore = value
            }
        }
        let json = arguments.flag("--json")
        let output = try arguments.option("-o", "--output")
        let input = try arguments.positional("INPUT")
        try arguments.finish()

        let sink = try ResultSink(output: output, json: json)
        if what == "faces" {
            let detector = try FaceDetector(model: model, minScore: minScore)
            try VisionInput.forEachFrame(input, sink: sink) { frame in
                let faces = detector.detect(in: frame)
                return (VisionJSON.faces(faces), { Annotation.draw(faces: faces, on: &$0) })
            }
        } else {
            let landmarker = try FaceLandmarker()
            try VisionInput.forEachFrame(input, sink: sink) { frame in
                let faces = landmarker.process(frame)
                return (VisionJSON.landmarks(faces), { Annotation.draw(landmarks: faces, on: &$0) })
            }
        }
    }
}

/// Where `vfx detect` sends its results: JSON lines (standard output or a file) or an annotated copy.
final class ResultSink {
    enum Kind { case text, jsonStandardOutput, jsonFile(String), media(String) }
    let kind: Kind
    private var lines: [String] = []

    init(output: String?, json: Bool) throws {
        guard let output else {
            kind = json ? .jsonStandardOutput : .text
            return
        }
        let ext = URL(fileURLWithPath: output).pathExtension.lowercased()
        if ext == "jsonl" || ext == "json" {
            kind = .jsonFile(output)
        } else if MediaWriter.Kind(extension: ext) != nil || output == "-" {
            kind = .media(output)
        } else {
            throw UsageError("\(output): unknown output type (use .jsonl, .json, an image or a video)")
        }
    }

    /// Takes one frame's JSON line (standard output at once, files at the end).
    func add(line: String) {
        switch kind {
        case .jsonStandardOutput: print(line)
        case .jsonFile: lines.append(line)
        default: break
        }
    }

    /// Writes the JSON file under a temporary name and renames it when complete.
    func finish() throws {
        guard case .jsonFile(let path) = kind else { return }
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).partial")
        do {
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: temporary)
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(at: url) }
            try FileManager.default.moveItem(at: temporary, to: url)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw UsageError("\(path): cannot write (\(error.localizedDescription))")
        }
    }
}

/// Reads every frame of an input upright and hands it to the analysis.
enum VisionInput {
    /// Runs `analyse` on each frame; it returns the frame's JSON "faces" value and a drawing for `-o media`.
    static func forEachFrame(_ input: String, sink: ResultSink,
                             analyse: (VideoFrame) throws -> (json: String, draw: (inout VideoFrame) -> Void)) throws {
        let reader = try MediaReader(path: input)
        let upright = reader.rotation == .none ? nil : ApplyCommand.Upright(rotation: reader.rotation, threads: 1)
        if let upright { _ = try upright.configure(for: reader.format) }
        var writer: MediaWriter?
        if case .media(let path) = sink.kind {
            writer = try MediaWriter(path: path, frameRate: reader.format.frameRate, audioFrom: reader)
        }
        let rate = reader.format.frameRate
        var index = 0
        while let decoded = try reader.nextFrame() {
            for frame in try upright?.frames(from: decoded) ?? [decoded] {
                let result = try analyse(frame)
                let time = frame.timestamp?.seconds ?? rate.map { Double(index) / $0.framesPerSecond } ?? 0
                switch sink.kind {
                case .text:
                    print("frame \(index) time \(VisionJSON.seconds(time)): \(result.json)")
                case .jsonStandardOutput, .jsonFile:
                    sink.add(line: "{\"frame\": \(index), \"time\": \(VisionJSON.seconds(time)), \"faces\": \(result.json)}")
                case .media:
                    var drawn = frame.converted(to: .rgba)
                    result.draw(&drawn)
                    try writer?.write(drawn)
                }
                index += 1
            }
        }
        try writer?.finish()
        try sink.finish()
    }
}

/// The JSON shapes of `vfx detect`, written by hand so the keys keep the documented order.
enum VisionJSON {
    static func number(_ value: Double) -> String {
        value.isFinite ? String(format: "%.6g", value) : "null"
    }

    /// A time in seconds, always with a decimal point (`0.0`, `0.04`).
    static func seconds(_ value: Double) -> String {
        let text = number(value)
        return text.contains(".") || text.contains("e") || text == "null" ? text : text + ".0"
    }

    static func number(_ value: Float) -> String { number(Double(value)) }

    static func box(_ rect: NormalizedRect) -> String { "[" + rect.array.map(number).joined(separator: ", ") + "]" }

    static func faces(_ faces: [FaceObservation]) -> String {
        "[" + faces.map { face in
            let points = face.keypoints.map { "[\(number($0.x)), \(number($0.y))]" }.joined(separator: ", ")
            return "{\"box\": \(box(face.boundingBox)), \"score\": \(number(face.score)), \"keypoints\": [\(points)]}"
        }.joined(separator: ", ") + "]"
    }

    static func landmarks(_ faces: [FaceLandmarks]) -> String {
        "[" + faces.map { face in
            let points = face.points.map { "[\(number($0.x)), \(number($0.y)), \(number($0.z))]" }.joined(separator: ", ")
            return "{\"box\": \(box(face.boundingBox)), \"landmarks\": [\(points)]}"
        }.joined(separator: ", ") + "]"
    }
}

/// Draws results on an RGBA frame: boxes as 2-pixel outlines, points as small squares.
enum Annotation {
    static func draw(faces: [FaceObservation], on frame: inout VideoFrame) {
        for face in faces {
            outline(face.boundingBox, on: &frame, color: (0, 255, 0))
            for point in face.keypoints { dot(point.x, point.y, radius: 2, on: &frame, color: (255, 0, 0)) }
        }
    }

    static func draw(landmarks faces: [FaceLandmarks], on frame: inout VideoFrame) {
        for face in faces {
            outline(face.boundingBox, on: &frame, color: (0, 255, 0))
            for point in face.points { dot(point.x, point.y, radius: 0, on: &frame, color: (255, 255, 0)) }
        }
    }

    private static func fill(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, on frame: inout VideoFrame, color: (UInt8, UInt8, UInt8)) {
        let width = frame.width, height = frame.height
        let left = max(x0, 0), right = min(x1, width - 1), top = max(y0, 0), bottom = min(y1, height - 1)
        guard left <= right, top <= bottom else { return }
        frame.withMutablePlanes { planes in
            for y in top...bottom {
                let row = planes[0].row(y)
                for x in left...right {
                    row[4 * x] = color.0
                    row[4 * x + 1] = color.1
                    row[4 * x + 2] = color.2
                }
            }
        }
    }

    private static func outline(_ box: NormalizedRect, on frame: inout VideoFrame, color: (UInt8, UInt8, UInt8)) {
        let w = Float(frame.width), h = Float(frame.height)
        let x0 = Int((box.x * w).rounded()), y0 = Int((box.y * h).rounded())
        let x1 = Int((box.maxX * w).rounded()), y1 = Int((box.maxY * h).rounded())
        fill(x0, y0, x1, y0 + 1, on: &frame, color: color)
        fill(x0, y1 - 1, x1, y1, on: &frame, color: color)
        fill(x0, y0, x0 + 1, y1, on: &frame, color: color)
        fill(x1 - 1, y0, x1, y1, on: &frame, color: color)
    }

    private static func dot(_ x: Float, _ y: Float, radius: Int, on frame: inout VideoFrame, color: (UInt8, UInt8, UInt8)) {
        guard x.isFinite, y.isFinite, abs(x) < 10, abs(y) < 10 else { return }
        let cx = Int(x * Float(frame.width)), cy = Int(y * Float(frame.height))
        fill(cx - radius, cy - radius, cx + radius, cy + radius, on: &frame, color: color)
    }
}
