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

Clips: the sample clips in media/ (street footage, a talking head, CGI), plus two that the filters were never
tuned on, taken from Debian's opencv-doc package when it is installed (`apt-get install opencv-doc`): vtest
(a street seen from a fixed camera, 768x576) and Megamind (animated talking heads, 720x528, CGI). The longer
clips are cut to 120 frames so FFmpeg's nlmeans (about 2 fps at these sizes) finishes in minutes.

`--check` compares the numbers with issue 11's targets, prints one line per target and exits 1 when one is missed
(the same lines go into the Markdown as the "Against issue 11's targets" table).

Run from the repository root after `swift build -c release`:
    .build/venv-mediapipe/bin/python scripts/quality-temporal.py [--vfx .build/release/vfx] [--markdown docs/quality.md]
        [--check] [--clips bikes,carphone]
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
OPENCV_DATA = "/usr/share/doc/opencv-doc/examples/data"
CLIPS = {  # name: (file, kind, start in seconds, frames at most or None for all)
    "bikes": ("media/bikes.mp4", "street", 0, None),
    "carphone": ("media/carphone_pristine.mp4", "talking head", 0, None),
    "bigbuckbunny": ("media/bigbuckbunny.mp4", "CGI 720p", 0, None),
    "vtest": (f"{OPENCV_DATA}/vtest.avi", "street, fixed camera (opencv-doc)", 0, 120),
    "megamind": (f"{OPENCV_DATA}/Megamind.avi", "CGI talking heads (opencv-doc)", 1, 120),
}
# Issue 11's bounds: denoise within 0.5 dB of nlmeans' best, interpolation at or above minterpolate mci,
# super resolution 0.3 dB above Lanczos; speeds in output frames per second at 720p on one thread.
DENOISE_MARGIN, SR_GAIN = -0.5, 0.3
SPEED_TARGETS = {"temporal-denoise": 100, "interpolate": 60, "super-resolution": 60}


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


def filter_fps(command, floor_command, frames, repeats=3):
    """Frames per CPU-second of the filtering alone: the command's CPU time minus that of the same command
    without the filter (decoding, encoding, files), each the best of `repeats`."""
    work = min(cpu_seconds(command) for _ in range(repeats)) - min(cpu_seconds(floor_command) for _ in range(repeats))
    return frames / max(work, 1e-6)


def speed_row(vfx, work, chain, clip, graph, output_frames):
    """(VideoFX fps, FFmpeg fps) of output frames per CPU-second, one filter thread each, best of three."""
    out = os.path.join(work, "speed.y4m")
    ours = filter_fps([vfx, "apply", "-y", clip, "-o", out, "--filter", chain, "--threads", "1", "--quiet"],
                      [vfx, "apply", "-y", clip, "-o", out, "--threads", "1", "--quiet"], output_frames)
    base = ["ffmpeg", "-nostdin", "-y", "-v", "error", "-threads", "1", "-filter_threads", "1", "-i", clip]
    theirs = filter_fps(base + ["-vf", graph, "-f", "yuv4mpegpipe", out], base + ["-f", "yuv4mpegpipe", out], output_frames)
    return ours, theirs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vfx", default=os.path.join(ROOT, ".build/release/vfx"))
    parser.add_argument("--markdown", help="write the tables into this file between the generated markers")
    parser.add_argument("--skip-speed", action="store_true", help="only the quality tables")
    parser.add_argument("--only-speed", action="store_true", help="only the speed table")
    parser.add_argument("--check", action="store_true", help="compare with issue 11's targets; exit 1 when one is missed")
    parser.add_argument("--clips", help="comma-separated clip names (default: every clip present)")
    parser.add_argument("--frames", type=int, help="at most this many frames of each clip")
    parser.add_argument("--section", default="quality",
                        help="name of the Markdown markers the quality tables go between (default: quality)")
    options = parser.parse_args()
    names = options.clips.split(",") if options.clips else list(CLIPS)
    unknown = [name for name in names if name not in CLIPS]
    if unknown:
        sys.exit(f"quality-temporal: unknown clip {', '.join(unknown)} (known: {', '.join(CLIPS)})")
    present = []
    for name in names:
        path = CLIPS[name][0]
        if os.path.exists(os.path.join(ROOT, path)):
            present.append(name)
        else:
            print(f"quality-temporal: {path} is missing: {name} left out (apt-get install opencv-doc brings it)", file=sys.stderr)
    work = tempfile.mkdtemp(prefix="vfx-quality-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    sections = {options.section: [], "speed": []}
    results = Results()
    try:
        clean = {}
        wanted = set(present) | ({"bigbuckbunny"} if not options.skip_speed else set())
        for name in wanted:
            path, _, start, frames = CLIPS[name]
            clean[name] = os.path.join(work, f"{name}.y4m")
            cut = (["-ss", str(start)] if start else []) + ["-i", os.path.join(ROOT, path)]
            frames = min(frames or options.frames or 1 << 30, options.frames or 1 << 30)
            cut += ["-frames:v", str(frames)] if frames < 1 << 30 else []
            ffmpeg(*cut, "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", clean[name])

        for section, lines in sections.items():
            if (section != "speed" and options.only_speed) or (section == "speed" and options.skip_speed):
                continue
            say = lambda text="", lines=lines: (print(text, flush=True), lines.append(text))
            if section != "speed":
                quality_tables(options, work, clean, present, say, results)
            else:
                speed_table(options, work, clean, say, results)
            targets_table(say, results, section)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_markdown(options, sections)
    if options.check and results.missed:
        sys.exit(f"quality-temporal: {results.missed} target(s) missed")


class Results:
    """What the run measured, for the targets table: PSNR-Y by (effect, clip[, sigma]) and fps by filter."""
    def __init__(self):
        self.denoise = {}        # (clip, sigma) -> (ours, nlmeans best)
        self.interpolate = {}    # clip -> (ours, mci)
        self.upscale = {}        # clip -> (ours, lanczos)
        self.speed = {}          # filter name -> fps
        self.missed = 0


def quality_tables(options, work, clean, names, say, results):
    say("### Temporal noise filter: PSNR-Y / SSIM-Y against the clean clip")
    say()
    say("| clip | σ | noisy input | **temporal-denoise** (auto) | nlmeans (best s) | hqdn3d (best) | atadenoise (best) |")
    say("| --- | --- | --- | --- | --- | --- | --- |")
    strengths = {10: (6, 8, 10), 20: (12, 15, 18)}
    hqdn3d = {10: (8, 12, 16), 20: (16, 24, 32)}
    for name in names:
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
            os.remove(noisy)
            results.denoise[(name, sigma)] = (cells[1][0], cells[2][0][0])
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
    for name in names:
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
        results.interpolate[name] = (cells[0][0], cells[2][0])
        say(f"| {name} | " + " | ".join(f"{p:.2f} / {s:.4f}" for p, s in cells) + " |")
    say()

    # Super resolution.
    say("### Super resolution ×2 (2× area downscale, then back up): PSNR-Y / SSIM-Y against the original")
    say()
    say("| clip | **super-resolution:scale=2** | Lanczos | bicubic |")
    say("| --- | --- | --- | --- |")
    for name in names:
        width, height, _ = probe(clean[name])
        small, up = os.path.join(work, "small.y4m"), os.path.join(work, "up.y4m")
        ffmpeg("-i", clean[name], "-vf", f"scale={width // 2}:{height // 2}:flags=area", "-f", "yuv4mpegpipe", small)
        vfx_apply(options.vfx, small, up, "super-resolution:scale=2")
        cells = [measure(up, clean[name])]
        for flags in ("lanczos", "bicubic"):
            ffmpeg("-i", small, "-vf", f"scale={width}:{height}:flags={flags}", "-f", "yuv4mpegpipe", up)
            cells.append(measure(up, clean[name]))
        results.upscale[name] = (cells[0][0], cells[1][0])
        say(f"| {name} | " + " | ".join(f"{p:.2f} / {s:.4f}" for p, s in cells) + " |")
    say()


def speed_table(options, work, clean, say, results):
    say("### Speed at 1280×720, one thread: output frames per CPU-second of filtering")
    say()
    say("CPU time of `vfx apply … --threads 1` and of `ffmpeg -threads 1 -filter_threads 1` on the same y4m")
    say("clip (Big Buck Bunny, 1280×720, 60 frames; 10 for nlmeans), minus the same command without the filter, best")
    say("of three: the machine is shared, so wall time would measure the other users too.")
    say(f"Load average during the run: {os.getloadavg()[0]:.1f}.")
    say()
    say("| filter | **VideoFX** | FFmpeg | FFmpeg filter |")
    say("| --- | --- | --- | --- |")
    bunny = os.path.join(work, "bunny60.y4m")
    ffmpeg("-i", clean["bigbuckbunny"], "-frames:v", "60", "-f", "yuv4mpegpipe", bunny)
    noisy = os.path.join(work, "bunny-noisy10.y4m")
    add_noise(bunny, noisy, 10, seed=1)
    noisy10 = os.path.join(work, "bunny-noisy10-short.y4m")   # nlmeans runs at about 2 fps: 10 frames suffice
    ffmpeg("-i", noisy, "-frames:v", "10", "-f", "yuv4mpegpipe", noisy10)
    small = os.path.join(work, "bunny-small.y4m")
    ffmpeg("-i", bunny, "-vf", "scale=640:360:flags=area", "-f", "yuv4mpegpipe", small)
    rows = [("temporal-denoise", "temporal-denoise (σ = 10)", "temporal-denoise", noisy10, "nlmeans=s=8", 10, 10),
            ("temporal-denoise", "temporal-denoise (σ = 10)", "temporal-denoise", noisy, "hqdn3d=6", 60, 60),
            ("interpolate", "interpolate:factor=2", "interpolate:factor=2", bunny, "minterpolate=fps=50:mi_mode=mci", 60, 120),
            ("super-resolution", "super-resolution:scale=2 (640×360 → 1280×720)", "super-resolution:scale=2", small,
             "scale=1280:720:flags=lanczos", 60, 60)]
    for name, label, chain, clip, graph, frames, output_frames in rows:
        ours, theirs = speed_row(options.vfx, work, chain, clip, graph, output_frames)
        if frames >= 60:   # the long runs measure the speed for the targets
            results.speed[name] = ours
        say(f"| {label} | {ours:.0f} | {theirs:.1f} | {graph} |")
    say()


def targets_table(say, results, section):
    """Issue 11's targets against this run's numbers (the quality or the speed ones); counts the missed ones."""
    say(f"### Against issue 11's {'speed' if section == 'speed' else 'quality'} targets (this run)")
    say()
    say("| target | clip | measured | met |")
    say("| --- | --- | --- | --- |")
    def row(target, clip, text, met):
        results.missed += 0 if met else 1
        say(f"| {target} | {clip} | {text} | {'yes' if met else '**no**'} |")
    if section != "speed":
        for (name, sigma), (ours, best) in results.denoise.items():
            row(f"temporal-denoise ≥ nlmeans' best {DENOISE_MARGIN:+.1f} dB, σ = {sigma}", name,
                f"{ours:.2f} vs {best:.2f} dB ({ours - best:+.2f})", ours >= best + DENOISE_MARGIN)
        for name, (ours, mci) in results.interpolate.items():
            row("interpolate ≥ minterpolate mci", name, f"{ours:.2f} vs {mci:.2f} dB ({ours - mci:+.2f})", ours >= mci)
        for name, (ours, lanczos) in results.upscale.items():
            row(f"super-resolution:scale=2 ≥ Lanczos + {SR_GAIN} dB", name,
                f"{ours:.2f} vs {lanczos:.2f} dB ({ours - lanczos:+.2f})", ours >= lanczos + SR_GAIN)
    else:
        for name, fps in results.speed.items():
            target = SPEED_TARGETS[name]
            row(f"{name} ≥ {target} fps at 720p, one thread", "bigbuckbunny", f"{fps:.0f} fps", fps >= target)
    say()


def write_markdown(options, sections):
    """Each section that ran replaces the text between its markers (added at the end when missing)."""
    if not options.markdown:
        return
    text = open(options.markdown).read() if os.path.exists(options.markdown) else ""
    for section, lines in sections.items():
        if not lines:
            continue
        begin, end = f"<!-- quality-temporal.py: {section} begin -->", f"<!-- quality-temporal.py: {section} end -->"
        if begin not in text:
            text += f"\n{begin}\n{end}\n"
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + begin + "\n" + "\n".join(lines) + "\n" + end + tail
    with open(options.markdown, "w") as handle:
        handle.write(text)


if __name__ == "__main__":
    main()
