#!/usr/bin/env bash
# Peak resident memory of `vfx apply` on 1080p H.264 → H.264 for 60, 600 and 1,800 frames, with and without a
# filter chain, beside FFmpeg's own transcode of the same clip: the peak must stay flat with clip length.
#
#   scripts/bench-memory.sh [--frames "60 600 1800"]      (run `make build` first; takes minutes)
#
# Prints a markdown table (peak RSS from GNU time's %M, in MB).
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES="60 600 1800"
[ "${1:-}" = "--frames" ] && FRAMES=$2
VFX=$(swift build -c release --show-bin-path)/vfx
WORK=$(mktemp -d /tmp/vfx-memory.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
CHAIN="sepia,gaussian-blur:radius=5,vignette"
peak() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }

echo "| frames | vfx apply, no filter | vfx apply, $CHAIN | ffmpeg -c:v libx264 |"
echo "| --- | --- | --- | --- |"
for n in $FRAMES; do
    ffmpeg -v error -f lavfi -i testsrc2=size=1920x1080:rate=30 -f lavfi -i sine=f=440:r=48000 -frames:v "$n" \
        -shortest -c:v libx264 -preset ultrafast -c:a aac "$WORK/in.mp4"
    plain=$(peak "$VFX" apply "$WORK/in.mp4" -o "$WORK/plain.mp4" --quiet)
    chain=$(peak "$VFX" apply "$WORK/in.mp4" -o "$WORK/chain.mp4" --quiet --filter "$CHAIN")
    ffmpeg_peak=$(peak ffmpeg -v error -y -i "$WORK/in.mp4" -c:v libx264 -preset faster -crf 20 -c:a copy "$WORK/ff.mp4")
    printf '| %s | %d MB | %d MB | %d MB |\n' "$n" $((plain / 1024)) $((chain / 1024)) $((ffmpeg_peak / 1024))
    rm -f "$WORK"/*.mp4
done
