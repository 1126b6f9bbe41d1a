#!/usr/bin/env bash
# VFXNeural against LiteRT with XNNPACK, side by side: every model in models/, same machine, same run,
# the two runtimes interleaved model by model so that both see the same load on a shared machine.
#
#   scripts/bench-neural.sh [--runs N] [--rounds N] [--threads N] [--output FILE]
#
# Each round times every model with `vfx bench --model M --json` and with scripts/reference/litert_bench.py
# (N timed runs after 5 warm-up runs, median per round). The table reports, per runtime and model, the
# best of the round medians (the run least disturbed by other work), and the ratio ours / LiteRT.
# The markdown table is printed and written to FILE (default docs/performance-neural-vs-litert.md; - for none).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=100 ROUNDS=3 THREADS=1 OUTPUT=docs/performance-neural-vs-litert.md
while (($#)); do
    case $1 in
        --runs) RUNS=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --output) OUTPUT=$2; shift 2 ;;
        *) echo "usage: scripts/bench-neural.sh [--runs N] [--rounds N] [--threads N] [--output FILE]" >&2; exit 2 ;;
    esac
done
say() { printf 'bench-neural: %s\n' "$*" >&2; }

scripts/reference/setup-venvs.sh
PYTHON=$ROOT/.build/venv-litert/bin/python
say "building vfx (release)"
swift build -c release --product vfx >/dev/null
VFX=$(swift build -c release --show-bin-path)/vfx

MODELS=(face_detection_short_range face_detection_full_range_sparse face_landmark selfie_segmentation
        selfie_segmentation_landscape palm_detection_lite hand_landmark_lite)
RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT
for round in $(seq 1 "$ROUNDS"); do
    for model in "${MODELS[@]}"; do
        say "round $round/$ROUNDS: $model"
        ours=$("$VFX" bench --model "models/$model.tflite" --threads "$THREADS" --runs "$RUNS" --json)
        theirs=$("$PYTHON" scripts/reference/litert_bench.py "models/$model.tflite" --threads "$THREADS" \
                 --runs "$RUNS" 2>/dev/null)
        printf '{"side": "ours", "round": %d, "result": %s}\n{"side": "litert", "round": %d, "result": %s}\n' \
            "$round" "$ours" "$round" "$theirs" >> "$RESULTS"
    done
done

[ "$OUTPUT" = - ] || mkdir -p "$(dirname "$OUTPUT")"
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
"$PYTHON" - "$RESULTS" "$OUTPUT" "$RUNS" "$ROUNDS" "$THREADS" "$CPU" "${MODELS[@]}" <<'PY'
import json, subprocess, sys, time
results, output, runs, rounds, threads, cpu, *models = sys.argv[1:]
best = {}
for line in open(results):
    entry = json.loads(line)
    key = (entry["side"], entry["result"]["model"])
    best[key] = min(best.get(key, float("inf")), entry["result"]["median_ms"])
litert_version = subprocess.run([sys.executable, "-c", "import ai_edge_litert as m; print(m.__version__)"],
                                capture_output=True, text=True).stdout.strip()
lines = [
    "# VFXNeural against LiteRT (XNNPACK)",
    "",
    f"Measured by `scripts/bench-neural.sh` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {cpu}, "
    f"{threads} thread(s) each. Per model and runtime, the best of {rounds} round medians, each over {runs} timed "
    f"invokes after 5 warm-up invokes; the two runtimes alternate model by model in the same run. LiteRT is "
    f"ai-edge-litert {litert_version}, default interpreter (XNNPACK delegate). Target: ratio at most 2.",
    "",
    "| model | VFXNeural ms | LiteRT ms | ratio (ours / LiteRT) |",
    "| --- | ---: | ---: | ---: |",
]
for model in models:
    ours, theirs = best[("ours", model)], best[("litert", model)]
    lines.append(f"| {model} | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f} |")
table = "\n".join(lines) + "\n"
print(table, end="")
if output != "-":
    with open(output, "w") as file:
        file.write(table)
PY
