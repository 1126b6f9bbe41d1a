#!/usr/bin/env python3
"""Latency of `vfx live - -o -` measured from outside, as a call app sees it.

y4m frames are written into `vfx live - -o - --filter CHAIN` at the frame rate (each on its due time, from
a thread of this program) and read back from its standard output. Every input frame carries its number in
a bar code across its top rows (two calibration blocks, one white and one black, then 14 bits), large
enough to survive the chain (colour changes, a background blur), so each output frame is identified:
a frame missing from the output is lost, a number lower than the one before is out of order. Latency is
(the moment a frame was read back in full) - (the moment its write returned), and also from the moment its
write started (an upper bound: it includes the time the frame takes to cross the pipe). The picture under the bar
code is a photo of a person (media/grace_hopper.jpg, scaled), so segmentation has someone to find.

Prints, per run and over all runs, p50/p95/p99/max of the latency, frames lost and out of order, and
what `vfx live --stats-json` itself counted (frames in, out, drops, its own capture-to-sink latency),
with the load average (`uptime`) before and after each run: the machine is shared, and the numbers
depend on how much of a core the chain gets. `--priority raised` (the default) runs vfx live's threads and
this program's writer and reader in the round-robin real-time class (else at nice -10), as a call app's media
threads would run; `normal` runs all of them as ordinary programs.

    scripts/bench-live.py --filter "color-controls:saturation=1.2:contrast=1.1,exposure:ev=0.3,hue:angle=20,sepia:intensity=0.5"
    scripts/bench-live.py --filter background-blur --runs 3 --seconds 10
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCKS = 16          # two calibration blocks, then 14 bits of the frame number
CODE_ROWS = 160


def load_average():
    with open("/proc/loadavg") as handle:
        return handle.read().split()[0]


def base_frame(image, width, height):
    """The photo as one I420 frame of width x height (FFmpeg scales it)."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", image, "-vf", f"scale={width}:{height},setsar=1",
                          "-frames:v", "1", "-pix_fmt", "yuv420p", "-f", "rawvideo", "-"],
                         check=True, stdout=subprocess.PIPE).stdout
    expected = width * height * 3 // 2
    if len(raw) != expected:
        sys.exit(f"bench-live: {image}: FFmpeg gave {len(raw)} bytes, expected {expected}")
    return raw


class Stamper:
    """`base` with a frame number as a bar code in the luma of its top rows (the chroma there neutral)."""

    def __init__(self, base, width, height):
        self.width = width
        chroma_width, u_plane = width // 2, width * height
        v_plane = u_plane + u_plane // 4
        neutral = b"\x80" * (chroma_width * CODE_ROWS // 2)
        self.rest = b"".join([base[CODE_ROWS * width:u_plane], neutral, base[u_plane + len(neutral):v_plane],
                              neutral, base[v_plane + len(neutral):]])

    def parts(self, index):
        """The y4m frame record as two pieces to write with one writev (no copy of the constant part)."""
        block = self.width // BLOCKS
        values = [235, 16] + [235 if (index >> bit) & 1 else 16 for bit in range(BLOCKS - 2)]
        row = b"".join(bytes([value]) * block for value in values).ljust(self.width, b"\x10")
        return [memoryview(b"FRAME\n" + row * CODE_ROWS), memoryview(self.rest)]


def decode(frame, width):
    """The frame number in the bar code (the mean of a 20x20 patch at each block's centre) of a frame's top rows."""
    block = width // BLOCKS
    means = []
    for index in range(BLOCKS):
        x = index * block + block // 2 - 10
        total = 0
        for y in range(CODE_ROWS // 2 - 10, CODE_ROWS // 2 + 10):
            total += sum(frame[y * width + x:y * width + x + 20])
        means.append(total / 400)
    threshold = (means[0] + means[1]) / 2
    return sum(1 << bit for bit in range(BLOCKS - 2) if means[bit + 2] > threshold)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(len(ordered) * fraction + 0.999999) - 1))]


def raise_priority(priority):
    """For `raised`, runs the calling thread as vfx live runs its own: round-robin real-time priority 10, else
    nice -10, where the system allows."""
    if priority != "raised":
        return True
    try:
        os.sched_setscheduler(threading.get_native_id(), os.SCHED_RR, os.sched_param(10))
        return True
    except OSError:
        pass
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), -10)
        return True
    except OSError:
        return False


def lower_priority():
    """The calling thread back to the ordinary class."""
    try:
        os.sched_setscheduler(threading.get_native_id(), os.SCHED_OTHER, os.sched_param(0))
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 0)
    except OSError:
        pass


def run_once(vfx, chain, base, width, height, rate, count, priority):
    frame_bytes = width * height * 3 // 2
    stats_path = tempfile.mktemp(suffix=".jsonl", prefix="bench-live-")
    command = [vfx, "live", "-", "-o", "-", "--stats-json", stats_path, "--priority", priority] + (["--filter", chain] if chain else [])
    load_before = load_average()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    written, started = [None] * count, [None] * count
    errors = []

    def writer():
        raise_priority(priority)
        fd = process.stdin.fileno()
        try:
            os.write(fd, f"YUV4MPEG2 W{width} H{height} F{rate}:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n".encode())
            stamper = Stamper(base, width, height)
            parts = stamper.parts(0)
            start = time.monotonic() + 0.5   # let the program start
            for k in range(count):
                due = start + k / rate
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                started[k] = time.monotonic()
                while parts:
                    done = os.writev(fd, parts)
                    while parts and done >= len(parts[0]):
                        done -= len(parts[0])
                        parts.pop(0)
                    if parts:
                        parts[0] = parts[0][done:]
                written[k] = time.monotonic()
                if k + 1 < count:
                    parts = stamper.parts(k + 1)
        except OSError as error:
            errors.append(f"writing: {error}")
        finally:
            process.stdin.close()

    def drain_errors():
        errors.append(process.stderr.read().decode(errors="replace"))

    thread = threading.Thread(target=writer)
    error_thread = threading.Thread(target=drain_errors)
    thread.start()
    error_thread.start()
    raise_priority(priority)   # this thread reads the output, as the call app's consumer would
    out = process.stdout.fileno()
    codes = []   # (the bar code's rows, time read)
    header = b""
    while not header.endswith(b"\n"):
        byte = os.read(out, 1)
        if not byte:
            break
        header += byte
    record = bytearray(6 + frame_bytes)
    view = memoryview(record)
    while header:
        filled = 0
        while filled < len(record):
            got = os.readv(out, [view[filled:]])
            if got == 0:
                break
            filled += got
        if filled < len(record):
            break
        at = time.monotonic()
        # Only the bar code's rows are kept, decoded after the run: the reader holds Python's lock for as
        # short a time as it can, so the writer thread's time stamps are not delayed by it.
        codes.append((bytes(view[6:6 + CODE_ROWS * width]), at))
    thread.join()
    process.wait()
    lower_priority()
    received = [(decode(rows, width), at) for rows, at in codes]   # (frame number, time read)
    error_thread.join()
    load_after = load_average()
    final = {}
    try:
        with open(stats_path) as handle:
            lines = [json.loads(line) for line in handle if line.strip()]
        final = lines[-1] if lines else {}
        os.unlink(stats_path)
    except (OSError, ValueError):
        pass
    numbers = [number for number, _ in received]
    out_of_order = sum(1 for a, b in zip(numbers, numbers[1:]) if b <= a)
    seen = set(numbers)
    lost = sum(1 for k in range(count) if k not in seen)
    latencies = [(at - written[number]) * 1000 for number, at in received if number < count and written[number] is not None]
    return {
        "status": process.returncode, "stderr": "".join(errors).strip(), "written": count, "read": len(received),
        "lost": lost, "out_of_order": out_of_order, "latencies": latencies,
        "from_write_start": [(at - started[number]) * 1000 for number, at in received if number < count and started[number] is not None],
        "load": (load_before, load_after), "vfx": final,
    }


def summary(values):
    if not values:
        return "no frames"
    return "p50 %.1f  p95 %.1f  p99 %.1f  max %.1f ms" % (percentile(values, 0.5), percentile(values, 0.95),
                                                            percentile(values, 0.99), max(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--filter", default="color-controls:saturation=1.2:contrast=1.1,exposure:ev=0.3,hue:angle=20,sepia:intensity=0.5")
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--rate", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--image", default=os.path.join(REPO, "media", "grace_hopper.jpg"))
    parser.add_argument("--vfx", default=None, help="the vfx binary (default: .build/release/vfx)")
    parser.add_argument("--priority", choices=["raised", "normal"], default="raised",
                        help="vfx live's --priority, and the same for this program's writer and reader threads")
    arguments = parser.parse_args()
    width, height = (int(part) for part in arguments.size.lower().split("x"))
    vfx = arguments.vfx or os.path.join(REPO, ".build", "release", "vfx")
    if not os.access(vfx, os.X_OK):
        sys.exit(f"bench-live: {vfx}: no vfx binary (swift build -c release)")
    count = int(arguments.seconds * arguments.rate)
    if count >= 1 << (BLOCKS - 2):
        sys.exit(f"bench-live: at most {(1 << (BLOCKS - 2)) - 1} frames")
    base = base_frame(arguments.image, width, height)
    if arguments.priority == "raised" and not raise_priority("raised"):
        print("bench-live: the system refuses a raised priority: the threads run at the normal one")
    lower_priority()
    print(f"vfx live - -o - --filter '{arguments.filter}': {width}x{height} at {arguments.rate} fps, "
          f"{count} frames per run, {arguments.runs} runs, {os.cpu_count()} cores, priority {arguments.priority}")
    every, starts, failures = [], [], 0
    for run in range(arguments.runs):
        result = run_once(vfx, arguments.filter, base, width, height, arguments.rate, count, arguments.priority)
        every.extend(result["latencies"])
        stats = result["vfx"]
        own = stats.get("latency_ms", {})
        line = (f"run {run + 1}: load {result['load'][0]} -> {result['load'][1]}; {result['read']} of {result['written']} back, "
                f"lost {result['lost']}, out of order {result['out_of_order']}; latency {summary(result['latencies'])}")
        line += (f"; vfx: in {stats.get('frames_in')}, out {stats.get('frames_out')}, drops {stats.get('drops')}, "
                 f"capture->sink p50 {own.get('p50')} p99 {own.get('p99')} ms")
        process = stats.get("stages", {}).get("process", {})
        if process:
            line += f", chain p50 {process.get('p50')} p99 {process.get('p99')} ms"
        print(line, flush=True)
        print(f"       from the write's start (includes the time the frame takes to cross the pipe): "
              f"{summary(result['from_write_start'])}", flush=True)
        starts.extend(result["from_write_start"])
        if result["status"] != 0:
            failures += 1
            print(f"  vfx exited {result['status']}: {result['stderr'][-400:]}")
        if result["lost"] or result["out_of_order"]:
            failures += 1
    print(f"all runs: latency {summary(every)} from the write's return to the read's; {summary(starts)} from the write's "
          f"start; the bound is {1000 / arguments.rate:.1f} ms")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
