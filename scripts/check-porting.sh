#!/usr/bin/env bash
# Builds every Swift block of docs/porting.md as a client of VideoFX would: the blocks are extracted, in order,
# into main.swift of a fresh package that depends on this repository by path (the `VideoFX` library product),
# and that package is built (debug: only whether the code compiles and links against the library matters).
#
#   scripts/check-porting.sh            # the package goes to .build/porting-check (kept, so a rerun is incremental)
#   PORTING_CHECK_DIR=/tmp/x scripts/check-porting.sh
#
# Exit status 0 when the package builds; otherwise the compiler's errors name the block's lines in main.swift.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
page="$repo/docs/porting.md"
work="${PORTING_CHECK_DIR:-$repo/.build/porting-check}"
identity="$(basename "$repo" | tr '[:upper:]' '[:lower:]')"
swift="${SWIFT:-swift}"

mkdir -p "$work/Sources/PortingCheck"
cat > "$work/Package.swift" <<EOF
// swift-tools-version:6.0
// Made by scripts/check-porting.sh: docs/porting.md's Swift blocks as a client package of VideoFX.
import PackageDescription

let package = Package(
    name: "PortingCheck",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "$repo")],
    targets: [
        .executableTarget(name: "PortingCheck", dependencies: [.product(name: "VideoFX", package: "$identity")]),
    ]
)
EOF

# The blocks, in order, each marked with the page line it starts on.
main="$work/Sources/PortingCheck/main.swift"
awk -v page="docs/porting.md" '
    /^```swift$/ { inside = 1; print "// " page ", line " NR + 1; next }
    /^```$/ && inside { inside = 0; print ""; next }
    inside { print }
' "$page" > "$main.new"
blocks=$(grep -c '^// docs/porting.md, line' "$main.new" || true)
if [ "$blocks" -eq 0 ]; then
    echo "check-porting: $page has no Swift blocks" >&2
    exit 1
fi
# Rewrite main.swift only when it changed, so an unchanged page rebuilds nothing.
if ! cmp -s "$main.new" "$main"; then mv "$main.new" "$main"; else rm "$main.new"; fi

echo "check-porting: building $blocks Swift blocks of docs/porting.md in a client package ($work)"
set +e
"$swift" build --package-path "$work" -c debug 2>&1 | grep -v -E '^\[[0-9]+/[0-9]+\]'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
    echo "check-porting: docs/porting.md's blocks do not compile in a client package (errors above; lines of $main)" >&2
    exit 1
fi
echo "check-porting: the $blocks blocks compile against VideoFX"
