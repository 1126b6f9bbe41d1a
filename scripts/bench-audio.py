#!/usr/bin/env python3
"""Times VideoFX's audio filters and whole `vfx apply` runs, and prints the speed tables of docs/audio.md.

The speech is LibriVox's (Debian's pocketsphinx-testdata: five utterances, 0.6 s of silence after each,
27.7 s) at 48 kHz mono 16-bit, as in scripts/reference/measure_noise_suppression.sh.

1. Each chain: `vfx bench --audio-filter CHAIN --input speech.wav --json --repeats N` (one thread, blocks of
   480 frames; CPU and wall time of the filtering thread, best of N; FFmpeg's nearest filter in the same run).
2. Whole runs on the first 20 s: `vfx apply speech20.wav -o OUT --audio-filter CHAIN` to .wav and .m4a, and
   FFmpeg doing the same work (`ffmpeg -threads 1 -i speech20.wav -af GRAPH OUT`) in the same run: CPU time
   (user + system of the process) and wall time, best of N each.

The 1-minute load average is printed beside each table: on a shared machine, compare the columns of one
run, not runs with each other.

    scripts/bench-audio.py [--vfx .build/release/vfx] [--repeats 5] [--only TEXT]

`--only TEXT` keeps the chains that contain TEXT (e.g. `--only rnnoise`: VideoFX's run of RNNoise and the
library's own, side by side).
"""
import argparse, json, os, resource, subprocess, tempfile, time

CHAINS = [
    "noise-suppression:engine=rnnoise", "noise-suppression:engine=rnnoise-library", "noise-suppression:engine=spectral", "gain:db=-6", "agc:target=-20",
    "high-pass:frequency=100", "echo:delay=250:decay=0.4", "pitch:semitones=5", "robot:pitch-shift=-3:frequency=50",
]
WHOLE = [("gain:db=-6", "volume=-6dB"), ("noise-suppression:engine=spectral", "afftdn"),
         ("noise-suppression:engine=rnnoise", "afftdn"), ("noise-suppression:engine=rnnoise-library", "afftdn"),
         ("pitch:semitones=5", None)]


def run(command):
    """CPU seconds (user + system of the child) and wall seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def best(command, repeats):
    results = [run(command) for _ in range(repeats)]
    return min(r[0] for r in results), min(r[1] for r in results)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vfx", default=".build/release/vfx")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="keep only the chains that contain this text")
    options = parser.parse_args()
    work = tempfile.mkdtemp()
    gap = os.path.join(work, "gap.wav")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "0.6", "-c:a", "pcm_s16le", gap],
                   check=True)
    folder = "/usr/share/pocketsphinx/test/data/librivox"
    with open(os.path.join(work, "list.txt"), "w") as f:
        for name in sorted(os.listdir(folder)):
            if name.endswith(".wav"):
                f.write(f"file '{os.path.join(folder, name)}'\nfile '{gap}'\n")
    speech = os.path.join(work, "speech.wav")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "concat", "-safe", "0", "-i", os.path.join(work, "list.txt"), "-ar", "48000",
                    "-ac", "1", "-c:a", "pcm_s16le", speech], check=True)
    speech20 = os.path.join(work, "speech20.wav")
    subprocess.run(["ffmpeg", "-v", "error", "-i", speech, "-t", "20", speech20], check=True)

    print(f"Filters alone ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f} at the start):\n")
    print("| chain | CPU time | × real time (CPU) | × real time (wall) | latency | FFmpeg (its nearest filter, CPU) | load |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for chain in [c for c in CHAINS if options.only in c]:
        output = subprocess.run([options.vfx, "bench", "--audio-filter", chain, "--input", speech, "--json",
                                 "--repeats", str(options.repeats)], check=True, capture_output=True, text=True).stdout
        r = json.loads(output)
        ffmpeg = f"{r['ffmpeg_realtime']:,.0f}× (`{r['ffmpeg_graph']}`)" if r.get("ffmpeg_realtime") else "—"
        print(f"| `{r['chain']}` | {r['vfx_seconds']:.4f} s | {r['vfx_realtime']:,.0f}× | {r['vfx_wall_realtime']:,.0f}× | "
              f"{r['latency_ms']:.1f} ms | {ffmpeg} | {r.get('load_average', 0):.1f} |")

    print(f"\nWhole runs on 20 s of speech (load average {os.getloadavg()[0]:.1f} at the start):\n")
    print("| chain | output | vfx apply CPU | × (CPU) | × (wall) | FFmpeg CPU | FFmpeg × (CPU) | FFmpeg × (wall) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for chain, graph in [w for w in WHOLE if options.only in w[0]]:
        for extension in ["wav", "m4a"]:
            out = os.path.join(work, "out." + extension)
            cpu, wall = best([options.vfx, "apply", speech20, "-o", out, "-y", "--quiet", "--audio-filter", chain], options.repeats)
            row = f"| `{chain}` | .{extension} | {cpu:.2f} s | {20 / cpu:.0f}× | {20 / wall:.0f}× |"
            if graph:
                codec = ["-c:a", "aac", "-b:a", "64k", "-aac_coder", "fast"] if extension == "m4a" else []
                fcpu, fwall = best(["ffmpeg", "-v", "error", "-y", "-threads", "1", "-i", speech20, "-af", graph] + codec + [out],
                                   options.repeats)
                row += f" {fcpu:.2f} s | {20 / fcpu:.0f}× | {20 / fwall:.0f}× (`{graph}`) |"
            else:
                row += " — | — | — |"
            print(row)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
