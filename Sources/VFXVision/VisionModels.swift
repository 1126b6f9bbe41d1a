import Foundation
import VFXNeural

/// Where the MediaPipe model files are found (scripts/setup.sh puts them in the package's `models/`).
///
/// ```swift
/// let url = VisionModels.url(for: "face_detection_short_range.tflite")
/// ```
public enum VisionModels {
    /// `$VFX_MODELS` when set, else `./models` when it exists, else the `models` folder of the package that
    /// built the running executable (`.build/<configuration>/vfx` → `models/`), or `share/videofx/models`
    /// beside an installed one (`/usr/local/bin/vfx` → `/usr/local/share/videofx/models`).
    public static var directory: URL {
        if let folder = ProcessInfo.processInfo.environment["VFX_MODELS"], !folder.isEmpty {
            return URL(fileURLWithPath: folder)
        }
        let local = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("models")
        if FileManager.default.fileExists(atPath: local.path) { return local }
        var folder = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            for candidate in [folder.appendingPathComponent("models"), folder.appendingPathComponent("share/videofx/models")]
            where FileManager.default.fileExists(atPath: candidate.appendingPathComponent("face_landmark.tflite").path) {
                return candidate
            }
            folder = folder.deletingLastPathComponent()
        }
        return local
    }

    public static func url(for file: String) -> URL { directory.appendingPathComponent(file) }

    /// Loads a model and checks its tensors' shapes; every failure is a one-line `VisionError` naming the file.
    static func load(_ url: URL, threads: Int, inputs: [[Int]], outputs: [[Int]]) throws -> NeuralModel {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw VisionError("\(url.path): no such model file (run scripts/setup.sh, or set VFX_MODELS)")
        }
        let model: NeuralModel
        do {
            model = try NeuralModel(contentsOf: url, threads: threads)
        } catch {
            throw VisionError("\(url.path): \(error)")
        }
        guard model.inputs.map(\.shape) == inputs, model.outputs.map(\.shape) == outputs else {
            throw VisionError("\(url.path): expected inputs \(inputs) and outputs \(outputs), "
                              + "found \(model.inputs.map(\.shape)) and \(model.outputs.map(\.shape))")
        }
        return model
    }
}
