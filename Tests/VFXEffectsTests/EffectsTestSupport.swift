import Foundation
import VFXCore
import VFXEffects
import VFXFilters
import VFXMedia
import VFXPipeline
import VFXTestSupport
import XCTest

/// Running effect chains on pictures and clips, and MediaPipe's own face detector on the results.
enum Effects {
    /// The chain compiled and configured for frames like `frame`.
    static func processor(_ chain: String, for frame: VideoFrame) throws -> FilterChainProcessor {
        VFXEffects.register()
        let processor = try FilterChain(parsing: chain).makeProcessor(threads: 1)
        _ = try processor.configure(for: FrameFormat(pixelFormat: frame.format, width: frame.width, height: frame.height,
                                                     color: frame.color))
        return processor
    }

    /// `chain` applied to one picture.
    static func apply(_ chain: String, to frame: VideoFrame) throws -> VideoFrame {
        let processor = try processor(chain, for: frame)
        return try XCTUnwrap(processor.frames(from: frame, flush: true).first)
    }

    /// `chain` applied to every frame of a clip, in order, by one processor.
    static func apply(_ chain: String, to frames: [VideoFrame]) throws -> [VideoFrame] {
        guard let first = frames.first else { return [] }
        let processor = try processor(chain, for: first)
        var outputs: [VideoFrame] = []
        for frame in frames { outputs += try processor.frames(from: frame) }
        try processor.flush { outputs.append($0) }
        return outputs
    }

    /// Every frame of a media file as VideoFX decodes it.
    static func read(_ path: String) throws -> [VideoFrame] {
        let reader = try MediaReader(path: path)
        var frames: [VideoFrame] = []
        while let frame = try reader.nextFrame() { frames.append(frame) }
        return frames
    }

    /// R, G, B of every pixel (row by row), through VideoFX's own conversion to RGBA.
    static func rgb(_ frame: VideoFrame) -> [UInt8] {
        let rgba = frame.converted(to: .rgba)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frame.width * frame.height * 3)
        for y in 0..<rgba.height {
            let row = rgba.plane(0).row(y)
            for x in 0..<rgba.width { bytes += [row[4 * x], row[4 * x + 1], row[4 * x + 2]] }
        }
        return bytes
    }

    static let python = TestMedia.root.appendingPathComponent(".build/venv-mediapipe/bin/python").path

    /// A face as MediaPipe reports it (normalized, origin top-left).
    struct Face {
        var box: (x: Double, y: Double, width: Double, height: Double)
        var keypoints: [(x: Double, y: Double)]

        func iou(_ other: Face) -> Double {
            let x0 = max(box.x, other.box.x), y0 = max(box.y, other.box.y)
            let x1 = min(box.x + box.width, other.box.x + other.box.width), y1 = min(box.y + box.height, other.box.y + other.box.height)
            let overlap = max(x1 - x0, 0) * max(y1 - y0, 0)
            return overlap / (box.width * box.height + other.box.width * other.box.height - overlap)
        }
    }

    /// MediaPipe's short- and full-range face detections on every frame (scripts/reference/detect_faces.py).
    static func mediaPipeFaces(_ frames: [VideoFrame]) throws -> (short: [[Face]], full: [[Face]]) {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw XCTSkip("no MediaPipe environment in .build/venv-mediapipe (run scripts/setup.sh --python)")
        }
        let first = try XCTUnwrap(frames.first)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-effects-\(UUID().uuidString).rgb")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(frames.flatMap(rgb)).write(to: file)
        let script = TestMedia.root.appendingPathComponent("scripts/reference/detect_faces.py").path
        let result = try TestProcess.run(python, ["-W", "ignore", script, String(first.width), String(first.height), file.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: result.stdout) as? [String: [[[String: Any]]]])
        func faces(_ key: String) throws -> [[Face]] {
            try XCTUnwrap(json[key]).map { frame in
                try frame.map { face in
                    let box = try XCTUnwrap(face["box"] as? [Double])
                    let points = try XCTUnwrap(face["keypoints"] as? [[Double]])
                    return Face(box: (box[0], box[1], box[2], box[3]), keypoints: points.map { ($0[0], $0[1]) })
                }
            }
        }
        return (try faces("short"), try faces("full"))
    }
}
