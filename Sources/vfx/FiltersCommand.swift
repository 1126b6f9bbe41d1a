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
        print(try listing(&arguments), terminator: "")
    }

    /// What `vfx filters` prints for `arguments`: the catalog as `FilterRegistry.all` has it, registered
    /// filters included.
    static func listing(_ arguments: inout Arguments) throws -> String {
        if arguments.flag("--help", "-h") { return help + "\n" }
        let json = arguments.flag("--json")
        let markdown = arguments.flag("--markdown")
        let name = arguments.optionalPositional()
        try arguments.finish()
        if json && markdown { throw UsageError("choose one of --json and --markdown") }
        var specs = FilterRegistry.all
        if let name {
            guard let spec = FilterRegistry.spec(named: name) else {
                throw UsageError("unknown filter '\(name)' (vfx filters lists them)")
            }
            specs = [spec]
        }
        if json { return try FilterListing.json(specs) + "\n" }
        if markdown { return FilterListing.markdown(specs) }
        return FilterListing.text(specs) + "\n"
    }
}
