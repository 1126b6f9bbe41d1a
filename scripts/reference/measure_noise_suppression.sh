#!/usr/bin/env bash
# The noise-suppression table of docs/audio.md: LibriVox speech (pocketsphinx-testdata, 0.6 s of silence
# after each utterance, 48 kHz) mixed with white noise, pink noise (both generated) and ALSA's recorded
# noise at 0, 5 and 10 dB SNR, through `vfx apply --audio-filter noise-suppression:engine=E`, scored by
# speech_quality.py (in .build/venv-audio). Prints one Markdown row per case.
#   scripts/reference/measure_noise_suppression.sh [ENGINE...]      (default: rnnoise spectral)
set -euo pipefail
cd "$(dirname "$0")/../.."
VFX=${VFX:-.build/release/vfx}
PY=.build/venv-audio/bin/python
SCORE=scripts/reference/speech_quality.py
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ffmpeg -v error -f lavfi -i anullsrc=r=16000:cl=mono -t 0.6 -c:a pcm_s16le "$WORK/gap.wav"
for f in /usr/share/pocketsphinx/test/data/librivox/*.wav; do echo "file '$f'"; echo "file '$WORK/gap.wav'"; done > "$WORK/list.txt"
ffmpeg -v error -f concat -safe 0 -i "$WORK/list.txt" -ar 48000 -ac 1 -c:a pcm_f32le "$WORK/clean.wav"
echo "| engine | noise | SNR | noise in pauses | speech level | PESQ noisy → out | STOI noisy → out | alignment |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
engines=("$@")
((${#engines[@]})) || engines=(rnnoise spectral)
for engine in "${engines[@]}"; do
    for noise in white pink /usr/share/sounds/alsa/Noise.wav; do
        for snr in 0 5 10; do
            "$PY" "$SCORE" mix "$WORK/clean.wav" "$noise" "$snr" "$WORK/noisy.wav"
            "$VFX" apply "$WORK/noisy.wav" -o "$WORK/out.wav" -y --audio-filter "noise-suppression:engine=$engine" --quiet
            "$PY" -W ignore "$SCORE" score "$WORK/clean.wav" "$WORK/noisy.wav" "$WORK/out.wav" | "$PY" -c "
import json, sys
r = json.load(sys.stdin)
name = {'white': 'white', 'pink': 'pink'}.get('$noise', 'recorded (ALSA)')
print(f\"| $engine | {name} | $snr dB | −{r['noise_reduction_db']:.1f} dB | {r['speech_level_db']:+.1f} dB | \"
      f\"{r['pesq_noisy']:.2f} → {r['pesq_enhanced']:.2f} ({r['pesq_enhanced'] - r['pesq_noisy']:+.2f}) | \"
      f\"{r['stoi_noisy']:.3f} → {r['stoi_enhanced']:.3f} ({r['stoi_enhanced'] - r['stoi_noisy']:+.3f}) | {r['alignment_ms']:.1f} ms |\")"
        done
    done
done
