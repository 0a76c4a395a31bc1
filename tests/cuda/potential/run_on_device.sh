#!/usr/bin/env bash
# On the GPU machine, for the potential kernels alone: build the GPU tests, the sanitizer case
# and the benchmark for sm_90, run them, compute-sanitizer memcheck + racecheck, one Nsight
# Compute profile of the production kernel. Logs go to OUTDIR; a summary is printed last.
# (scripts/gpu/gpu-check.sh runs the whole project; this is the narrow loop for kernel work.)
#   tests/cuda/potential/run_on_device.sh OUTDIR [bench args...]
set -uo pipefail
out="${1:?usage: run_on_device.sh OUTDIR [bench args...]}"
shift
cd "$(dirname "$0")/../../.."
build=build/gpu-potential
mkdir -p "$out"
summary=()
step() {  # step NAME TIMEOUT LOG COMMAND...
  local name=$1 limit=$2 log=$3; shift 3
  local t0=$SECONDS
  if timeout "$limit" "$@" >>"$out/$log" 2>&1; then summary+=("PASS  $name ($((SECONDS - t0)) s)")
  else summary+=("FAIL  $name (rc $?, $((SECONDS - t0)) s, see $log)"); tail -n 30 "$out/$log"; fi
}

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
  git rev-parse HEAD 2>/dev/null; git status --short 2>/dev/null | head -n 40; } >"$out/device.txt" 2>&1

step configure 120 build.log cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DDCS_ENABLE_CUDA=ON -DDCS_BUILD_TESTS=ON -DDCS_WARNINGS_AS_ERRORS=ON
step build 300 build.log cmake --build "$build" -j "$(nproc)" --target dcs_cuda_potential_tests \
  dcs_cuda_sanitizer_case dcs_potential_bench
tests=$build/tests/cuda/potential/dcs_cuda_potential_tests
case_bin=$build/tests/cuda/potential/dcs_cuda_sanitizer_case
step "gpu tests" 300 tests.log "$tests"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|FAILED  \]" "$out/tests.log" | tail -n 20
step "sanitizer case" 60 sanitizer.log "$case_bin"
step "memcheck" 180 sanitizer.log compute-sanitizer --tool memcheck --error-exitcode 1 "$case_bin"
step "racecheck" 240 sanitizer.log compute-sanitizer --tool racecheck --error-exitcode 1 "$case_bin"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 500 >"$out/smi.csv" 2>&1 &
smi_pid=$!
step bench 300 bench.md "$build/bin/dcs_potential_bench" "$@"
kill "$smi_pid" 2>/dev/null
# Nsight Compute on the first launch of each kernel named in NCU_KERNELS (default: production):
# speed of light, occupancy, issue activity, the MUFU (XU) pipe and why warps stall. The regex
# takes the potential kernel the run launches (production_kernel, scatter/gather_plane_kernel),
# never the rsqrt ceiling kernel that runs first.
metrics="smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"
metrics+=",sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active"
metrics+=",regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"
if command -v ncu >/dev/null; then
  for kernel in ${NCU_KERNELS:-production}; do
    step "ncu $kernel" 120 ncu.txt ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --section WarpStateStats --metrics "$metrics" -k 'regex:production_kernel|_plane_kernel' -c 1 \
      "$build/bin/dcs_potential_bench" --grid 256 --atoms 16000 --kernel "$kernel" --reps 1
  done
fi
cat "$out/bench.md"
printf '%s\n' "${summary[@]}"
