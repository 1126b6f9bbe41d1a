import VFXFilters

/// `vfx filters [--json | --markdown]`: the built-in filters and their parameters.
///
/// ```sh
/// vfx filters                 # readable listing
/// vfx filters --json | jq '.[].name'
/// vfx filters --markdown > docs/filters.md
/// ```
enum FiltersCommand {
    static func run(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        let markdown = arguments.flag("--markdown")
        try arguments.finish()
        if json && markdown { throw UsageError("choose one of --json and --markdown") }
        let specs = FilterRegistry.builtIns
        if json {
            print(try FilterListing.json(specs))
        } else if markdown {
            print(FilterListing.markdown(specs), terminator: "")
        } else {
            print(FilterListing.text(specs))
        }
    }
}
