#!/usr/bin/env python3
"""Quality and speed of VideoFX's temporal filters beside FFmpeg's, in one run: the tables of docs/quality.md.

Protocol (issue 11):
- Denoise: i.i.d. Gaussian noise (sigma in 8-bit code values, rounded, clipped; fixed seed) added to Y, U and V
  of a clean clip; PSNR and SSIM of luma against the clean clip. VideoFX's `temporal-denoise` at its automatic
  strength beside FFmpeg's nlmeans (several strengths: the best is kept), hqdn3d and atadenoise.
- Interpolation: every second frame dropped; the kept frames doubled back to the full rate; the made frames
  (odd outputs) against the dropped originals. `interpolate:factor=2` beside minterpolate (blend and mci).
- Super resolution: the clip downscaled 2x with area averaging by FFmpeg, then upscaled back; luma against
  the original. `super-resolution:scale=2` beside FFmpeg's Lanczos (and bicubic).
PSNR and SSIM come from FFmpeg's own psnr and ssim filters (their whole-clip averages: PSNR from the mean
squared error over all frames). Speed: CPU time per output frame of the filtering alone (the command's CPU
time minus the same command's without the filter), one thread each, on Big Buck Bunny at 1280x720.

Run from the repository root after `swift build -c release`:
    .build/venv-mediapipe/bin/python scripts/quality-temporal.py [--vfx .build/release/vfx] [--markdown docs/quality.md]
"""
import argparse
import json
import os
import resource
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIPS = {  # name: (file, kind)
    "bikes": ("media/bikes.mp4", "street"),
    "carphone": ("media/carphone_pristine.mp4", "talking head"),
    "bigbuckbunny": ("media/bigbuckbunny.mp4", "CGI 720p"),
}


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"quality-temporal: {' '.join(command[:3])}… failed:\n{result.stderr[-2000:]}")
    return result


def ffmpeg(*arguments):
    return run(["ffmpeg", "-nostdin", "-y", "-v", "info", *arguments])


def probe(path):
    out = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height,r_frame_rate",
               "-of", "json", path]).stdout
    stream = json.loads(out)["streams"][0]
    return stream["width"], stream["height"], stream["r_frame_rate"]


def measure(output, reference):
    """(PSNR-Y, SSIM-Y) of two y4m clips by FFmpeg's psnr and ssim filters."""
    log = ffmpeg("-i", output, "-i", reference, "-lavfi",
                 "[0]split[a][b];[1]split[c][d];[a][c]psnr;[b][d]ssim", "-f", "null", "-").stderr
    psnr = float(re.search(r"PSNR y:([0-9.inf]+)", log).group(1))
    ssim = float(re.search(r"SSIM Y:([0-9.]+)", log).group(1))
    return psnr, ssim


def add_noise(clean, noisy, sigma, seed):
    """Copies a 4:2:0 y4m clip adding rounded, clipped Gaussian noise to every sample of every frame."""
    with open(clean, "rb") as source:
        data = source.read()
    header_end = data.index(b"\n") + 1
    header = data[:header_end].decode()
    width = int(re.search(r" W(\d+)", header).group(1))
    height = int(re.search(r" H(\d+)", header).group(1))
    frame_bytes = width * height + 2 * ((width + 1) // 2) * ((height + 1) // 2)
    rng = np.random.default_rng(seed)
    out = bytearray(data[:header_end])
    position = header_end
    while position < len(data):
        line_end = data.index(b"\n", position) + 1
        out += data[position:line_end]
        samples = np.frombuffer(data, np.uint8, frame_bytes, line_end).astype(np.float32)
        samples += rng.normal(0, sigma, samples.shape).astype(np.float32)
        out += np.clip(np.round(samples), 0, 255).astype(np.uint8).tobytes()
        position = line_end + frame_bytes
    with open(noisy, "wb") as target:
        target.write(out)


def select(source, target, odd, rate):
    """Every second frame of a y4m clip (the odd or the even ones), at half `rate`."""
    expression = "mod(n\\,2)" if odd else "not(mod(n\\,2))"
    ffmpeg("-i", source, "-vf", f"select='{expression}',setpts=N/(({rate})/2*TB)", "-r", f"({rate})/2",
           "-f", "yuv4mpegpipe", target)


def vfx_apply(vfx, source, target, chain):
    started = time.time()
    run([vfx, "apply", "-y", source, "-o", target, "--filter", chain])
    return time.time() - started


def cpu_seconds(command):
    """User + system CPU time of a command and its threads (the machine may be shared: wall time is not)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(command)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def filter_fps(command, floor_command, frames, repeats=2):
    """Frames per CPU-second of the filtering alone: the command's CPU time minus that of the same command
    without the filter (decoding, encoding, files), best of `repeats`."""
    work = min(cpu_seconds(command) - cpu_seconds(floor_command) for _ in range(repeats))
    return frames / max(work, 1e-6)


def speed_row(vfx, work, label, chain, clip, graph, frames, output_frames):
    """(VideoFX fps, FFmpeg fps) of output frames per CPU-second, one filter thread each."""
    out = os.path.join(work, "speed.y4m")
    ours = filter_fps([vfx, "apply", "-y", clip, "-o", out, "--filter", chain, "--threads", "1", "--quiet"],
                      [vfx, "apply", "-y", clip, "-o", out, "--threads", "1", "--quiet"], output_frames)
    base = ["ffmpeg", "-nostdin", "-y", "-v", "error", "-threads", "1", "-filter_threads", "1", "-i", clip]
    theirs = filter_fps(base + ["-vf", graph, "-f", "yuv4mpegpipe", out], base + ["-f", "yuv4mpegpipe", out], output_frames)
    return f"| {label} | {ours:.0f} | {theirs:.1f} | {graph} |"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vfx", default=os.path.join(ROOT, ".build/release/vfx"))
    parser.add_argument("--markdown", help="write the tables into this file between the generated markers")
    parser.add_argument("--skip-speed", action="store_true", help="only the quality tables")
    parser.add_argument("--only-speed", action="store_true", help="only the speed table")
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="vfx-quality-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    lines = []
    say = lambda text="": (print(text, flush=True), lines.append(text))
    try:
        clean = {}
        for name, (path, _) in CLIPS.items():
            clean[name] = os.path.join(work, f"{name}.y4m")
            ffmpeg("-i", os.path.join(ROOT, path), "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", clean[name])

        if not options.only_speed:
            quality_tables(options, work, clean, say)
        if not options.skip_speed:
            speed_table(options, work, clean, say)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_markdown(options, lines)


def quality_tables(options, work, clean, say):
    say("### Temporal noise filter: PSNR-Y / SSIM-Y against the clean clip")
    say()
    say("| clip | σ | noisy input | **temporal-denoise** (auto) | nlmeans (best s) | hqdn3d (best) | atadenoise (best) |")
    say("| --- | --- | --- | --- | --- | --- | --- |")
    strengths = {10: (6, 8, 10), 20: (12, 15, 18)}
    hqdn3d = {10: (8, 12, 16), 20: (16, 24, 32)}
    for name in ("bikes", "carphone"):
        for sigma in (10, 20):
            noisy = os.path.join(work, f"{name}-noisy{sigma}.y4m")
            add_noise(clean[name], noisy, sigma, seed=sigma)
            cells = [measure(noisy, clean[name])]
            ours = os.path.join(work, "ours.y4m")
            vfx_apply(options.vfx, noisy, ours, "temporal-denoise")
            cells.append(measure(ours, clean[name]))
            for graphs in ([f"nlmeans=s={s}" for s in strengths[sigma]], [f"hqdn3d={s}" for s in hqdn3d[sigma]],
                           ["atadenoise", "atadenoise=s=9:0a=0.1:0b=0.3:1a=0.1:1b=0.3:2a=0.1:2b=0.3"]):
                best = None
                for graph in graphs:
                    theirs = os.path.join(work, "theirs.y4m")
                    ffmpeg("-i", noisy, "-vf", graph, "-f", "yuv4mpegpipe", theirs)
                    score = measure(theirs, clean[name])
                    if best is None or score[0] > best[0][0]:
                        best = (score, graph)
                cells.append(best)
            def show(cell):
                if isinstance(cell[1], str):
                    return f"{cell[0][0]:.2f} / {cell[0][1]:.4f} ({cell[1]})"
                return f"{cell[0]:.2f} / {cell[1]:.4f}"
            say(f"| {name} | {sigma} | " + " | ".join(show(cell) for cell in cells) + " |")
    say()

    # Interpolation.
    say("### Frame interpolation (every second frame dropped and re-made): PSNR-Y / SSIM-Y of the made frames")
    say()
    say("| clip | **interpolate:factor=2** | minterpolate blend | minterpolate mci |")
    say("| --- | --- | --- | --- |")
    for name in ("bikes", "carphone"):
        _, _, rate = probe(clean[name])
        kept, dropped = os.path.join(work, "kept.y4m"), os.path.join(work, "dropped.y4m")
        select(clean[name], kept, False, rate)
        select(clean[name], dropped, True, rate)
        cells = []
        doubled, made = os.path.join(work, "doubled.y4m"), os.path.join(work, "made.y4m")
        vfx_apply(options.vfx, kept, doubled, "interpolate:factor=2")
        select(doubled, made, True, rate)
        cells.append(measure(made, dropped))
        for mode in ("blend", "mci"):
            ffmpeg("-i", kept, "-vf", f"minterpolate=fps={rate}:mi_mode={mode}", "-f", "yuv4mpegpipe", doubled)
            select(doubled, made, True, rate)
            cells.append(measure(made, dropped))
        say(f"| {name} | " + " | ".join(f"{p:.2f} / {s:.4f}" for p, s in cells) + " |")
    say()

    # Super resolution.
    say("### Super resolution ×2 (2× area downscale, then back up): PSNR-Y / SSIM-Y against the original")
    say()
    say("| clip | **super-resolution:scale=2** | Lanczos | bicubic |")
    say("| --- | --- | --- | --- |")
    for name in ("bikes", "bigbuckbunny", "carphone"):
        width, height, _ = probe(clean[name])
        small, up = os.path.join(work, "small.y4m"), os.path.join(work, "up.y4m")
        ffmpeg("-i", clean[name], "-vf", f"scale={width // 2}:{height // 2}:flags=area", "-f", "yuv4mpegpipe", small)
        vfx_apply(options.vfx, small, up, "super-resolution:scale=2")
        cells = [measure(up, clean[name])]
        for flags in ("lanczos", "bicubic"):
            ffmpeg("-i", small, "-vf", f"scale={width}:{height}:flags={flags}", "-f", "yuv4mpegpipe", up)
            cells.append(measure(up, clean[name]))
        say(f"| {name} | " + " | ".join(f"{p:.2f} / {s:.4f}" for p, s in cells) + " |")
    say()



def speed_table(options, work, clean, say):
    say("### Speed at 1280×720, one thread: output frames per CPU-second of filtering")
    say()
    say("CPU time of `vfx apply … --threads 1` and of `ffmpeg -threads 1 -filter_threads 1` on the same y4m")
    say("clip (Big Buck Bunny, 1280×720, 60 frames; 10 for nlmeans), minus the same command without the filter: the machine is")
    say("shared, so wall time would measure the other users too.")
    say()
    say("| filter | **VideoFX** | FFmpeg | FFmpeg filter |")
    say("| --- | --- | --- | --- |")
    bunny = os.path.join(work, "bunny60.y4m")
    ffmpeg("-i", clean["bigbuckbunny"], "-frames:v", "60", "-f", "yuv4mpegpipe", bunny)
    noisy = os.path.join(work, "bunny-noisy10.y4m")
    add_noise(bunny, noisy, 10, seed=1)
    noisy10 = os.path.join(work, "bunny-noisy10-short.y4m")   # nlmeans runs at about 2 fps: 10 frames suffice
    ffmpeg("-i", noisy, "-frames:v", "10", "-f", "yuv4mpegpipe", noisy10)
    say(speed_row(options.vfx, work, "temporal-denoise (σ = 10)", "temporal-denoise", noisy10, "nlmeans=s=8", 10, 10))
    say(speed_row(options.vfx, work, "temporal-denoise (σ = 10)", "temporal-denoise", noisy, "hqdn3d=6", 60, 60))
    say(speed_row(options.vfx, work, "interpolate:factor=2", "interpolate:factor=2", bunny,
                  "minterpolate=fps=50:mi_mode=mci", 60, 120))
    small = os.path.join(work, "bunny-small.y4m")
    ffmpeg("-i", bunny, "-vf", "scale=640:360:flags=area", "-f", "yuv4mpegpipe", small)
    say(speed_row(options.vfx, work, "super-resolution:scale=2 (640×360 → 1280×720)", "super-resolution:scale=2",
                  small, "scale=1280:720:flags=lanczos", 60, 60))
    say()


def write_markdown(options, lines):
    if options.markdown:
        begin, end = "<!-- quality-temporal.py: begin -->", "<!-- quality-temporal.py: end -->"
        if options.only_speed or options.skip_speed:
            begin, end = (begin.replace(":", ": speed") if options.only_speed else begin.replace(":", ": quality"),
                          end.replace(":", ": speed") if options.only_speed else end.replace(":", ": quality"))
        text = open(options.markdown).read() if os.path.exists(options.markdown) else ""
        if begin not in text:
            text += f"\n{begin}\n{end}\n"
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        with open(options.markdown, "w") as handle:
            handle.write(head + begin + "\n" + "\n".join(lines) + "\n" + end + tail)


if __name__ == "__main__":
    main()
