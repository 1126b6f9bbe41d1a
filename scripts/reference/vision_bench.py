#!/usr/bin/env python3
"""Times MediaPipe's Python solutions per frame, for `vfx bench --vision` (run with .build/venv-mediapipe).

    vision_bench.py faces|faces-full|landmarks|segment|segment-landscape INPUT [--frames N] [--warmup N]

INPUT is decoded once by the ffmpeg command to RGB frames in memory; then each frame goes through the
solution's process() (face_detection model 0 or 1, face_mesh in tracking mode, selfie_segmentation model 0
or 1) and is timed from the decoded frame to the solution's result, twice: wall time (perf_counter) and the
process's CPU time (process_time: every thread of the process, MediaPipe's graph threads included). Prints one
JSON object: {"kind", "frames", "median_ms", "p90_ms" (wall, per frame), "wall_mean_ms", "cpu_mean_ms" (the
timed loop's totals divided by the frames), "mediapipe"}. Run it under `taskset -c 0` for one core.
"""
import json
import subprocess
import sys
import time

import mediapipe as mp
import numpy as np


def decode(path, limit):
    size = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                           "-of", "csv=p=0", path], check=True, capture_output=True).stdout.decode().strip().split(",")
    width, height = int(size[0]), int(size[1])
    data = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-frames:v", str(limit), "-f", "rawvideo",
                           "-pix_fmt", "rgb24", "-"], check=True, capture_output=True).stdout
    count = len(data) // (width * height * 3)
    frames = np.frombuffer(data, dtype=np.uint8)[:count * width * height * 3].reshape(count, height, width, 3)
    return [np.ascontiguousarray(frame) for frame in frames]


def solution(kind):
    if kind in ("faces", "faces-full"):
        return mp.solutions.face_detection.FaceDetection(model_selection=0 if kind == "faces" else 1)
    if kind == "landmarks":
        return mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1)
    return mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0 if kind == "segment" else 1)


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    kind, path = args[0], args[1]
    options = dict(zip(args[2::2], args[3::2]))
    frames = decode(path, int(options.get("--frames", 300)))
    warmup = int(options.get("--warmup", 5))
    times = []
    with solution(kind) as runner:
        for frame in frames[:warmup]:
            runner.process(frame)
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        for frame in frames:
            start = time.perf_counter()
            runner.process(frame)
            times.append((time.perf_counter() - start) * 1000)
        cpu, wall = time.process_time() - cpu_start, time.perf_counter() - wall_start
    times.sort()
    print(json.dumps(dict(kind=kind, frames=len(times), median_ms=times[len(times) // 2],
                          p90_ms=times[min(len(times) - 1, int(len(times) * 0.9))],
                          wall_mean_ms=wall * 1000 / len(times), cpu_mean_ms=cpu * 1000 / len(times), mediapipe=mp.__version__)))


if __name__ == "__main__":
    main()
