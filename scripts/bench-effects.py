#!/usr/bin/env python3
"""Per-frame cost of the AI effects beside MediaPipe's time for the analysis each needs; prints the Markdown
table of docs/performance.md ("AI effects").

Each effect is timed as a whole command, `vfx apply CLIP -o OUT.y4m --threads 1 --filter EFFECT`, minus the same
command without a filter (pass-through: decode, y4m write, start-up), divided by the frames. MediaPipe's time is
scripts/reference/vision_bench.py (its Python solutions, decoded frames in memory) on the same clip: its timed
loop's totals divided by the frames. Both sides are timed the same two ways: CPU time (user + system of every
thread: what the work costs, whatever else the shared machine runs) and wall time (which also counts waiting
for the core). The ratio that decides is the CPU one: both are means over the same frames, so neither side's
waiting for the core nor a median that drops slow frames favours one of them. Everything is pinned to one core
with taskset, and the two take turns for --rounds rounds; each keeps its best round per measure, so a burst of
load elsewhere does not decide the comparison. The load average (`uptime`) is printed before and after.

    scripts/bench-effects.py [--vfx .build/release/vfx] [--source media/carphone_pristine.mp4] [--rounds 3]
                             [--only face-sticker,face-pixelate]
"""
import argparse, json, os, subprocess, time

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
    """(CPU time (user + system), wall time) of the command, in seconds."""
    start = time.perf_counter()
    process = subprocess.Popen(pinned(command), stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit("failed: " + " ".join(command))
    return usage.ru_utime + usage.ru_stime, wall


def load():
    return open("/proc/loadavg").read().split()[:3]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vfx", default=".build/release/vfx")
    parser.add_argument("--source", default="media/carphone_pristine.mp4")
    parser.add_argument("--python", default=".build/venv-mediapipe/bin/python")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated filter names: only the effects using them")
    options = parser.parse_args()
    names = [name for name in options.only.split(",") if name]
    effects = [effect for effect in EFFECTS if not names or effect[0].split(":")[0] in names]
    load_before = load()
    clip, out = "/dev/shm/vfx-effects-720p.y4m", "/dev/shm/vfx-effects-out.y4m"
    # The clip played three times (360 frames): start-up costs (loading, linking) weigh as in a short call.
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-stream_loop", "2", "-i", options.source, "-vf", "scale=1280:720", "-pix_fmt", "yuv420p",
                    "-f", "yuv4mpegpipe", clip], check=True)
    frames = int(subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                 "stream=nb_read_frames", "-of", "csv=p=0", clip], check=True, capture_output=True).stdout)
    apply = [options.vfx, "apply", clip, "-o", out, "-y", "--threads", "1", "--quiet"]
    best = {}

    def keep(key, cpu, wall):
        old = best.get(key, (1e9, 1e9))
        best[key] = (min(old[0], cpu), min(old[1], wall))

    analyses = sorted({analysis for _, analysis, _ in effects})
    for _ in range(options.rounds):
        passthrough = run_seconds(apply)
        keep("pass", passthrough[0] * 1000 / frames, passthrough[1] * 1000 / frames)
        for chain, _, _ in effects:
            cpu, wall = run_seconds(apply + ["--filter", chain])
            keep(chain, (cpu - passthrough[0]) * 1000 / frames, (wall - passthrough[1]) * 1000 / frames)
        for analysis in analyses:
            result = subprocess.run(pinned([options.python, "-W", "ignore", "scripts/reference/vision_bench.py", analysis, clip,
                                            "--frames", str(frames)]), check=True, capture_output=True)
            timing = json.loads(result.stdout)
            keep("mp:" + analysis, timing["cpu_mean_ms"], timing["wall_mean_ms"])
    print("1280×720, %d frames of %s, one core, best of %d alternating rounds; pass-through %.1f ms/frame CPU, %.1f wall; "
          "load average %s before, %s after." % (frames, os.path.basename(options.source), options.rounds, best["pass"][0],
                                                 best["pass"][1], " ".join(load_before), " ".join(load())))
    print()
    print("| effect | VideoFX CPU ms/frame | MediaPipe analysis | MediaPipe CPU ms/frame | ratio (CPU) | wall: VideoFX / MediaPipe ms | ratio (wall) | bound |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |")
    for chain, analysis, bound in effects:
        ours, theirs = best[chain], best["mp:" + analysis]
        print("| `%s` | %.2f | %s | %.2f | %.2f× | %.2f / %.2f | %.2f× | %s |" % (
            chain, ours[0], analysis, theirs[0], ours[0] / theirs[0], ours[1], theirs[1], ours[1] / theirs[1],
            "≤ %.1f×" % bound if bound else ""))


if __name__ == "__main__":
    main()
