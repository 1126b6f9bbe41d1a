#!/usr/bin/env python3
"""Times VideoFX's filters against FFmpeg's equivalents and prints the Markdown table of docs/performance-filters.md.

Each row runs `vfx bench --filter CHAIN --input CLIP --json` (both sides on the same y4m clip in /dev/shm, in the
same run; see Sources/VFXBench/FilterBenchmark.swift for what is timed).

    scripts/bench-filters.py [--vfx .build/release/vfx] [--source media/bigbuckbunny.mp4] [--frames 60]
"""
import argparse, json, math, os, subprocess, sys

CHAINS = [
    "sepia", "mono", "invert", "tint", "hue:angle=40", "color-controls:contrast=1.2:saturation=1.3", "gamma:power=0.8",
    "brightness:amount=0.1", "thermal", "lut:file={cube}", "gaussian-blur:radius=5", "gaussian-blur:radius=20",
    "vignette", "sepia,gaussian-blur:radius=5,vignette",
]
SIZES = [(1280, 720), (1920, 1080)]
THREADS = [1, 2]


def write_cube(path, n=33):
    with open(path, "w") as f:
        f.write('TITLE "benchmark grade"\nLUT_3D_SIZE %d\n' % n)
        for b in range(n):
            for g in range(n):
                for r in range(n):
                    x, y, z = r / (n - 1), g / (n - 1), b / (n - 1)
                    f.write("%.6f %.6f %.6f\n" % (0.9 * x ** 1.2 + 0.1 * y, 0.95 * y ** 0.8 + 0.05 * z,
                                                  0.5 + 0.45 * math.sin(math.pi * (z - 0.5)) * (0.8 + 0.2 * x)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vfx", default=".build/release/vfx")
    parser.add_argument("--source", default="media/bigbuckbunny.mp4")
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    cube = "/dev/shm/vfx-bench-grade.cube"
    write_cube(cube)
    print("| chain | size | threads | vfx ms/frame | FFmpeg ms/frame (beyond floor) | ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for width, height in SIZES:
        clip = "/dev/shm/vfx-bench-%dx%d.y4m" % (width, height)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", options.source, "-vf", "scale=%d:%d" % (width, height),
                        "-frames:v", str(options.frames), "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", clip], check=True)
        for chain in CHAINS:
            chain = chain.format(cube=cube)
            for threads in THREADS:
                out = subprocess.run([options.vfx, "bench", "--filter", chain, "--input", clip, "--frames",
                                      str(options.frames), "--threads", str(threads), "--repeats", str(options.repeats),
                                      "--json"], capture_output=True, text=True)
                if out.returncode != 0:
                    print("| `%s` | %dp | %d | error: %s | | |" % (chain, height, threads, out.stderr.strip()))
                    continue
                r = json.loads(out.stdout)
                vfx = 1000 * r["processingSeconds"] / r["frames"]
                ffmpeg = 1000 * (r["ffmpegSeconds"] - r["floorSeconds"]) / r["frames"] if r.get("ffmpegSeconds") else None
                ratio = r.get("ratio")
                shown = chain.replace(cube, "grade33.cube")
                print("| `%s` | %dp | %d | %.2f | %s | %s |" % (
                    shown, height, threads, vfx, "%.2f" % ffmpeg if ffmpeg is not None else "—",
                    "%.1f×" % ratio if ratio is not None and ratio > 0 else "—"), flush=True)
        os.remove(clip)
    os.remove(cube)


if __name__ == "__main__":
    sys.exit(main())
