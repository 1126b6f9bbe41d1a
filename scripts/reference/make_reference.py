#!/usr/bin/env python3
"""Reference tensors for VFXNeural's tests, made from the sample media by independent runtimes.

Two parts, each run with the Python of its own virtual environment (see setup-venvs.sh):

    make_reference.py litert OUT_DIR      LiteRT (XNNPACK, one thread) on the seven models
    make_reference.py mediapipe OUT_DIR   MediaPipe's own Python API on astronaut.png

`litert` writes, for every model in models/, OUT_DIR/<model>/input_0.npy (the input tensor),
OUT_DIR/<model>/output_<index>_<tensor name>.npy (LiteRT's outputs, in the model's output order) and
OUT_DIR/<model>/manifest.json (with the operator counts, parameters and multiply-adds read from the
file); the same for a second picture in OUT_DIR/<model>/camera/; and OUT_DIR/manifest.json listing the
models. The inputs are real pictures: photos and frames of the sample clips, decoded by the ffmpeg
command, cropped, resized with bilinear sampling (pixel centres at +0.5, as MediaPipe's ImageToTensorCalculator does on the CPU),
letterboxed where MediaPipe keeps the aspect ratio (padding is black before normalisation), and scaled
to the range MediaPipe feeds each model: [-1, 1] for the face detectors, [0, 1] for the others.

`litert` also writes OUT_DIR/numpy/: small arrays saved by NumPy itself in every element type and header
version the Swift reader takes, and some it must refuse (see make_numpy_samples).

`mediapipe` writes OUT_DIR/mediapipe/face_detection.json (boxes and key points of both face detectors,
normalised, origin top-left), OUT_DIR/mediapipe/selfie_mask_<n>.npy (the segmentation mask of model
selection n at the image's size) and OUT_DIR/mediapipe/manifest.json.
"""
import hashlib
import json
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEDIA = os.path.join(ROOT, "media")
MODELS = os.path.join(ROOT, "models")

# What each model sees. `crop` is (x, y, width, height) in source pixels (None: the whole picture),
# `fit` keeps the aspect ratio with letterboxing, `range` is MediaPipe's output_tensor_float_range for
# that model's graph. Frames are counted from 0.
INPUTS = {
    "face_detection_short_range": dict(
        source=("carphone_pristine.mp4", 30), crop=None, fit=True, range=(-1.0, 1.0),
        why="close-up face in a car (the short-range model's case), 176x144 letterboxed"),
    "face_detection_full_range_sparse": dict(
        source=("astronaut.png", None), crop=None, fit=True, range=(-1.0, 1.0),
        why="portrait photo, whole picture"),
    "face_landmark": dict(
        source=("astronaut.png", None), crop=(153, 58, 144, 144), fit=False, range=(0.0, 1.0),
        why="face region (MediaPipe's face box scaled 1.5x), as the landmark graph crops it"),
    "selfie_segmentation": dict(
        source=("astronaut.png", None), crop=None, fit=False, range=(0.0, 1.0),
        why="portrait photo, whole picture, stretched as the segmentation graph does"),
    "selfie_segmentation_landscape": dict(
        source=("carphone_pristine.mp4", 60), crop=None, fit=False, range=(0.0, 1.0),
        why="video-call framing, person in a car, stretched to 256x144"),
    "palm_detection_lite": dict(
        source=("bikes.mp4", 150), crop=None, fit=True, range=(0.0, 1.0),
        why="street scene 640x272, letterboxed (wide aspect, busy texture)"),
    "hand_landmark_lite": dict(
        source=("astronaut.png", None), crop=(100, 402, 110, 110), fit=False, range=(0.0, 1.0),
        why="region around the gloved hand at the bottom left of the photo"),
}


# A second picture for every model, in OUT_DIR/<model>/camera/ (same files): a grayscale photo with other
# statistics (a man filming, in profile, hands on the camera, sky and grass).
SECOND_INPUTS = {
    "face_detection_short_range": dict(
        source=("camera.png", None), crop=(120, 40, 200, 200), fit=True, range=(-1.0, 1.0),
        why="head and shoulders in profile"),
    "face_detection_full_range_sparse": dict(
        source=("camera.png", None), crop=None, fit=True, range=(-1.0, 1.0), why="whole picture"),
    "face_landmark": dict(
        source=("camera.png", None), crop=(140, 65, 150, 150), fit=False, range=(0.0, 1.0),
        why="face region in profile"),
    "selfie_segmentation": dict(
        source=("camera.png", None), crop=None, fit=False, range=(0.0, 1.0), why="whole picture"),
    "selfie_segmentation_landscape": dict(
        source=("camera.png", None), crop=(0, 64, 512, 288), fit=False, range=(0.0, 1.0),
        why="16:9 band across the man and the camera"),
    "palm_detection_lite": dict(
        source=("camera.png", None), crop=None, fit=True, range=(0.0, 1.0), why="whole picture"),
    "hand_landmark_lite": dict(
        source=("camera.png", None), crop=(170, 150, 130, 130), fit=False, range=(0.0, 1.0),
        why="gloved hands on the camera"),
}


def run(command):
    return subprocess.run(command, check=True, capture_output=True).stdout


def decode_rgb(name, frame):
    """The picture (or frame number `frame` of a clip) as an H x W x 3 uint8 array, decoded by ffmpeg."""
    path = os.path.join(MEDIA, name)
    size = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                "-of", "csv=p=0", path]).decode().strip().split(",")
    width, height = int(size[0]), int(size[1])
    command = ["ffmpeg", "-v", "error", "-i", path]
    if frame is not None:
        command += ["-vf", f"select=eq(n\\,{frame})", "-fps_mode", "passthrough"]
    command += ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    data = run(command)
    if len(data) != width * height * 3:
        sys.exit(f"make_reference: {name}: expected a {width}x{height} RGB picture, got {len(data)} bytes")
    return np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3)


def sample(image, region, out_width, out_height):
    """Bilinear samples of `region` (x, y, w, h; may reach outside the picture, which reads as black)."""
    x0, y0, w, h = region
    height, width, _ = image.shape
    padded = np.zeros((height + 2, width + 2, 3), dtype=np.float64)
    padded[1:-1, 1:-1] = image
    xs = x0 + (np.arange(out_width) + 0.5) * (w / out_width) - 0.5
    ys = y0 + (np.arange(out_height) + 0.5) * (h / out_height) - 0.5
    xs = np.clip(xs, -1.0, width) + 1.0
    ys = np.clip(ys, -1.0, height) + 1.0
    xi = np.minimum(np.floor(xs).astype(int), width)
    yi = np.minimum(np.floor(ys).astype(int), height)
    fx = (xs - xi)[None, :, None]
    fy = (ys - yi)[:, None, None]
    top = padded[yi][:, xi] * (1 - fx) + padded[yi][:, xi + 1] * fx
    bottom = padded[yi + 1][:, xi] * (1 - fx) + padded[yi + 1][:, xi + 1] * fx
    return top * (1 - fy) + bottom * fy


def input_tensor(spec, shape):
    _, out_height, out_width, _ = shape
    name, frame = spec["source"]
    image = decode_rgb(name, frame)
    height, width, _ = image.shape
    region = spec["crop"] or (0, 0, width, height)
    if spec["fit"]:
        x, y, w, h = region
        scale = max(w / out_width, h / out_height)
        new_w, new_h = out_width * scale, out_height * scale
        region = (x - (new_w - w) / 2, y - (new_h - h) / 2, new_w, new_h)
    pixels = sample(image, region, out_width, out_height)
    low, high = spec["range"]
    tensor = (pixels / 255.0 * (high - low) + low).astype(np.float32)
    return tensor[None], dict(source=name, frame=frame, region=[float(v) for v in region],
                              letterbox=spec["fit"], range=[low, high], why=spec["why"])


def sanitized(name):
    """Tensor names become file names: anything but letters, digits, '.', '_' and '-' becomes '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def sha256(path):
    with open(path, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest()


def stats(value):
    """Numbers that let a reader of the .npy file check what it read: NumPy's own sum and end values."""
    flat = value.reshape(-1).astype(np.float64)
    return dict(sum=float(flat.sum()), min=float(flat.min()), max=float(flat.max()),
                first=[float(v) for v in flat[:4]], last=[float(v) for v in flat[-4:]])


def make_numpy_samples(out_dir):
    """Arrays whose values the tests compute by formula: value i (C order) of each is described below."""
    folder = os.path.join(out_dir, "numpy")
    os.makedirs(folder, exist_ok=True)
    ramp = np.arange(24).reshape(2, 3, 4)
    samples = {
        "float32.npy": (ramp * 0.5 - 3).astype("<f4"),             # 0.5 i - 3, shape (2, 3, 4)
        "float64.npy": (ramp * 0.25 + 1).astype("<f8"),            # 0.25 i + 1
        "int32.npy": ((ramp - 12) * 1000).astype("<i4"),           # 1000 (i - 12)
        "uint8.npy": (np.arange(256) % 256).astype("u1").reshape(16, 16),  # i, shape (16, 16)
        "scalar.npy": np.array(2.5, dtype="<f4"),                  # 2.5, shape ()
        "vector.npy": np.arange(5, dtype="<f4"),                   # i, shape (5,)
        "empty.npy": np.zeros((0, 3), dtype="<f4"),                # no values, shape (0, 3)
        "refused_fortran.npy": np.asfortranarray(ramp[0].astype("<f4")),
        "refused_big_endian.npy": ramp.astype(">f4"),
        "refused_complex.npy": ramp.astype("<c8"),
        "refused_int64.npy": ramp.astype("<i8"),
    }
    for name, array in samples.items():
        np.save(os.path.join(folder, name), array)
    with open(os.path.join(folder, "float32_v2.npy"), "wb") as file:  # 0.5 i - 3 with a version 2.0 header
        np.lib.format.write_array(file, samples["float32.npy"], version=(2, 0))


def graph_summary(path):
    """Operator counts, parameters and multiply-adds, read from the .tflite file with LiteRT's schema module.

    parameters: values of the constant tensors (dense shape; float16 weights count once, not again as the
    float32 tensors DEQUANTIZE makes of them). multiply-adds: per invoke, of CONV_2D (output elements x kh x kw
    x input channels), DEPTHWISE_CONV_2D (output elements x kh x kw), FULLY_CONNECTED (output elements x input
    features) and MediaPipe's Convolution2DTransposeBias (output elements x input channels).
    """
    from ai_edge_litert import schema_py_generated as schema

    builtin_names = {value: key for key, value in vars(schema.BuiltinOperator).items() if not key.startswith("_")}
    with open(path, "rb") as file:
        model = schema.Model.GetRootAsModel(file.read(), 0)
    graph = model.Subgraphs(0)

    def shape(index):
        return [int(v) for v in graph.Tensors(index).ShapeAsNumpy()] if graph.Tensors(index).ShapeLength() else []

    operators, multiply_adds, parameters = {}, 0, 0
    for index in range(graph.TensorsLength()):
        buffer = model.Buffers(graph.Tensors(index).Buffer())
        if buffer.DataLength() > 0 or buffer.Size() > 0:
            parameters += int(np.prod(shape(index)))
    for index in range(graph.OperatorsLength()):
        operator = graph.Operators(index)
        code = model.OperatorCodes(operator.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        name = code.CustomCode().decode() if builtin == schema.BuiltinOperator.CUSTOM else builtin_names[builtin]
        operators[name] = operators.get(name, 0) + 1
        output = int(np.prod(shape(operator.Outputs(0))))
        weights = shape(operator.Inputs(1)) if operator.InputsLength() > 1 else []
        if name == "CONV_2D":
            multiply_adds += output * weights[1] * weights[2] * weights[3]
        elif name == "DEPTHWISE_CONV_2D":
            multiply_adds += output * weights[1] * weights[2]
        elif name == "FULLY_CONNECTED":
            multiply_adds += output * weights[1]
        elif name == "Convolution2DTransposeBias":
            multiply_adds += output * weights[3]
    return dict(operators=operators, parameters=parameters, multiply_adds=multiply_adds,
                tensors=graph.TensorsLength())


def run_case(interpreter, model, spec, folder, version):
    """Makes the input of `spec`, runs LiteRT on it and writes input, outputs and manifest.json to `folder`."""
    path = os.path.join(MODELS, model + ".tflite")
    (input_detail,) = interpreter.get_input_details()
    tensor, origin = input_tensor(spec, [int(v) for v in input_detail["shape"]])
    interpreter.set_tensor(input_detail["index"], tensor)
    interpreter.invoke()

    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "input_0.npy"), tensor)
    outputs = []
    for index, detail in enumerate(interpreter.get_output_details()):
        value = np.ascontiguousarray(interpreter.get_tensor(detail["index"]), dtype=np.float32)
        file = f"output_{index}_{sanitized(detail['name'])}.npy"
        np.save(os.path.join(folder, file), value)
        outputs.append(dict(index=index, name=detail["name"], shape=list(value.shape), file=file,
                            stats=stats(value)))
    manifest = dict(model=model, model_sha256=sha256(path), runtime=f"ai-edge-litert {version}",
                    interpreter="default (XNNPACK delegate), num_threads=1", numpy=np.__version__,
                    graph=graph_summary(path),
                    inputs=[dict(index=0, name=input_detail["name"], shape=list(tensor.shape),
                                 file="input_0.npy", stats=stats(tensor), **origin)],
                    outputs=outputs)
    with open(os.path.join(folder, "manifest.json"), "w") as file:
        json.dump(manifest, file, indent=2)
    return manifest


def make_litert(out_dir):
    import ai_edge_litert
    from ai_edge_litert.interpreter import Interpreter

    version = getattr(ai_edge_litert, "__version__", "unknown")
    listing = {}
    for model, spec in INPUTS.items():
        # The default op resolver applies the XNNPACK delegate and runs MediaPipe's custom op.
        interpreter = Interpreter(model_path=os.path.join(MODELS, model + ".tflite"), num_threads=1)
        interpreter.allocate_tensors()
        manifest = run_case(interpreter, model, spec, os.path.join(out_dir, model), version)
        run_case(interpreter, model, SECOND_INPUTS[model], os.path.join(out_dir, model, "camera"), version)
        listing[model] = dict(inputs=["input_0.npy"], outputs=[o["file"] for o in manifest["outputs"]],
                              cases=["", "camera"])
        print(f"make_reference: {model}: " + ", ".join(f"{o['name']} {o['shape']}" for o in manifest["outputs"]))
    with open(os.path.join(out_dir, "manifest.json"), "w") as file:
        json.dump(dict(runtime=f"ai-edge-litert {version}", models=listing), file, indent=2)
    make_numpy_samples(out_dir)


def make_mediapipe(out_dir):
    import mediapipe as mp

    folder = os.path.join(out_dir, "mediapipe")
    os.makedirs(folder, exist_ok=True)
    image = np.ascontiguousarray(decode_rgb("astronaut.png", None))
    detections = {}
    for selection, model in enumerate(["face_detection_short_range", "face_detection_full_range_sparse"]):
        with mp.solutions.face_detection.FaceDetection(model_selection=selection) as detector:
            result = detector.process(image)
        faces = []
        for detection in result.detections or []:
            box = detection.location_data.relative_bounding_box
            faces.append(dict(score=float(detection.score[0]),
                              box=dict(x=box.xmin, y=box.ymin, width=box.width, height=box.height),
                              keypoints=[[k.x, k.y] for k in detection.location_data.relative_keypoints]))
        detections[model] = dict(model_selection=selection, faces=faces)
    with open(os.path.join(folder, "face_detection.json"), "w") as file:
        json.dump(dict(image="astronaut.png", coordinates="normalized, origin top-left, x right, y down",
                       detectors=detections), file, indent=2)
    masks = []
    for selection in (0, 1):
        with mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=selection) as segmenter:
            mask = np.ascontiguousarray(segmenter.process(image).segmentation_mask, dtype=np.float32)
        np.save(os.path.join(folder, f"selfie_mask_{selection}.npy"), mask)
        masks.append(dict(model_selection=selection, file=f"selfie_mask_{selection}.npy", shape=list(mask.shape)))
    with open(os.path.join(folder, "manifest.json"), "w") as file:
        json.dump(dict(runtime=f"mediapipe {mp.__version__}", numpy=np.__version__, image="astronaut.png",
                       face_detection="face_detection.json", selfie_masks=masks), file, indent=2)
    print("make_reference: mediapipe: " + ", ".join(f"{m}: {len(d['faces'])} face(s)" for m, d in detections.items()))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("litert", "mediapipe"):
        sys.exit("usage: make_reference.py litert|mediapipe OUT_DIR")
    (make_litert if sys.argv[1] == "litert" else make_mediapipe)(sys.argv[2])
