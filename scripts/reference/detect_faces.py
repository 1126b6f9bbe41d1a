#!/usr/bin/env python3
"""MediaPipe's face detection on raw RGB frames, for the face effect tests (run with .build/venv-mediapipe).

    detect_faces.py WIDTH HEIGHT FILE

FILE holds frames of WIDTH x HEIGHT rgb24 pixels one after another. Each frame goes through MediaPipe 0.10.14's
Python face detection, short range (model 0) and full range (model 1). Prints one JSON
object: {"short": [[face, ...] per frame], "full": [...]}, each face {"box": [x, y, w, h], "score": s,
"keypoints": [[x, y] x 6]} in normalized coordinates, origin top-left.
"""
import json
import sys

import mediapipe as mp
import numpy as np


def faces(result):
    found = []
    for detection in result.detections or []:
        data = detection.location_data
        box = data.relative_bounding_box
        found.append(dict(box=[box.xmin, box.ymin, box.width, box.height], score=detection.score[0],
                          keypoints=[[k.x, k.y] for k in data.relative_keypoints]))
    return found


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    width, height, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    data = np.fromfile(path, dtype=np.uint8)
    frames = data.reshape(-1, height, width, 3)
    output = {}
    for name, model in (("short", 0), ("full", 1)):
        # Face detection keeps no state between frames: every frame is judged on its own.
        with mp.solutions.face_detection.FaceDetection(model_selection=model) as detector:
            output[name] = [faces(detector.process(np.ascontiguousarray(frame))) for frame in frames]
    print(json.dumps(output))


if __name__ == "__main__":
    main()
