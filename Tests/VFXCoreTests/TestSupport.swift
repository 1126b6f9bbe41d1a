import Foundation
import VFXCore
import VFXTestSupport

/// Runs the `ffmpeg` command as the independent reference.
enum FFmpegCLI {
    static func run(_ arguments: [String], input: [UInt8]? = nil) throws -> [UInt8] {
        let result = try TestProcess.run("/usr/bin/ffmpeg", ["-v", "error"] + (input == nil ? ["-nostdin"] : []) + arguments,
                                         input: input.map { Data($0) })
        guard result.status == 0 else {
            throw TestFailure(description: "ffmpeg \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        return [UInt8](result.stdout)
    }

    /// FFmpeg options that make swscale use `color` on the output side and on a raw input.
    static func colorFlags(_ color: ColorDescription) -> (output: [String], input: [String]) {
        let space = color.matrix == .bt709 ? "bt709" : "bt470bg"
        let range = color.range == .full ? "pc" : "tv"
        let filter = "scale=out_color_matrix=\(color.matrix == .bt709 ? "bt709" : "bt601"):out_range=\(color.range == .full ? "full" : "limited")"
        return (["-vf", filter], ["-colorspace", space, "-color_range", range])
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
}
