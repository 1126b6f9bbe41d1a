#!/usr/bin/env python3
"""Per-frame cost of the AI effects beside MediaPipe's time for the analysis each needs; prints the Markdown
table of docs/performance.md ("AI effects").

Each effect is timed as a whole command, `vfx apply CLIP -o OUT.y4m --threads 1 --filter EFFECT`, minus the same
command without a filter (pass-through: decode, y4m write, start-up), divided by the frames; the time is the
command's CPU time (user + system), so waiting for the shared core is not counted. MediaPipe's time is
scripts/reference/vision_bench.py (its Python solutions, per frame, decoded frames in memory) on the same clip.
Everything is pinned to one core with taskset, and the two take turns for --rounds rounds; each keeps its best
round, so a burst of load elsewhere on the shared machine does not decide the comparison.

    scripts/bench-effects.py [--vfx .build/release/vfx] [--source media/carphone_pristine.mp4] [--rounds 3]
"""
import argparse, json, os, subprocess

# (chain, the MediaPipe analysis it needs, the bound as a multiple of that analysis)
EFFECTS = [
    ("background-blur", "segment", 1.5),
    ("background-blur:quality=fast", "segment-landscape", None),
    ("background-image:file=media/astronaut.png", "segment", None),
    ("background-color", "segment", None),
    ("face-sticker:sticker=glasses", "faces", 1.2),
    ("face-pixelate", "faces-full", 1.2),
    ("face-blur", "faces-full", None),
    ("lipstick", "landmarks", None),
    ("skin-smooth", "landmarks", None),
]


def pinned(command):
    return ["taskset", "-c", "0"] + command


def run_seconds(command):
    """CPU time (user + system) of the command: on a shared machine its wall time also counts the time it waited
    for the core, which MediaPipe's per-frame median leaves out."""
    process = subprocess.Popen(pinned(command), stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit("failed: " + " ".join(command))
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vfx", default=".build/release/vfx")
    parser.add_argument("--source", default="media/carphone_pristine.mp4")
    parser.add_argument("--python", default=".build/venv-mediapipe/bin/python")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    clip, out = "/dev/shm/vfx-effects-720p.y4m", "/dev/shm/vfx-effects-out.y4m"
    # The clip played three times (360 frames): start-up costs (loading, linking) weigh as in a short call.
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-stream_loop", "2", "-i", options.source, "-vf", "scale=1280:720", "-pix_fmt", "yuv420p",
                    "-f", "yuv4mpegpipe", clip], check=True)
    frames = int(subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                 "stream=nb_read_frames", "-of", "csv=p=0", clip], check=True, capture_output=True).stdout)
    apply = [options.vfx, "apply", clip, "-o", out, "--threads", "1", "--quiet"]
    best = {}
    analyses = sorted({analysis for _, analysis, _ in EFFECTS})
    for _ in range(options.rounds):
        passthrough = run_seconds(apply)
        best["pass"] = min(best.get("pass", 1e9), passthrough)
        for chain, _, _ in EFFECTS:
            seconds = run_seconds(apply + ["--filter", chain]) - passthrough
            best[chain] = min(best.get(chain, 1e9), seconds * 1000 / frames)
        for analysis in analyses:
            result = subprocess.run(pinned([options.python, "-W", "ignore", "scripts/reference/vision_bench.py", analysis, clip,
                                            "--frames", str(frames)]), check=True, capture_output=True)
            median = json.loads(result.stdout)["median_ms"]
            best["mp:" + analysis] = min(best.get("mp:" + analysis, 1e9), median)
    print("1280×720, %d frames of %s, one core, best of %d alternating rounds; pass-through %.1f ms/frame." %
          (frames, os.path.basename(options.source), options.rounds, best["pass"] * 1000 / frames))
    print()
    print("| effect | VideoFX ms/frame (whole command − pass-through) | MediaPipe analysis | MediaPipe ms/frame | ratio | bound |")
    print("| --- | --- | --- | --- | --- | --- |")
    for chain, analysis, bound in EFFECTS:
        ours, theirs = best[chain], best["mp:" + analysis]
        print("| `%s` | %.2f | %s | %.2f | %.2f× | %s |" % (chain, ours, analysis, theirs, ours / theirs,
                                                          "≤ %.1f×" % bound if bound else ""))


if __name__ == "__main__":
    main()
