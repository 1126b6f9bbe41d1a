#!/usr/bin/env python3
"""The issue's "Done when" checks of the AI effects, on any photos and clips (run with .build/venv-mediapipe):
the material the tests use is not the only material the effects must work on.

    .build/venv-mediapipe/bin/python scripts/check-effects.py [--vfx .build/release/vfx] PICTURE_OR_CLIP...

A clip is checked on up to --frames of its frames (one per second) as separate pictures. For each picture:
- halo: `background-blur:radius=15` against m·I + (1−m)·G(I·(1−m))/G(1−m) (G: Gaussian σ 15, zero outside the
  picture; m: `vfx segment`'s mask of the same picture), mean RGB difference in the 10-px band just outside the
  person (mask < 0.5, within 10 px of mask ≥ 0.5); bound 5. The naive m·I + (1−m)·G(I) is printed beside it.
- stretch: `background-image:file=B:fit=stretch` (B: media/camera.png at 300×200): PSNR where m ≥ 0.9 against
  the input (bound 35 dB) and where m ≤ 0.1 against FFmpeg's bilinear stretch of B (bound 30 dB).
- faces: MediaPipe's short- and full-range detectors on the input and on `face-pixelate` and `face-blur`'s
  outputs: no face found before may be found after (IoU > 0.3).
- nose: `face-sticker` with a magenta disk at anchor=nose, scale=0.3: the disk's centroid within 10 % of the face
  width of MediaPipe's nose tip (pictures with one face found by the short-range model).
- lips / eyes: `lipstick` changes nothing farther than 4 px outside MediaPipe's outer lip outline; `skin-smooth`
  leaves the inside of MediaPipe's eye and lip outlines unchanged (PSNR ≥ 45 dB); pictures with a face mesh.
Every picture is first decoded by VideoFX and written as PNG, so both sides read the same RGB pixels. Checks that
do not apply (no person, no face) are shown as "–". Prints a Markdown table.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import cv2
import mediapipe as mp
import numpy as np

LIPS_OUTER = [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 409, 270, 269, 267, 0, 37, 39, 40, 185]
RIGHT_EYE = [33, 246, 161, 160, 159, 158, 157, 173, 133, 155, 154, 153, 145, 144, 163, 7]
LEFT_EYE = [362, 398, 384, 385, 386, 387, 388, 466, 263, 249, 390, 373, 374, 380, 381, 382]


def read_rgb(path):
    image = cv2.imread(path, cv2.IMREAD_COLOR)
    return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)


def vfx(options, *arguments):
    result = subprocess.run([options.vfx, *arguments], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit("vfx %s: %s" % (" ".join(arguments), result.stderr.strip()))


def apply(options, folder, picture, chain, name):
    output = os.path.join(folder, name + ".png")
    vfx(options, "apply", picture, "-o", output, "-y", "--filter", chain, "--quiet")
    return read_rgb(output).astype(np.float64)


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255 ** 2 / mse)


def gaussian(values, sigma):
    return cv2.GaussianBlur(values, (0, 0), sigma, borderType=cv2.BORDER_CONSTANT)


def faces(image):
    found = {}
    for name, model in (("short", 0), ("full", 1)):
        with mp.solutions.face_detection.FaceDetection(model_selection=model) as detector:
            result = detector.process(np.ascontiguousarray(image.astype(np.uint8)))
        found[name] = []
        for detection in result.detections or []:
            box = detection.location_data.relative_bounding_box
            keypoints = [(k.x, k.y) for k in detection.location_data.relative_keypoints]
            found[name].append(((box.xmin, box.ymin, box.width, box.height), keypoints))
    return found


def iou(a, b):
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    overlap = max(x1 - x0, 0) * max(y1 - y0, 0)
    return overlap / (a[2] * a[3] + b[2] * b[3] - overlap)


def check(options, folder, source, disk, background):
    row = {}
    # Every check reads the same RGB pixels: the picture as VideoFX decodes it, written as PNG.
    picture = os.path.join(folder, "input.png")
    vfx(options, "apply", source, "-o", picture, "-y", "--quiet")
    image = read_rgb(picture).astype(np.float64)
    height, width = image.shape[:2]
    mask_path = os.path.join(folder, "mask.png")
    if os.path.exists(mask_path):
        os.remove(mask_path)
    vfx(options, "segment", picture, "-o", mask_path)
    mask = cv2.imread(mask_path, cv2.IMREAD_GRAYSCALE).astype(np.float64) / 255
    person = (mask >= 0.5).astype(np.uint8)
    if person.sum() > 500 and (mask <= 0.1).sum() > 500:
        # halo
        distance = cv2.distanceTransform(1 - person, cv2.DIST_L2, 5)
        band = (person == 0) & (distance <= 10)
        w = 1 - mask
        reference = np.empty_like(image)
        naive = np.empty_like(image)
        norm = gaussian(np.ones_like(w), 15)
        for c in range(3):
            excluded = gaussian(image[:, :, c] * w, 15) / np.maximum(gaussian(w, 15), 1e-9)
            reference[:, :, c] = mask * image[:, :, c] + w * excluded
            naive[:, :, c] = mask * image[:, :, c] + w * gaussian(image[:, :, c], 15) / norm
        ours = apply(options, folder, picture, "background-blur:radius=15", "blur")
        row["halo"] = "%.2f (naive %.1f)" % (np.abs(ours - reference)[band].mean(), np.abs(naive - reference)[band].mean())
        # stretch
        stretched_path = os.path.join(folder, "stretched.png")
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", background, "-vf", "scale=%d:%d:flags=bilinear" % (width, height),
                        "-pix_fmt", "rgb24", stretched_path], check=True)
        stretched = read_rgb(stretched_path)
        output = apply(options, folder, picture, "background-image:file=%s:fit=stretch" % background, "stretch")
        keep, back = mask >= 0.9, mask <= 0.1
        row["stretch"] = "%s / %.1f dB" % ("%.1f" % psnr(output[keep], image[keep]) if keep.any() else "–",
                                            psnr(output[back], stretched[back]))
    before = faces(image)
    found = len(before["short"]) + len(before["full"])
    if found:
        for chain in ("face-pixelate", "face-blur"):
            after = faces(apply(options, folder, picture, chain, chain))
            left = sum(1 for model in ("short", "full") for box, _ in before[model]
                       if any(iou(box, other) > 0.3 for other, _ in after[model]))
            row[chain] = "%d of %d left" % (left, found)
    if len(before["short"]) == 1:
        box, keypoints = before["short"][0]
        output = apply(options, folder, picture, "face-sticker:file=%s:anchor=nose:scale=0.3" % disk, "sticker")
        magenta = (output[:, :, 0] > 180) & (output[:, :, 2] > 180) & (output[:, :, 1] < 90)
        if magenta.any():
            ys, xs = np.nonzero(magenta)
            nose = (keypoints[2][0] * width, keypoints[2][1] * height)
            off = np.hypot(xs.mean() + 0.5 - nose[0], ys.mean() + 0.5 - nose[1]) / (box[2] * width)
            row["nose"] = "%.1f %%" % (100 * off)
        else:
            row["nose"] = "no magenta (gray picture)" if np.ptp(image, axis=2).max() == 0 else "no sticker drawn"
    with mp.solutions.face_mesh.FaceMesh(static_image_mode=True, max_num_faces=1) as mesh:
        result = mesh.process(np.ascontiguousarray(image.astype(np.uint8)))
    if result.multi_face_landmarks:
        points = np.array([(p.x * width, p.y * height) for p in result.multi_face_landmarks[0].landmark])
        def polygon(indices):
            canvas = np.zeros((height, width), np.uint8)
            cv2.fillPoly(canvas, [np.round(points[indices] * 16).astype(np.int32)], 1, shift=4)
            return canvas
        lips = polygon(LIPS_OUTER)
        output = apply(options, folder, picture, "lipstick", "lipstick")
        changed = np.abs(output - image).max(axis=2) > 0
        distance = cv2.distanceTransform(1 - lips, cv2.DIST_L2, 5)
        row["lipstick"] = "%.1f px" % (distance[changed].max() if changed.any() else 0)
        inside = (polygon(RIGHT_EYE) | polygon(LEFT_EYE) | lips).astype(bool)
        output = apply(options, folder, picture, "skin-smooth", "smooth")
        row["skin-smooth"] = "%.1f dB" % psnr(output[inside], image[inside])
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vfx", default=".build/release/vfx")
    parser.add_argument("--frames", type=int, default=4)
    parser.add_argument("inputs", nargs="+")
    options = parser.parse_args()
    columns = ["halo", "stretch", "face-pixelate", "face-blur", "nose", "lipstick", "skin-smooth"]
    print("| picture | halo ≤ 5 | stretch ≥ 35 / 30 dB | face-pixelate: faces left | face-blur: faces left "
          "| sticker to nose ≤ 10 % | lipstick reach ≤ 4 px | skin-smooth eyes+lips ≥ 45 dB |")
    print("| --- |" + " --- |" * len(columns))
    with tempfile.TemporaryDirectory(prefix="vfx-check-") as folder:
        disk = os.path.join(folder, "disk.png")
        yy, xx = np.mgrid[0:64, 0:64]
        alpha = np.clip(30 - np.hypot(xx + 0.5 - 32, yy + 0.5 - 32), 0, 1) * 255
        cv2.imwrite(disk, np.dstack([np.full((64, 64), 255), np.zeros((64, 64)), np.full((64, 64), 255), alpha]).astype(np.uint8))
        background = os.path.join(folder, "background.png")
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", "media/camera.png", "-vf", "scale=300:200", background], check=True)
        for path in options.inputs:
            pictures = [(os.path.basename(path), path)]
            if os.path.splitext(path)[1].lower() in (".mp4", ".avi", ".mkv", ".mov", ".webm", ".y4m"):
                pattern = os.path.join(folder, "frame-%03d.png")
                subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-vf", "fps=1", "-frames:v", str(options.frames),
                                pattern], check=True)
                names = sorted(name for name in os.listdir(folder) if name.startswith("frame-"))
                pictures = [("%s #%d s" % (os.path.basename(path), k), os.path.join(folder, name)) for k, name in enumerate(names)]
            for label, picture in pictures:
                row = check(options, folder, picture, disk, background)
                print("| %s | %s |" % (label, " | ".join(row.get(column, "–") for column in columns)))
                sys.stdout.flush()
            for name in os.listdir(folder):
                if name.startswith("frame-"):
                    os.remove(os.path.join(folder, name))


if __name__ == "__main__":
    main()
