#!/usr/bin/env bash
# One GPU-machine call for the reduction family: build its targets, run its GPU tests, the
# benchmark and the seed claims, then compute-sanitizer on small cases. Everything lands in
# OUTDIR (at most 8 files: the device tool returns no more); a short summary is printed last.
# Usage: scripts/gpu/reduce_gpu_run.sh OUTDIR [BUILD_DIR]
set -uo pipefail
out="${1:?usage: reduce_gpu_run.sh OUTDIR [BUILD_DIR]}"
build="${2:-build/gpu}"
cd "$(dirname "$0")/../.."
mkdir -p "$out"
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv >"$out/device.txt" 2>&1
git rev-parse --short=12 HEAD >>"$out/device.txt" 2>/dev/null
# Warnings are errors in the local builds; here a warning in another area must not stop the run.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DDCS_ENABLE_CUDA=ON -DDCS_BUILD_TESTS=ON -DDCS_WARNINGS_AS_ERRORS=OFF >"$out/build.log" 2>&1
ninja -C "$build" -j "$(nproc)" dcs_reduce_gpu_test dcs_reduce_bench >>"$out/build.log" 2>&1 ||
  { tail -n 40 "$out/build.log"; exit 1; }
ninja -C "$build" -j "$(nproc)" dcs_potential_bench >>"$out/build.log" 2>&1 || stamp "dcs_potential_bench not built"
stamp "built"

test_bin="$build/tests/cuda/reduce/dcs_reduce_gpu_test"
timeout 300 "$test_bin" --gtest_brief=1 >"$out/tests.log" 2>&1
stamp "GPU tests rc=$?"

timeout 200 "$build/bin/dcs_reduce_bench" --bench --reps 20 --out "$out/bench.md" >/dev/null 2>"$out/bench.err"
stamp "benchmark rc=$?"

claims=/tmp/reduce_claims
rm -rf "$claims"
timeout 240 scripts/gpu/seed_claims.sh "$claims" "$build" --potential-grid 128 --potential-atoms 2000 >"$claims.log" 2>&1
stamp "seed claims rc=$?"
cp "$claims/seed-claims.md" "$out/" 2>/dev/null
cp "$claims.log" "$out/bench.err" "$claims/" 2>/dev/null
tar czf "$out/claims.tgz" -C /tmp "$(basename "$claims")"

small='Variants/Statistics.*_n257:Variants/Difference.*_n257:Variants/Textbook.*_n2048:Variants/Misaligned.*warp*'
{
  echo "== memcheck"; timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$test_bin" --gtest_filter="$small" --gtest_brief=1 2>&1 | tail -n 30
  echo "== racecheck"; timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 "$test_bin" --gtest_filter='Variants/Statistics.*_n257' --gtest_brief=1 2>&1 | tail -n 30
} >"$out/sanitize.log" 2>&1
stamp "sanitizers done"

echo "== tests"; grep -E "PASSED|FAILED|SKIPPED|tests ran" "$out/tests.log" | tail -n 25
echo "== sanitizers"; grep -E "ERROR SUMMARY|PASSED|FAILED|==" "$out/sanitize.log" | tail -n 12
echo "== benchmark (512^3 rows)"; grep -E "^\| (512\^3|n) " "$out/bench.md" | cut -c1-160
echo "== claims"; grep -E "^\| (simple|convergent|shared|neighbored|unroll|interleaved)" "$out/seed-claims.md" 2>/dev/null | cut -c1-200 | head -n 30
