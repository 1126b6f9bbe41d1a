import Foundation
import VFXCore
import VFXEffects
import VFXMedia
import VFXPipeline
import VFXTemporal

/// The `vfx` command: one subcommand per file in this folder.
@main
enum VFX {
    /// The release of VideoFX this command belongs to.
    static let version = "0.2.0"

    static let usage = """
        usage: vfx <command> [options]

        commands:
          apply INPUT -o OUTPUT [--filter CHAIN]   process a video, image or y4m pipe
          filters [--json]                         list the filters and their parameters
          model info|run MODEL ...                 inspect or run a TFLite model
          bench ...                                time a filter chain or a model (optionally against FFmpeg)
          detect faces|landmarks INPUT, segment INPUT -o OUT   faces, face meshes, person masks
          demo                                     process the sample media into demo-output/
          live SOURCE [-o SINK] [--filter CHAIN]   run a chain in real time (camera, stream, virtual camera)
          help [COMMAND]                           describe vfx or one command

        'vfx help COMMAND' or 'vfx COMMAND --help' describes a command; 'vfx --version' prints the version.
        """

    /// One subcommand: what runs it and its help text.
    struct Command: Sendable {
        let run: @Sendable (inout Arguments) throws -> Void
        let help: String
    }

    static let commands: [String: Command] = [
        "apply": Command(run: ApplyCommand.run, help: ApplyCommand.help),
        "filters": Command(run: FiltersCommand.run, help: FiltersCommand.help),
        "model": Command(run: ModelCommand.run, help: ModelCommand.usage),
        "bench": Command(run: BenchCommand.run, help: BenchCommand.help),
        "demo": Command(run: DemoCommand.run, help: DemoCommand.help),
        "detect": Command(run: DetectCommand.run, help: DetectCommand.help),
        "segment": Command(run: SegmentCommand.run, help: SegmentCommand.help),
        "live": Command(run: LiveCommand.run, help: LiveCommand.help),
    ]

    static func main() {
        TemporalFilters.register()
        VFXEffects.register()
        var arguments = Arguments(Array(CommandLine.arguments.dropFirst()))
        guard let name = arguments.next() else {
            Terminal.error(usage)
            exit(2)
        }
        switch name {
        case "--help", "-h":
            print(usage)
            return
        case "--version", "-V", "version":
            print("vfx \(version) (\(MediaLibraries.description))")
            return
        case "help":
            guard let topic = arguments.next() else {
                print(usage)
                return
            }
            guard let command = commands[topic] else { fail(usage: unknownCommand(topic)) }
            print(command.help)
            return
        default:
            break
        }
        guard let command = commands[name] else { fail(usage: unknownCommand(name)) }
        // `--help` anywhere after the command describes it, whatever else is on the line.
        if arguments.words.contains("--help") || arguments.words.contains("-h") {
            print(command.help)
            return
        }
        do {
            try command.run(&arguments)
        } catch is RunCancelled {
            Terminal.error("vfx: interrupted; no output written")
            exit(130)
        } catch let error as UsageError {
            // Usage errors are one line; the command's help is one `vfx help` away.
            let message = error.message.split(separator: "\n").first.map(String.init) ?? error.message
            fail(usage: message + (message.contains("vfx ") ? "" : " ('vfx help \(name)' describes the command)"))
        } catch {
            Terminal.error("vfx: error: \(error)")
            exit(1)
        }
    }

    /// "unknown command", with the closest commands when one is near.
    static func unknownCommand(_ name: String) -> String {
        let close = Suggestions.closest(to: name, in: Array(commands.keys) + ["help"])
        return "unknown command '\(name)'" + (close.isEmpty ? " ('vfx help' lists the commands)" : " (did you mean \(close.joined(separator: " or "))?)")
    }

    /// Prints a usage error on one line and exits with status 2.
    static func fail(usage message: String) -> Never {
        Terminal.error("vfx: error: \(message)")
        exit(2)
    }
}
