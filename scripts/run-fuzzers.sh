#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (preset "fuzz": clang, ASan+UBSan, CPU only) and runs
# each for a bounded time on a seed corpus made from apbs-data (fuzz/make_corpus.py).
# Usage: scripts/run-fuzzers.sh [seconds-per-target]     (default 60)
# Environment: DCS_FUZZ_TARGETS="pqr xyzq gzip options values selection prmtop trajectory mesh" (a
# subset), DCS_FUZZ_JOBS (targets run side by side; default the CPU count), DCS_FUZZ_RSS_MB (2048).
# Exit status 1 when any target found something (a crash, leak, UB, an exception other than
# InputError/UsageError, or a broken invariant): its report is printed, its log is
# build/fuzz/logs/<target>.log and the input that triggers it is under
# build/fuzz/artifacts/<target>/ (rerun: build/fuzz/fuzz/bin/fuzz_<target> FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/debian.sh

seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "usage: $0 [seconds-per-target]" >&2; exit 2; }
targets=(${DCS_FUZZ_TARGETS:-pqr xyzq gzip options values selection prmtop trajectory mesh})
jobs="${DCS_FUZZ_JOBS:-$(nproc)}"
rss_mb="${DCS_FUZZ_RSS_MB:-2048}"

# clang with libFuzzer and the sanitizer runtimes, llvm-symbolizer for readable reports, and
# what the configure of the dcs libraries needs (the subset of scripts/setup.sh's packages).
packages=(clang libclang-rt-14-dev llvm-14 cmake ninja-build pkg-config libhdf5-dev libcli11-dev
          libspdlog-dev libfmt-dev zlib1g-dev libdeflate-dev libssl-dev libfftw3-dev apbs-data python3)
install_missing_debs run-fuzzers "${packages[@]}"

# chemfiles (the trajectory readers' library), built once into .deps/ (idempotent).
bash scripts/setup-chemfiles.sh

build=build/fuzz
start=$(date +%s)
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
echo "run-fuzzers: built in $(( $(date +%s) - start )) s" >&2

# Fresh corpora each run (what libFuzzer adds to them is not kept); artifacts of earlier runs
# are kept until the next run of the same target.
rm -rf "$build/corpus"
python3 fuzz/make_corpus.py "$build/corpus"
mkdir -p "$build/logs"

symbolizer=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
export ASAN_SYMBOLIZER_PATH="$symbolizer"
# A shorter allocation stack than the default 30 frames: ~40% more runs for the options target.
export ASAN_OPTIONS="detect_leaks=1:symbolize=1:malloc_context_size=10:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"

max_len() {
  case "$1" in
    options) echo 1024 ;;
    values) echo 256 ;;
    selection) echo 1024 ;;
    trajectory) echo 16384 ;;  # a few frames of a dozen atoms, or a header and a frame's start
    mesh) echo 16384 ;;        # the small spheres of tests/data/mesh (2-5 KB) and room to grow
    *) echo 8192 ;;
  esac
}

run_target() {
  local t="$1" bin="$build/fuzz/bin/fuzz_$1" dict=() status=0
  rm -rf "$build/artifacts/$t"
  mkdir -p "$build/artifacts/$t"
  [[ -f "$build/corpus/$t.dict" ]] && dict=(-dict="$build/corpus/$t.dict")
  "$bin" "$build/corpus/$t" "${dict[@]}" -max_total_time="$seconds" -rss_limit_mb="$rss_mb" \
    -timeout=10 -max_len="$(max_len "$t")" -close_fd_mask=3 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t/" >"$build/logs/$t.log" 2>&1 || status=$?
  echo "$status" >"$build/logs/$t.status"
}

# The files fuzz_gzip writes, in RAM where possible; removed however the targets end.
scratch=$(mktemp -d /dev/shm/dcs-fuzz.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export DCS_FUZZ_SCRATCH="$scratch"

fuzz_start=$(date +%s)
running=0
for t in "${targets[@]}"; do
  [[ -x "$build/fuzz/bin/fuzz_$t" ]] || { echo "run-fuzzers: no target fuzz_$t" >&2; exit 2; }
  echo "run-fuzzers: fuzz_$t for $seconds s" >&2
  run_target "$t" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
done
wait

failed=()
for t in "${targets[@]}"; do
  status=$(cat "$build/logs/$t.status")
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/logs/$t.log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$build/logs/$t.log" | tail -1 || true)
  if [[ "$status" == 0 ]]; then
    echo "run-fuzzers: fuzz_$t: clean, $runs runs, ${cov:-cov: ?} edges" >&2
  else
    failed+=("$t")
    echo "run-fuzzers: fuzz_$t: FINDING (exit $status); log $build/logs/$t.log, input:" >&2
    ls -1 "$build/artifacts/$t/" | sed "s|^|  $build/artifacts/$t/|" >&2
    grep -E -A30 '==FINDING==|ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|deadly signal|ERROR: libFuzzer' \
      "$build/logs/$t.log" | head -60 >&2 || tail -40 "$build/logs/$t.log" >&2
  fi
done
echo "run-fuzzers: fuzzing took $(( $(date +%s) - fuzz_start )) s, $(( $(date +%s) - start )) s with the build" >&2
if ((${#failed[@]})); then
  echo "run-fuzzers: findings in: ${failed[*]}" >&2
  exit 1
fi
