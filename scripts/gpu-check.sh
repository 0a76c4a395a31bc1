#!/usr/bin/env bash
# On the GPU machine, in one call: build for sm_90, run the whole test suite (GPU tests included),
# compute-sanitizer memcheck, racecheck and synccheck, the benchmarks and the seed-claims measurements.
# Usage: scripts/gpu-check.sh OUTDIR [steps...]
#   steps: build test sanitize bench claims pipeline pipebench (default: all but pipebench)
#   pipeline: the pipeline tests on every GPU (DCS_TEST_DEVICE=cuda: 1 vs all GPUs, kill -9 and
#             --resume) and compute-sanitizer memcheck on a multi-GPU run;
#   pipebench: bench/pipeline_bench.py (compute-only, raw write, end-to-end, 1 vs all GPUs).
# DCS_GIT_REVISION=<hash> names the commit where the copy of the tree has no .git.
# Logs and results go to OUTDIR; a summary is printed last.
set -uo pipefail
out="${1:?usage: scripts/gpu-check.sh OUTDIR [steps...]}"
shift
steps=("$@")
((${#steps[@]})) || steps=(build test sanitize bench claims pipeline)
cd "$(dirname "$0")/.."
mkdir -p "$out"
build=build/gpu
jobs=$(nproc)
summary=()
want() { local s; for s in "${steps[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }
step() {  # step NAME LOG COMMAND...: runs, records pass/fail and seconds
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  if "$@" >"$out/$log" 2>&1; then summary+=("PASS  $name ($((SECONDS - t0)) s)")
  else summary+=("FAIL  $name ($((SECONDS - t0)) s, see $log)"); tail -n 40 "$out/$log"; fi
}

# The GPU machine has no Debian apbs-data and no GridDataFormats: the caller may carry them in
# .carry-gpu/ (apbs/ = /usr/share/apbs, pylib/ = gridData and mrcfile from Debian), made by
# scripts/prepare-gpu-carry.sh.
if [[ ! -d /usr/share/apbs && -d .carry-gpu/apbs ]]; then cp -r .carry-gpu/apbs /usr/share/apbs; fi
if [[ -d .carry-gpu/pylib ]]; then export PYTHONPATH="$PWD/.carry-gpu/pylib${PYTHONPATH:+:$PYTHONPATH}"; fi
python=$(command -v python3)
# libdeflate (HDF5 chunk compression) may be missing there: .carry-gpu/debs holds Debian's.
if [[ ! -f /usr/include/libdeflate.h && -d .carry-gpu/debs ]]; then
  for deb in .carry-gpu/debs/*.deb; do dpkg -x "$deb" /; done
  ldconfig
fi

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv >"$out/device.txt" 2>&1
echo "revision: ${DCS_GIT_REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}" >>"$out/device.txt"

if want build; then
  step configure configure.log cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES=90 -DDCS_ENABLE_CUDA=ON -DDCS_BUILD_TESTS=ON -DDCS_WARNINGS_AS_ERRORS=ON \
       -DDCS_SYSTEM_PYTHON="$python" -DDCS_GIT_REVISION="${DCS_GIT_REVISION:-$(git rev-parse --short=12 HEAD 2>/dev/null)}"
  step build build.log cmake --build "$build" -j "$jobs"
fi
if want test; then
  step "ctest (all labels)" ctest.log ctest --test-dir "$build" -j 4 --output-on-failure --timeout 900
  grep -E "tests passed|Skipped|Failed|\*\*\*Skipped" "$out/ctest.log" | tail -n 15
fi
if want sanitize; then
  case_bin=$(find "$build" -name dcs_cuda_sanitizer_case -type f | head -n 1)
  if [[ -n "$case_bin" ]]; then
    step "compute-sanitizer memcheck" memcheck.log compute-sanitizer --tool memcheck --error-exitcode 1 "$case_bin"
    step "compute-sanitizer racecheck" racecheck.log compute-sanitizer --tool racecheck --error-exitcode 1 "$case_bin"
    step "compute-sanitizer synccheck" synccheck.log compute-sanitizer --tool synccheck --error-exitcode 1 "$case_bin"
  else
    summary+=("FAIL  sanitizer case binary not built")
  fi
fi
if want bench; then
  mol=$(ls data/*.pqr | head -n 1)
  step "dcs bench --potential" bench_potential.log "$build/bin/dcs" bench --potential --results-dir "$out"
  step "dcs bench --reductions" bench_reductions.log "$build/bin/dcs" bench --reductions --results-dir "$out"
  step "dcs bench --molecule" bench_e2e.log "$build/bin/dcs" bench --molecule "$mol" --results-dir "$out"
  step "dcs default run on GPU" run.log "$build/bin/dcs" --atoms "$mol" --grid 256 --output-dir "$out" --validate --force
fi
if want pipeline; then
  gpus=$(nvidia-smi --list-gpus | wc -l)
  step "pipeline tests on $gpus GPU(s)" pipeline_gpu.log env DCS_TEST_DEVICE=cuda \
       ctest --test-dir "$build" -L pipeline -R "pipeline\\." -j 2 --output-on-failure
  mol=$(ls data/*.pqr | head -n 1)
  step "compute-sanitizer memcheck, every GPU" memcheck_pipeline.log compute-sanitizer --tool memcheck \
       --error-exitcode 1 "$build/bin/dcs" --atoms "$mol" --grid 97 --device cuda --memory-limit 8M \
       -o "$out/sanitized.h5" --force --validate
  rm -f "$out/sanitized.h5"
fi
if want pipebench; then
  step "pipeline benchmark" pipebench.log "$python" bench/pipeline_bench.py "$build/bin/dcs" "$out" \
       ${PIPEBENCH_ARGS:-}
fi
if want claims && [[ -x scripts/seed_claims.sh ]]; then
  step "seed claims (ncu)" claims.log scripts/seed_claims.sh "$out" "$build"
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
