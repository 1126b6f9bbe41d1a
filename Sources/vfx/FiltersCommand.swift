import VFXAudio
import VFXFilters

/// `vfx filters [NAME] [--json | --markdown]`: the built-in filters and their parameters.
///
/// ```sh
/// vfx filters                 # readable listing
/// vfx filters gaussian-blur   # one filter
/// vfx filters --json | jq '.[].name'
/// vfx filters --markdown > docs/filters.md
/// ```
enum FiltersCommand {
    static let help = """
        usage: vfx filters [NAME] [--audio] [--json | --markdown]

          lists the video filters (--filter), then the audio filters (--audio-filter)

          NAME         show one filter (default: all of them, under a heading per family)
          --json       machine-readable listing for scripts: name, kind (video or audio), family, FFmpeg's
                       equivalent graph ("ffmpeg", when there is one), parameters…
          --markdown   the catalog as docs/filters.md has it (with --audio: the tables of docs/audio.md)
          --audio      only the audio filters
        """

    static func run(_ arguments: inout Arguments) throws {
        print(try listing(&arguments), terminator: "")
    }

    /// What `vfx filters` prints for `arguments`: the catalog as `FilterRegistry.all` has it, registered
    /// filters included.
    static func listing(_ arguments: inout Arguments) throws -> String {
        if arguments.flag("--help", "-h") { return help + "\n" }
        let json = arguments.flag("--json")
        let markdown = arguments.flag("--markdown")
        let audioOnly = arguments.flag("--audio")
        let name = arguments.optionalPositional()
        try arguments.finish()
        if json && markdown { throw UsageError("choose one of --json and --markdown") }
        var specs = audioOnly ? [] : FilterRegistry.all
        // Audio filters come after the video ones (AudioFiltersListing.swift); not in --markdown, which is
        // docs/filters.md (docs/audio.md has theirs).
        var audio = markdown && !audioOnly ? [] : AudioFilterRegistry.all
        if let name {
            let video = FilterRegistry.spec(named: name)
            let sound = AudioFilterRegistry.spec(named: name)
            guard video != nil || sound != nil else {
                throw UsageError("unknown filter '\(name)' (vfx filters lists them)")
            }
            specs = video.map { [$0] } ?? []
            audio = sound.map { [$0] } ?? []
        }
        if json { return try AudioFiltersListing.json(video: specs, audio: audio) + "\n" }
        if markdown { return audioOnly ? AudioFilterListing.markdown(audio) : FilterListing.markdown(specs) }
        return [FilterListing.text(specs), AudioFilterListing.text(audio)].filter { !$0.isEmpty }.joined(separator: "\n") + "\n"
    }
}
