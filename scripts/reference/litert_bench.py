#!/usr/bin/env python3
"""Times LiteRT's default interpreter (XNNPACK) on TFLite models: the other column of bench-neural.sh.

    .build/venv-litert/bin/python scripts/reference/litert_bench.py MODEL.tflite... [--threads N]
        [--runs N] [--warmup N] [--input X.npy]

Prints one JSON object per model and line: {"model", "runtime", "threads", "runs", "median_ms", "p90_ms",
"min_ms"}. Each timed run is one invoke() (inputs already set); warm-up runs are not counted. The input is
--input when given (one tensor, the model's first input), else uniform random numbers in [0, 1).
"""
import argparse
import json
import os
import time

import numpy as np


def percentile(sorted_values, fraction):
    """The nearest-rank percentile of an already sorted list."""
    rank = max(1, int(np.ceil(fraction * len(sorted_values))))
    return sorted_values[rank - 1]


def bench(path, threads, runs, warmup, input_file):
    import ai_edge_litert
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path, num_threads=threads)
    interpreter.allocate_tensors()
    generator = np.random.default_rng(0)
    for index, detail in enumerate(interpreter.get_input_details()):
        if index == 0 and input_file:
            value = np.load(input_file).astype(np.float32)
        else:
            value = generator.random(detail["shape"], dtype=np.float32)
        interpreter.set_tensor(detail["index"], value)
    for _ in range(warmup):
        interpreter.invoke()
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        interpreter.invoke()
        times.append((time.perf_counter_ns() - start) / 1e6)
    times.sort()
    return dict(model=os.path.splitext(os.path.basename(path))[0],
                runtime=f"ai-edge-litert {getattr(ai_edge_litert, '__version__', 'unknown')} (XNNPACK)",
                threads=threads, runs=runs, median_ms=round(percentile(times, 0.5), 4),
                p90_ms=round(percentile(times, 0.9), 4), min_ms=round(times[0], 4))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", metavar="MODEL.tflite")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--input", help="a .npy file for the first input (only with one model)")
    arguments = parser.parse_args()
    if arguments.threads < 1 or arguments.runs < 1 or arguments.warmup < 0:
        parser.error("--threads and --runs must be at least 1, --warmup at least 0")
    if arguments.input and len(arguments.models) != 1:
        parser.error("--input needs exactly one model")
    for path in arguments.models:
        print(json.dumps(bench(path, arguments.threads, arguments.runs, arguments.warmup, arguments.input)),
              flush=True)


if __name__ == "__main__":
    main()
