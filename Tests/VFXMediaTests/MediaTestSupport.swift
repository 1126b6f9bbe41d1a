import Foundation
import VFXCore
import VFXTestSupport

struct ToolFailure: Error, CustomStringConvertible {
    let description: String
}

/// Runs FFmpeg's command-line tools, the independent reference for every media test.
enum Tool {
    /// Runs `/usr/bin/<tool>` and returns its standard output (throws on a non-zero exit).
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        let result = try TestProcess.run("/usr/bin/\(tool)", ["-v", "error"] + arguments)
        guard result.status == 0 else {
            throw ToolFailure(description: "\(tool) \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        return result.stdout
    }

    /// `ffmpeg -i path … -f rawvideo -pix_fmt fmt -`: the reference decode.
    static func rawFrames(_ path: String, pixelFormat: String = "yuv420p") throws -> [UInt8] {
        [UInt8](try run("ffmpeg", ["-nostdin", "-i", path, "-f", "rawvideo", "-pix_fmt", pixelFormat, "-"]))
    }

    /// ffprobe's description of one stream (`v:0`, `a:0`) with frames counted.
    static func probe(_ path: String, stream: String) throws -> [String: String] {
        let data = try run("ffprobe", ["-select_streams", stream, "-count_packets", "-show_entries",
                                       "stream=codec_name,width,height,pix_fmt,duration,nb_read_packets,sample_rate,channels,time_base",
                                       "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard let streams = json?["streams"] as? [[String: Any]], let first = streams.first else { return [:] }
        return first.mapValues { "\($0)" }
    }

    /// The counterclockwise rotation in degrees (0…359) ffprobe reads from the video's display matrix.
    static func rotation(_ path: String) throws -> Int {
        let text = String(decoding: try run("ffprobe", ["-select_streams", "v:0", "-show_entries", "stream_side_data=rotation",
                                                        "-of", "csv=p=0", path]), as: UTF8.self)
        let degrees = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        return (degrees % 360 + 360) % 360
    }

    /// Presentation times in seconds of a stream's packets, in presentation order.
    static func packetTimes(_ path: String, stream: String) throws -> [Double] {
        let text = String(decoding: try run("ffprobe", ["-select_streams", stream, "-show_entries", "packet=pts_time",
                                                        "-of", "csv=p=0", path]), as: UTF8.self)
        return text.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }.sorted()
    }
}

/// A fresh folder under the system's temporary folder, removed by `remove()`.
struct ScratchFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("vfx-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Every file in the folder, hidden ones included (to check that nothing was left behind).
    var contents: [String] { (try? FileManager.default.contentsOfDirectory(atPath: url.path))?.sorted() ?? [] }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

extension VideoFrame {
    /// The visible bytes of every plane, rows unpadded (FFmpeg's rawvideo layout).
    var packedBytes: [UInt8] {
        var out: [UInt8] = []
        for plane in planes {
            for y in 0..<plane.height {
                out.append(contentsOf: UnsafeBufferPointer(start: plane.row(y), count: plane.width * plane.bytesPerPixel))
            }
        }
        return out
    }
}
