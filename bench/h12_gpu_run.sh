#!/usr/bin/env bash
# Issue 12 device run (one call): build the potential targets for sm_90, the production kernels'
# GPU tests (apbs-data molecules from .carry-gpu), the benchmark at 256^3 x 16 000, 129^3 x 16 000
# and 256^3 x 10^6 atoms with the MUFU ceiling measured in the same run, and Nsight Compute on
# the first launch of the named kernels. Usage: bench/h12_gpu_run.sh OUTDIR
set -uo pipefail
out=${1:?OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
[[ ! -d /usr/share/apbs && -d .carry-gpu/apbs ]] && cp -r .carry-gpu/apbs /usr/share/apbs
if [[ ! -f /usr/include/libdeflate.h && -d .carry-gpu/debs ]]; then
  for deb in .carry-gpu/debs/*.deb; do dpkg -x "$deb" /; done; ldconfig
fi
build=build/gpu-h12
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv; date -u; } >"$out/device.txt" 2>&1
t0=$SECONDS
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDCS_ENABLE_CUDA=ON \
  -DDCS_BUILD_TESTS=ON -DDCS_WARNINGS_AS_ERRORS=ON >"$out/build.log" 2>&1 &&
cmake --build $build -j 16 --target dcs_cuda_potential_tests dcs_potential_bench >>"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "build $((SECONDS - t0)) s"
timeout 240 $build/tests/cuda/potential/dcs_cuda_potential_tests --gtest_filter="${TEST_FILTER:-*production*:*Slab*:Cuda*}" >"$out/tests.log" 2>&1
echo "tests rc $? ($((SECONDS - t0)) s)"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests? ran" "$out/tests.log" | tail -n 25
bench=$build/bin/dcs_potential_bench
K="${KERNELS:---kernel production --kernel production-mufu --kernel production-sw3 --kernel production-sw5 --kernel production-8}"
timeout 150 $bench --grid 256 --grid 129 --atoms 16000 $K --reps 5 >"$out/bench.md" 2>&1; echo "bench rc $? ($((SECONDS - t0)) s)"
timeout 120 $bench --grid 256 --atoms 1000000 ${BIG_KERNELS:---kernel production --kernel production-mufu --kernel production-sw3} --reps 2 >>"$out/bench.md" 2>&1; echo "bench 1e6 rc $? ($((SECONDS - t0)) s)"
metrics="smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"
for k in ${NCU_KERNELS:-production production-mufu}; do
  timeout 90 ncu --clock-control none --metrics "$metrics" -k 'regex:production_kernel' -c 1 \
    $bench --grid 256 --atoms 16000 --kernel $k --reps 1 >>"$out/ncu.txt" 2>&1; echo "ncu $k rc $? ($((SECONDS - t0)) s)"
done
grep -vE "^\s*$" "$out/bench.md" | grep -E "^\|" | head -60
grep -E "==PROF==|production_kernel|issue_active|pipe_xu|pipe_fma|pipe_alu|warps_active|stalled_(mio|math|not_sel|wait|short|long|barrier|dispatch|no_inst|lg|branch|selected)" "$out/ncu.txt" | head -60
