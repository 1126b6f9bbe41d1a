#!/usr/bin/env python3
"""Trains the filters of VideoFX's `super-resolution` and writes them into
Sources/VFXTemporal/SuperResolutionFilters.swift.

The upscaler (Sources/VFXTemporal/Kernels/EdgeDirectedUpscaler.swift) classifies each low-resolution sample
by the structure tensor of its 3x3 neighbourhood (gradient angle in 8 bins, strength in 3, coherence in 3:
72 classes) and predicts the scale x scale output samples it covers with a linear filter of its 5x5
neighbourhood plus a constant, one filter per class and output phase. The filters here are least-squares
fits that map area-averaged (box-downscaled) images back to the originals, each class regularized toward
the one filter fitted over all classes.

Training material (never the clips the quality tables are measured on): media/astronaut.png and
media/camera.png (scikit-image), matplotlib's grace_hopper.jpg (installed in .build/venv-mediapipe with
mediapipe), and 12 synthetic 384x384 pictures drawn here from a fixed seed (anti-aliased discs, triangles
and lines of random grays, slightly blurred): they teach the filters sharp edges at every angle, which the
three photos alone have too few of.

Run:  .build/venv-mediapipe/bin/python scripts/train-super-resolution.py
Deterministic: the same inputs give the same file.
"""
import base64
import os
import sys

import cv2
import matplotlib
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALES = (2, 3, 4)
ANGLES, STRENGTHS, COHERENCES = 8, 3, 3
STRENGTH_EDGES = (2.0, 6.0)
COHERENCE_EDGES = (0.25, 0.5)
RADIUS = 2
TAPS = (2 * RADIUS + 1) ** 2
CLASSES = ANGLES * STRENGTHS * COHERENCES


def luma_images():
    images = []
    for name in ("astronaut.png", "camera.png"):
        image = cv2.imread(os.path.join(ROOT, "media", name), cv2.IMREAD_GRAYSCALE)
        images.append(image.astype(np.float64))
    hopper = os.path.join(matplotlib.get_data_path(), "sample_data", "grace_hopper.jpg")
    images.append(cv2.imread(hopper, cv2.IMREAD_GRAYSCALE).astype(np.float64))
    return images + synthetic_images(12)


def synthetic_images(count, size=384, seed=0):
    """Pictures of flat shapes with anti-aliased edges: 40 random discs, triangles and lines each."""
    rng = np.random.default_rng(seed)
    images = []
    for _ in range(count):
        image = np.full((size, size, 1), rng.uniform(30, 220), np.uint8)
        for _ in range(40):
            gray = int(rng.uniform(0, 255))
            kind = rng.integers(3)
            if kind == 0:
                centre = (int(rng.uniform(0, size)), int(rng.uniform(0, size)))
                cv2.circle(image, centre, int(rng.uniform(5, 80)), gray, -1, cv2.LINE_AA)
            elif kind == 1:
                corners = rng.uniform(0, size, (3, 2)).astype(np.int32)
                cv2.fillPoly(image, [corners], gray, cv2.LINE_AA)
            else:
                start = tuple(rng.uniform(0, size, 2).astype(int))
                end = tuple(rng.uniform(0, size, 2).astype(int))
                cv2.line(image, start, end, gray, int(rng.uniform(1, 6)), cv2.LINE_AA)
        image = cv2.GaussianBlur(image, (0, 0), rng.uniform(0.3, 1.2))
        images.append(image.astype(np.float64))
    return images


def area_down(image, scale):
    h, w = image.shape[0] // scale * scale, image.shape[1] // scale * scale
    image = image[:h, :w]
    return np.round(image.reshape(h // scale, scale, w // scale, scale).mean(axis=(1, 3))), image


def classes(low):
    """The class of each sample, exactly as the Swift upscaler computes it (in float64 here)."""
    p = np.pad(low, 1, mode="edge")
    gx = (p[1:-1, 2:] - p[1:-1, :-2]) / 2
    gy = (p[2:, 1:-1] - p[:-2, 1:-1]) / 2

    def smooth(a):
        q = np.pad(a, 1, mode="edge")
        rows = q[:-2] + 2 * q[1:-1] + q[2:]
        return (rows[:, :-2] + 2 * rows[:, 1:-1] + rows[:, 2:]) / 16

    xx, yy, xy = smooth(gx * gx), smooth(gy * gy), smooth(gx * gy)
    half_trace = (xx + yy) / 2
    root = np.sqrt(np.maximum(half_trace * half_trace - (xx * yy - xy * xy), 0))
    l1, l2 = half_trace + root, np.maximum(half_trace - root, 0)
    doubled = np.arctan2(2 * xy, xx - yy)                       # twice the gradient angle, -pi..pi
    angle = np.floor((doubled + np.pi) / (2 * np.pi) * ANGLES).astype(int) % ANGLES
    s1, s2 = np.sqrt(l1), np.sqrt(l2)
    strength = np.digitize(s1, STRENGTH_EDGES)
    coherence = np.digitize((s1 - s2) / (s1 + s2 + 1e-6), COHERENCE_EDGES)
    return (angle * STRENGTHS + strength) * COHERENCES + coherence


def patches(low):
    p = np.pad(low, RADIUS, mode="edge")
    h, w = low.shape
    columns = [p[dy:dy + h, dx:dx + w] for dy in range(2 * RADIUS + 1) for dx in range(2 * RADIUS + 1)]
    return np.stack(columns + [np.ones_like(low)], -1).reshape(-1, TAPS + 1)


def train(scale, images):
    phases = scale * scale
    normal = np.zeros((CLASSES, phases, TAPS + 1, TAPS + 1))
    right = np.zeros((CLASSES, phases, TAPS + 1))
    for image in images:
        low, high = area_down(image, scale)
        P, C = patches(low), classes(low).reshape(-1)
        for phase in range(phases):
            dy, dx = divmod(phase, scale)
            target = high[dy::scale, dx::scale].reshape(-1)
            for c in range(CLASSES):
                mask = C == c
                if mask.any():
                    Pm = P[mask]
                    normal[c, phase] += Pm.T @ Pm
                    right[c, phase] += Pm.T @ target[mask]
    weights = np.zeros((CLASSES, TAPS + 1, phases))
    for phase in range(phases):
        overall = np.linalg.solve(normal[:, phase].sum(0) + 1e-3 * np.eye(TAPS + 1), right[:, phase].sum(0))
        for c in range(CLASSES):
            pull = 1e-2 * np.trace(normal[c, phase]) / (TAPS + 1) + 1
            weights[c, :, phase] = np.linalg.solve(normal[c, phase] + pull * np.eye(TAPS + 1),
                                                   right[c, phase] + pull * overall)
    return weights


def main():
    images = luma_images()
    out = ["// Made by scripts/train-super-resolution.py: do not edit (run the script to change it).",
           "// Float32 little-endian, base64: for each class (72), for each of the 26 taps (5x5 row-major, then",
           "// the constant), the scale x scale output phases (row-major).",
           "",
           "enum SuperResolutionFilters {"]
    for scale in SCALES:
        weights = train(scale, images).astype("<f4")
        encoded = base64.b64encode(weights.tobytes()).decode()
        out.append(f"    static let scale{scale} = \"{encoded}\"")
        print(f"scale {scale}: {weights.size} weights", file=sys.stderr)
    out.append("}")
    path = os.path.join(ROOT, "Sources", "VFXTemporal", "SuperResolutionFilters.swift")
    with open(path, "w") as handle:
        handle.write("\n".join(out) + "\n")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
