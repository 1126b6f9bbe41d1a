#!/usr/bin/env python3
"""Speech-enhancement measurements for VideoFX's noise-suppression (run in .build/venv-audio).

  speech_quality.py mix CLEAN.wav NOISE SNR_DB OUT.wav [--seed N]
      NOISE is `white`, `pink` (both generated, seeded) or a wav file (looped): CLEAN + noise scaled so
      that the power ratio over the whole file is SNR_DB. Writes float32 wav at CLEAN's rate; also
      OUT.noise.wav, the scaled noise alone.
  speech_quality.py score CLEAN.wav NOISY.wav ENHANCED.wav
      One JSON line: noise reduction in speech pauses (dB), speech level change in active speech (dB),
      alignment of ENHANCED against CLEAN (ms, cross-correlation peak), wide-band PESQ and STOI of NOISY and
      of ENHANCED (both against CLEAN, at 16 kHz).
"""
import json
import sys

import numpy as np
import scipy.io.wavfile as wavfile
from scipy.signal import resample_poly, correlate
from pesq import pesq
from pystoi import stoi


def read(path):
    rate, data = wavfile.read(path)
    if data.dtype == np.int16:
        data = data.astype(np.float64) / 32768
    elif data.dtype == np.int32:
        data = data.astype(np.float64) / 2147483648
    data = np.asarray(data, dtype=np.float64)
    if data.ndim > 1:
        data = data.mean(axis=1)
    return rate, data


def noise(kind, count, rate, seed):
    rng = np.random.default_rng(seed)
    if kind == "white":
        return rng.standard_normal(count)
    if kind == "pink":  # power falling 3 dB per octave
        spectrum = np.fft.rfft(rng.standard_normal(count))
        freqs = np.fft.rfftfreq(count, 1 / rate)
        spectrum[1:] /= np.sqrt(freqs[1:])
        spectrum[freqs < 20] = 0  # pink over the audio band, 20 Hz and up
        return np.fft.irfft(spectrum, count)
    noise_rate, data = read(kind)
    if noise_rate != rate:
        data = resample_poly(data, rate, noise_rate)
    reps = int(np.ceil(count / len(data)))
    return np.tile(data, reps)[:count]


def mix(clean_path, kind, snr, out_path, seed):
    rate, clean = read(clean_path)
    n = noise(kind, len(clean), rate, seed)
    n *= np.sqrt(np.mean(clean ** 2) / np.mean(n ** 2) / 10 ** (snr / 10))
    noisy = clean + n
    wavfile.write(out_path, rate, noisy.astype(np.float32))
    wavfile.write(out_path.replace(".wav", ".noise.wav"), rate, n.astype(np.float32))


def frame_power(x, size):
    count = len(x) // size
    return (x[: count * size].reshape(count, size) ** 2).mean(axis=1)


def score(clean_path, noisy_path, enhanced_path):
    rate, clean = read(clean_path)
    _, noisy = read(noisy_path)
    _, enhanced = read(enhanced_path)
    length = min(len(clean), len(noisy), len(enhanced))
    clean, noisy, enhanced = clean[:length], noisy[:length], enhanced[:length]
    size = rate // 50  # 20 ms frames
    pc, pn, pe = frame_power(clean, size), frame_power(noisy, size), frame_power(enhanced, size)
    mean_power = pc.mean()
    pauses = pc < mean_power * 10 ** (-25 / 10)
    active = pc > mean_power * 10 ** (-10 / 10)
    reduction = 10 * np.log10(pn[pauses].sum() / max(pe[pauses].sum(), 1e-20))
    level = 10 * np.log10(pe[active].sum() / pc[active].sum())
    window = int(0.05 * rate)
    corr = correlate(enhanced, clean, mode="full", method="fft")
    centre = len(clean) - 1
    lag = np.argmax(corr[centre - window: centre + window + 1]) - window
    c16, n16, e16 = (resample_poly(x, 16000, rate) for x in (clean, noisy, enhanced))
    result = {
        "pause_frames": int(pauses.sum()),
        "noise_reduction_db": round(float(reduction), 2),
        "speech_level_db": round(float(level), 2),
        "alignment_ms": round(float(lag) / rate * 1000, 3),
        "pesq_noisy": round(float(pesq(16000, c16, n16, "wb")), 3),
        "pesq_enhanced": round(float(pesq(16000, c16, e16, "wb")), 3),
        "stoi_noisy": round(float(stoi(c16, n16, 16000)), 4),
        "stoi_enhanced": round(float(stoi(c16, e16, 16000)), 4),
    }
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "mix":
        seed = int(sys.argv[7]) if len(sys.argv) > 7 and sys.argv[6] == "--seed" else 1
        mix(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5], seed)
    elif len(sys.argv) == 5 and sys.argv[1] == "score":
        score(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
