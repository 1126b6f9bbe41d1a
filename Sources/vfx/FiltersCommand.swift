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
        usage: vfx filters [NAME] [--json | --markdown]

          NAME         show one filter (default: all of them)
          --json       machine-readable listing for scripts
          --markdown   the catalog as docs/filters.md has it
        """

    static func run(_ arguments: inout Arguments) throws {
        if arguments.flag("--help", "-h") { print(help); return }
        let json = arguments.flag("--json")
        let markdown = arguments.flag("--markdown")
        let name = arguments.optionalPositional()
        try arguments.finish()
        if json && markdown { throw UsageError("choose one of --json and --markdown") }
        var specs = FilterRegistry.builtIns
        if let name {
            guard let spec = FilterRegistry.spec(named: name) else {
                throw UsageError("unknown filter '\(name)' (vfx filters lists them)")
            }
            specs = [spec]
        }
        if json {
            print(try FilterListing.json(specs))
        } else if markdown {
            print(FilterListing.markdown(specs), terminator: "")
        } else {
            print(FilterListing.text(specs))
        }
    }
}
