#!/usr/bin/env bash
# The Python reference tools for VFXNeural's tests and benchmarks, and the reference tensors they make.
#
#   .build/venv-litert      ai-edge-litert (LiteRT with XNNPACK), which wants NumPy 2
#   .build/venv-mediapipe   mediapipe 0.10.14, which wants NumPy 1.26
#   .build/reference/       make_reference.py's output (see that script)
#
# Idempotent and quick when nothing changed: a virtual environment is rebuilt only when its package list
# changed, and the references only when the script, the models, the media or the package lists changed
# (a stamp file holds their hash). scripts/setup.sh --python runs this; so does `make test`.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=$ROOT/.build
PYTHON=${PYTHON:-$(command -v python3)}
say() { printf 'setup-venvs: %s\n' "$*" >&2; }

# Exact versions: the references must not drift when PyPI moves on.
LITERT_PACKAGES=(ai-edge-litert==2.3.0 numpy==2.4.6)
MEDIAPIPE_PACKAGES=(mediapipe==0.10.14 numpy==1.26.4 protobuf==4.25.9 jax==0.7.1 jaxlib==0.7.1
                    opencv-contrib-python==4.11.0.86)

make_venv() { # folder, packages...
    local folder=$1; shift
    local wanted="$*"
    if [ -x "$folder/bin/python" ] && [ "$(cat "$folder/.packages" 2>/dev/null)" = "$wanted" ]; then
        return
    fi
    say "creating $(basename "$folder") ($wanted)"
    rm -rf "$folder"
    "$PYTHON" -m venv "$folder"
    # setup.sh keeps the mediapipe wheel in .build/downloads: use it instead of fetching it again.
    "$folder/bin/python" -m pip install --quiet --disable-pip-version-check \
        --find-links "$BUILD/downloads" "$@"
    echo "$wanted" > "$folder/.packages"
}

mkdir -p "$BUILD"
make_venv "$BUILD/venv-litert" "${LITERT_PACKAGES[@]}"
make_venv "$BUILD/venv-mediapipe" "${MEDIAPIPE_PACKAGES[@]}"

# Everything the references depend on, hashed.
STAMP=$( {
    echo "${LITERT_PACKAGES[*]}"; echo "${MEDIAPIPE_PACKAGES[*]}"
    sha256sum scripts/reference/make_reference.py models/*.tflite \
        media/astronaut.png media/camera.png media/carphone_pristine.mp4 media/bikes.mp4
} | sha256sum | cut -d' ' -f1)
REFERENCE=$BUILD/reference
make_references() {
say "making reference tensors"
PARTIAL=$BUILD/reference.partial
rm -rf "$PARTIAL"
mkdir -p "$PARTIAL"
# Both runtimes log to stderr on every load (XNNPACK, absl, protobuf): keep it out of the way unless a step fails.
LOG=$PARTIAL/log.txt
if ! "$BUILD/venv-litert/bin/python" scripts/reference/make_reference.py litert "$PARTIAL" 2>"$LOG" ||
   ! "$BUILD/venv-mediapipe/bin/python" -W ignore scripts/reference/make_reference.py mediapipe "$PARTIAL" 2>>"$LOG"; then
    cat "$LOG" >&2
    say "make_reference.py failed (log above)"
    exit 1
fi
rm -f "$LOG"
echo "$STAMP" > "$PARTIAL/.stamp"
rm -rf "$REFERENCE"
mv "$PARTIAL" "$REFERENCE"
say "references ready in .build/reference"
}
if [ "$(cat "$REFERENCE/.stamp" 2>/dev/null)" = "$STAMP" ]; then
    say "references up to date in .build/reference"
else
    make_references
fi

# VFXVision's references: MediaPipe's face detection, face mesh and selfie segmentation solutions on the
# photos and the carphone clip (see make_vision_reference.py), in .build/reference-vision.
VISION_STAMP=$( {
    echo "${MEDIAPIPE_PACKAGES[*]}"
    sha256sum scripts/reference/make_vision_reference.py models/*.tflite \
        media/astronaut.png media/camera.png media/grace_hopper.jpg media/carphone_pristine.mp4
} | sha256sum | cut -d' ' -f1)
VISION=$BUILD/reference-vision
if [ "$(cat "$VISION/.stamp" 2>/dev/null)" = "$VISION_STAMP" ]; then
    say "vision references up to date in .build/reference-vision"
    exit 0
fi
say "making vision references"
rm -rf "$VISION.partial"
mkdir -p "$VISION.partial"
if ! "$BUILD/venv-mediapipe/bin/python" -W ignore scripts/reference/make_vision_reference.py "$VISION.partial" \
        2>"$VISION.partial/log.txt"; then
    cat "$VISION.partial/log.txt" >&2
    say "make_vision_reference.py failed (log above)"
    exit 1
fi
rm -f "$VISION.partial/log.txt"
echo "$VISION_STAMP" > "$VISION.partial/.stamp"
rm -rf "$VISION"
mv "$VISION.partial" "$VISION"
say "vision references ready in .build/reference-vision"
