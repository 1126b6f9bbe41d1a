#!/usr/bin/env bash
# Tests the kernels' portable code on this machine: a release build without `VFX_HASWELL` (Package.swift), so every
# kernel that has AVX2 intrinsics runs its portable Swift instead, the code arm64 builds run. Same baseline CPU and
# optimization as the main build, in its own build folder (.build/portable), so the two builds do not invalidate each
# other. Runs the suites of the modules that have such kernels (VFXFilters, VFXAudio) and those built on them.
#
#   scripts/test-portable.sh                 # build and test
#   scripts/test-portable.sh --filter Blend  # only some tests (passed on to `swift test`)
# On arm64, where no build has the intrinsics, it only repeats those suites.
set -euo pipefail
cd "$(dirname "$0")/.."
swift="${SWIFT:-swift}"
flags=(-c release -Xswiftc -enable-testing --scratch-path .build/portable)
filter=(--filter 'VFXFiltersTests|VFXAudioTests|VFXTemporalTests|VFXEffectsTests')
if [ "$#" -gt 0 ]; then filter=("$@"); fi
export VFX_PORTABLE_KERNELS=1
"$swift" build "${flags[@]}" --build-tests
"$swift" test "${flags[@]}" --skip-build "${filter[@]}"
