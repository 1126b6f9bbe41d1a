#!/usr/bin/env bash
# VFXNeural against LiteRT with XNNPACK, side by side: every model in models/, same machine, same run,
# the two runtimes interleaved model by model (which one goes first alternates by round) so that both see
# the same load on a shared machine.
#
#   scripts/bench-neural.sh [--runs N] [--rounds N] [--threads N] [--output FILE]
#
# Each round times every model with `vfx bench --model M --json` and with scripts/reference/litert_bench.py
# (N timed runs after 5 warm-up runs, median per round). The table reports, per runtime and model, the
# best of the round medians (the run least disturbed by other work), and the ratio ours / LiteRT; and the
# single fastest invokes of each.
# Then an accuracy table: `vfx model run` on the reference inputs against LiteRT's outputs. The markdown is
# printed and written to FILE (default docs/performance-neural-vs-litert.md; - for none).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=50 ROUNDS=5 THREADS=1 OUTPUT=docs/performance-neural-vs-litert.md
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
bench_ours() { "$VFX" bench --model "models/$1.tflite" --threads "$THREADS" --runs "$RUNS" --json; }
bench_litert() {
    "$PYTHON" scripts/reference/litert_bench.py "models/$1.tflite" --threads "$THREADS" --runs "$RUNS" 2>/dev/null
}
RESULTS=$(mktemp) ACCURACY=$(mktemp -d)
trap 'rm -rf "$RESULTS" "$ACCURACY"' EXIT
for round in $(seq 1 "$ROUNDS"); do
    for model in "${MODELS[@]}"; do
        say "round $round/$ROUNDS: $model"
        # Which runtime goes first alternates from round to round.
        if ((round % 2)); then
            ours=$(bench_ours "$model"); theirs=$(bench_litert "$model")
        else
            theirs=$(bench_litert "$model"); ours=$(bench_ours "$model")
        fi
        printf '{"side": "ours", "round": %d, "result": %s}\n{"side": "litert", "round": %d, "result": %s}\n' \
            "$round" "$ours" "$round" "$theirs" >> "$RESULTS"
    done
done

# Accuracy on the same page: `vfx model run` on the reference inputs of both pictures, against LiteRT's outputs.
for model in "${MODELS[@]}"; do
    for picture in "" camera/; do
        "$VFX" model run "models/$model.tflite" --input ".build/reference/$model/${picture}input_0.npy" \
            --output-dir "$ACCURACY/$model/$picture" >/dev/null
    done
done

[ "$OUTPUT" = - ] || mkdir -p "$(dirname "$OUTPUT")"
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
"$PYTHON" - "$RESULTS" "$ACCURACY" "$OUTPUT" "$RUNS" "$ROUNDS" "$THREADS" "$CPU" "${MODELS[@]}" <<'PY'
import json, os, subprocess, sys, time
import numpy as np
results, accuracy, output, runs, rounds, threads, cpu, *models = sys.argv[1:]
best, fastest = {}, {}
for line in open(results):
    entry = json.loads(line)
    key = (entry["side"], entry["result"]["model"])
    best[key] = min(best.get(key, float("inf")), entry["result"]["median_ms"])
    fastest[key] = min(fastest.get(key, float("inf")), entry["result"]["min_ms"])
litert_version = subprocess.run([sys.executable, "-c", "import ai_edge_litert as m; print(m.__version__)"],
                                capture_output=True, text=True).stdout.strip()
lines = [
    "# VFXNeural against LiteRT (XNNPACK)",
    "",
    f"Measured by `scripts/bench-neural.sh` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {cpu}, "
    f"{threads} thread(s) each. Per model and runtime, the best of {rounds} round medians, each over {runs} timed "
    f"invokes after 5 warm-up invokes; the two runtimes alternate model by model in the same run. LiteRT is "
    f"ai-edge-litert {litert_version}, default interpreter (XNNPACK delegate). Target: ratio at most 2. "
    f"The last column compares the single fastest invokes, the measure least disturbed by other work on a "
    f"shared machine.",
    "",
    "| model | VFXNeural ms | LiteRT ms | ratio (ours / LiteRT) | fastest invokes: ours / LiteRT ms (ratio) |",
    "| --- | ---: | ---: | ---: | ---: |",
]
for model in models:
    ours, theirs = best[("ours", model)], best[("litert", model)]
    ours_min, theirs_min = fastest[("ours", model)], fastest[("litert", model)]
    lines.append(f"| {model} | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f} | "
                 f"{ours_min:.2f} / {theirs_min:.2f} ({ours_min / theirs_min:.2f}) |")
lines += [
    "",
    "Accuracy: the largest |ours - LiteRT| / max(1, |LiteRT|) over all outputs of `vfx model run` on the reference",
    "inputs of `scripts/reference/make_reference.py` (two real pictures per model). The tests require at most 1e-3.",
    "",
    "| model | main picture | camera.png |",
    "| --- | ---: | ---: |",
]
for model in models:
    worst = []
    for picture in ("", "camera"):
        reference = os.path.join(".build/reference", model, picture)
        errors = [0.0]
        for name in sorted(os.listdir(os.path.join(accuracy, model, picture))):
            if name.endswith(".npy"):
                ours, theirs = np.load(os.path.join(accuracy, model, picture, name)), np.load(os.path.join(reference, name))
                errors.append(float((np.abs(ours - theirs) / np.maximum(1, np.abs(theirs))).max()))
        worst.append(max(errors))
    lines.append(f"| {model} | {worst[0]:.1e} | {worst[1]:.1e} |")
table = "\n".join(lines) + "\n"
print(table, end="")
if output != "-":
    with open(output, "w") as file:
        file.write(table)
PY
