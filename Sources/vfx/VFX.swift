import Foundation
import VFXCore
import VFXEffects
import VFXPipeline

/// The `vfx` command: one subcommand per file in this folder.
@main
enum VFX {
    static let usage = """
        usage: vfx <command> [options]

        commands:
          apply INPUT -o OUTPUT [--filter CHAIN]   process a video, image or y4m pipe
          filters [--json]                         list the filters and their parameters
          model info|run MODEL ...                 inspect or run a TFLite model
          bench ...                                time a filter chain or a model (optionally against FFmpeg)
          detect faces|landmarks INPUT, segment INPUT -o OUT   faces, face meshes, person masks
          demo                                     process the sample media into demo-output/

        'vfx <command> --help' describes a command.
        """

    static let commands: [String: @Sendable (inout Arguments) throws -> Void] = [
        "apply": ApplyCommand.run,
        "filters": FiltersCommand.run,
        "model": ModelCommand.run,
        "bench": BenchCommand.run,
        "demo": DemoCommand.run,
        "detect": DetectCommand.run, "segment": SegmentCommand.run,
    ]

    static func main() {
        VFXEffects.register()
        var arguments = Arguments(Array(CommandLine.arguments.dropFirst()))
        guard let name = arguments.next() else {
            Terminal.error(usage)
            exit(2)
        }
        if name == "--help" || name == "-h" || name == "help" {
            print(usage)
            return
        }
        guard let command = commands[name] else {
            Terminal.error("vfx: error: unknown command '\(name)'\n\(usage)")
            exit(2)
        }
        do {
            try command(&arguments)
        } catch is RunCancelled {
            Terminal.error("vfx: interrupted; no output written")
            exit(130)
        } catch let error as UsageError {
            Terminal.error("vfx: error: \(error.message)")
            exit(2)
        } catch {
            Terminal.error("vfx: error: \(error)")
            exit(1)
        }
    }
}
