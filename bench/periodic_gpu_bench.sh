#!/usr/bin/env bash
# The periodic (Ewald) method on one GPU at the issue's goals: 1e5 atoms x 100^3 (goal >= 60
# frames/s) and 1e6 atoms on a 1 A grid (216^3, goal >= 20 frames/s), random +-0.5 e charges at
# 0.1 atoms/A^3 in a cubic cell, --ewald-error 1e-5. Runs the DCS_EWALD_BENCH test of
# tests/cuda/periodic (per frame: prepare = atoms uploaded, images binned, PME solved with
# cuFFT; then every slab's kernel, plane statistics and download), with the ceilings measured in
# the same run (the exact kernel's pair rate on the same atoms), and writes
# OUT/periodic_gpu_bench.md. Decode and the file writer are not in these times (the backend's
# frame rate, what the trajectory job calls per frame).
# Usage: bench/periodic_gpu_bench.sh BUILD_DIR OUT_DIR   (BUILD_DIR built with dcs_cuda_periodic_tests)
# Then, where BUILD_DIR has bin/dcs, the end-to-end frames/s with decode (trajectory_bench.py
# --water), the decode side reported separately.
# Environment: EWALD_BENCH_ATOMS (default "100000 1000000"), DCS_EWALD_BENCH_FRAMES (5),
# EWALD_BENCH_E2E_FRAMES (default "60 20": frames of the two end-to-end runs),
# EWALD_BENCH_DECODE_THREADS (default: dcs's choice), EWALD_BENCH_GPU_WORKERS (default "1 2":
# an end-to-end run for each --gpu-workers),
# EWALD_BENCH_BIN_SIDES (default "0.5": bin sides as fractions of the cutoff, each a run with
# DCS_EWALD_TESTING_BIN_SIDE, to compare the tiles' pruning).
set -euo pipefail
source "$(dirname "$0")/lib/gpu_bench.sh"
gpu_bench_setup periodic_gpu_bench tests/cuda/periodic dcs_cuda_periodic_tests "$@"
{
  gpu_bench_header "The periodic method on the GPU: frames per second"
  echo "command: bench/periodic_gpu_bench.sh $build $out"
  echo
  echo '```'
} >"$report"
for side in ${EWALD_BENCH_BIN_SIDES:-0.5}; do
  for atoms in ${EWALD_BENCH_ATOMS:-100000 1000000}; do
    echo "bins of $side x the cutoff:" | tee -a "$report"
    DCS_EWALD_BENCH=1 DCS_EWALD_BENCH_ATOMS="$atoms" DCS_EWALD_TESTING_BIN_SIDE="$side" "$bin" \
      --gtest_filter='EwaldCudaBench.FramesPerSecond' 2>&1 | grep -v '^\[' | tee -a "$report"
  done
done
echo '```' >>"$report"
# End to end, decode included (where BUILD_DIR has the dcs binary and python3 has numpy):
# bench/trajectory_bench.py --water (--pbc whole has work: the host's side of a real box) at
# both sizes, its table with the decode side (summed over the decoding threads, per frame, and
# the frames/s those threads alone give) beside the GPU's.
if [[ -x $build/bin/dcs ]] && python3 -c 'import numpy' 2>/dev/null; then
  here="$(cd "$(dirname "$0")" && pwd)"
  e2e_frames=(${EWALD_BENCH_E2E_FRAMES:-60 20})
  e2e_sides=(100 215.443)
  e2e_grids=(100 216)
  i=0
  for atoms in 100002 1000002; do
    for gpu_workers in ${EWALD_BENCH_GPU_WORKERS:-1 2}; do
      dir="$out/e2e_${atoms}_w$gpu_workers"
      python3 "$here/trajectory_bench.py" "$build/bin/dcs" "$dir" --atoms "$atoms" --water \
        --periodic --frames "${e2e_frames[$i]}" --grid "${e2e_grids[$i]}" \
        --side "${e2e_sides[$i]}" --devices cuda:0 --gpu-workers "$gpu_workers" \
        ${EWALD_BENCH_DECODE_THREADS:+--decode-threads $EWALD_BENCH_DECODE_THREADS}
      { echo; cat "$dir/trajectory_bench.md"; } >>"$report"
      rm -rf "$dir/trajectory_scratch"
    done
    i=$((i + 1))
  done
else
  echo "(end to end skipped: $build/bin/dcs or python3 with numpy missing)" | tee -a "$report"
fi
echo "wrote $report"
