#!/usr/bin/env python3
"""Measures every video speed target of the second round, each beside its reference in the same run, and prints
the Markdown table of docs/performance.md ("Quiet-machine check"). Audio targets: scripts/bench-audio.py.

Filter rows: `vfx bench --filter CHAIN --size 1920x1080 --repeats N --json` (one thread; the ratio is FFmpeg's time
beyond its read/write floor over VideoFX's; `copies` is VideoFX's time over a plain copy of the same frames). Rows
whose filters cost well under a millisecond per frame on both sides run 240 frames instead of 60: FFmpeg's time beyond
its floor is then a few tens of milliseconds over the whole clip, and 60 frames leave it inside the floor's noise.
Temporal rows: the same on a noisy 720p clip made from Big Buck Bunny (`noise=alls=20:allf=t`, 60 frames).
Run it on a quiet machine: the load average is printed beside the table.

    scripts/bench-targets.py [--vfx .build/release/vfx] [--repeats 3] [--only SUBSTRING]
"""
import argparse, json, os, subprocess, sys, tempfile

# (chain, input: "1080p" or "noisy720", target as text, check on the result); FAST: chains timed on 240 frames.
FAST = {"hue:angle=40", "color-controls:contrast=1.2:saturation=1.3", "invert",
        "hue:angle=20,color-controls:contrast=1.1:saturation=1.2,invert", "scale:width=1280:height=720", "rotate:angle=90"}
# Filters FFmpeg has no equivalent of: a nearby FFmpeg filter is timed beside them for scale (it does other, cheaper
# work; docs/quality.md compares quality). Their targets are in frames per second.
NEARBY = {"temporal-denoise": "hqdn3d"}
ROWS = [
    ("gaussian-blur:radius=5", "1080p", "≥ 3×", lambda r: r["ratio"] >= 3),
    ("gaussian-blur:radius=20", "1080p", "≥ 3×", lambda r: r["ratio"] >= 3),
    ("gamma:power=0.8", "1080p", "≥ 2×", lambda r: r["ratio"] >= 2),
    ("tone-curve", "1080p", "≥ 2×", lambda r: r["ratio"] >= 2),
    ("sepia", "1080p", "≥ 2×", lambda r: r["ratio"] >= 2),
    ("hue:angle=40", "1080p", "≥ 2×", lambda r: r["ratio"] >= 2),
    ("color-controls:contrast=1.2:saturation=1.3", "1080p", "≥ 2×", lambda r: r["ratio"] >= 2),
    ("invert", "1080p", "≥ 2×", lambda r: r["ratio"] >= 2),
    ("sepia,hue:angle=20,gamma:power=1.2,vignette", "1080p", "≥ 10×", lambda r: r["ratio"] >= 10),
    ("sepia,tint:color=#3366cc:amount=0.3,color-controls:contrast=1.1,vignette", "1080p", "≥ 10×",
     lambda r: r["ratio"] >= 10),
    ("hue:angle=20,color-controls:contrast=1.1:saturation=1.2,invert", "1080p", "≤ 3 copies",
     lambda r: r["copyRatio"] <= 3),
    ("sepia,hue:angle=20,color-controls:contrast=1.1", "1080p", "≤ 3 copies", lambda r: r["copyRatio"] <= 3),
    ("scale:width=1280:height=720", "1080p", "≥ 2×", lambda r: r["ratio"] >= 2),
    ("rotate:angle=90", "1080p", "≥ 2×", lambda r: r["ratio"] >= 2),
    ("temporal-denoise", "noisy720", "≥ 100 fps", lambda r: r["frames"] / r["processingSeconds"] >= 100),
    ("interpolate:factor=2", "noisy720", "≥ 60 output fps", lambda r: 2 * r["frames"] / r["processingSeconds"] >= 60),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vfx", default=".build/release/vfx")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as work:
        noisy = os.path.join(work, "noisy720.y4m")
        subprocess.run(["ffmpeg", "-v", "error", "-i", "media/bigbuckbunny.mp4", "-vf",
                        "scale=1280:720,noise=alls=20:allf=t", "-frames:v", "60", "-pix_fmt", "yuv420p", noisy], check=True)
        load = os.getloadavg()[0]
        print("| what | VideoFX ms/frame | FFmpeg ms/frame beyond the floor | ratio | plain copies | target | met |")
        print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
        for chain, clip, target, check in ROWS:
            if options.only not in chain:
                continue
            source = ["--size", "1920x1080"] if clip == "1080p" else ["--input", noisy]
            if chain in FAST:
                source += ["--frames", "240"]
            if chain in NEARBY:
                source += ["--ffmpeg", NEARBY[chain]]
            run = subprocess.run([options.vfx, "bench", "--filter", chain] + source +
                                 ["--threads", "1", "--repeats", str(options.repeats), "--json"], capture_output=True, text=True)
            if run.returncode != 0:
                print(f"| `{chain}` | error: {run.stderr.strip()} | | | | {target} | no |")
                continue
            r = json.loads(run.stdout)
            ours = 1000 * r["processingSeconds"] / r["frames"]
            theirs = (f"{1000 * (r['ffmpegSeconds'] - r['floorSeconds']) / r['frames']:.2f}"
                      if r.get("ffmpegSeconds") is not None else "—")
            ratio = f"{r['ratio']:.2f}×" if r.get("ratio") is not None else "—"
            where = "" if clip == "1080p" else " (noisy 720p)"
            print(f"| `{chain}`{where} | {ours:.2f} | {theirs} | {ratio} | {r['copyRatio']:.1f} | {target} | "
                  f"{'yes' if check(r) else '**no**'} |", flush=True)
        print(f"\nLoad average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end.")


if __name__ == "__main__":
    sys.exit(main())
