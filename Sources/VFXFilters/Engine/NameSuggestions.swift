/// "Did you mean …" for every catalog and the command line: the one edit distance VideoFX uses.
///
/// ```swift
/// NameSuggestions.near("sepa", in: ["sepia", "mono"])   // ["sepia"]
/// NameSuggestions.distance("--fsp", "--fps")            // 1
/// ```
public enum NameSuggestions {
    /// Up to three of `names` that `typed` starts, that start with it, or that are at most two edits away.
    public static func near(_ typed: String, in names: [String]) -> [String] {
        let lower = typed.lowercased()
        return names.filter { candidate in
            candidate.hasPrefix(lower) || lower.hasPrefix(candidate) || distance(candidate, lower) <= 2
        }.prefix(3).map { $0 }
    }

    /// Edit distance counting insertions, deletions, substitutions and swaps of neighbours as one edit
    /// each (the optimal-string-alignment form of Damerau–Levenshtein): "--fsp" is one edit from "--fps".
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
