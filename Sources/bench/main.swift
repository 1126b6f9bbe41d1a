import VFXBench

// bench media INPUT [FOLDER] [REPEATS]: pass-through speed of VideoFX against ffmpeg on the same file.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "media", arguments.count >= 2 {
    let folder = arguments.count > 2 ? arguments[2] : "/dev/shm"
    let repeats = arguments.count > 3 ? Int(arguments[3]) ?? 5 : 5
    do {
        print(try MediaBenchmark.compare(input: arguments[1], folder: folder, repeats: repeats))
    } catch {
        print("bench: error: \(error)")
    }
} else {
    print("bench")
}
