#!/usr/bin/env bash
# Tuning aid: the points kernel's table (dcs_potential_bench --points) for several compile-time
# variants, each measured against the same run's ceilings, after the build's own (default) kernel.
# A variant is "T B [F [U [FLAGS...]]]": 16-point tiles per warp x blocks per SM
# (DCS_POINTS_TILES, DCS_POINTS_BLOCKS_PER_SM), the exact path's reach as a fraction of the group
# radius (DCS_POINTS_NEAR_FRACTION, default 0.5), the 8-atom tiles per straight step
# (DCS_POINTS_UNROLL, default 2), then any further -D flags of points_kernel.cu, e.g.
# -DDCS_POINTS_PIPELINE=1 (software-pipelined straight rounds), -DDCS_POINTS_SOFTWARE=2 (FMA-pipe
# rsqrts per 16 pairs of the balanced policy), -DDCS_POINTS_EXPERIMENT=2 (timing only).
#
# Each variant gets its own copies of points_kernel.cu.o and cuda_backend.cu.o compiled with its
# flags (all variants at once, one compiler per core), its own copy of libdcs_cuda.a with those
# two members replaced and its own benchmark binary, under BUILD_DIR/points_variants/N/; the
# build itself is never touched. (Until 2026-11-26 this script recompiled the build's objects and
# ran ninja to relink; ninja saw their new mtimes, called them dirty and compiled them again
# without the flags, so every shape measured the default kernel. Now the benchmark names each
# variant's rows with the knobs compiled into the kernel, e.g. "points [P1 B5]": a row without
# its tag did not get its flags.) A variant that does not compile (spills: -Werror) is reported
# and skipped. ptxas -v's registers and spills of every points_kernel instance go to the table;
# with cuobjdump on the PATH, so does the SASS count of the straight loop
# (scripts/gpu/points_sass.py).
#
# Usage: scripts/gpu/points_variants.sh [-o OUT] [-b] BUILD_DIR "T B [F [U [FLAGS...]]]" ...
#   -o OUT  also write the report to OUT/points_variants.md, the variants' compiler logs and
#           SASS listings to OUT/points_variants_logs.tar.gz
#   -b      build and count only (no GPU needed): no benchmark runs
# Environment: POINTS_REPS (default 5), POINTS_TESTS=1 also links and runs the CUDA points tests
# (dcs_cuda_potential_tests --gtest_filter='*Points*:*points*') against every variant.
set -euo pipefail
out="" bench=1
while getopts "o:b" option; do
  case $option in
    o) out=$OPTARG ;;
    b) bench=0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
build=${1:?usage: points_variants.sh [-o OUT] [-b] BUILD_DIR "T B [F [U [FLAGS...]]]" ...}
shift
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$build" && pwd)
[[ -n $out ]] && mkdir -p "$out" && out=$(cd "$out" && pwd)
report=${out:+$out/points_variants.md}
report=${report:-/dev/null}
reps=${POINTS_REPS:-5}
targets=(dcs_potential_bench)
[[ ${POINTS_TESTS:-0} == 1 ]] && targets+=(dcs_cuda_potential_tests)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >/dev/null
commands=$(ninja -C "$build" -t commands dcs_potential_bench)
bench_link=$(tail -n 1 <<<"$commands")
test_link=""
[[ ${POINTS_TESTS:-0} == 1 ]] && test_link=$(ninja -C "$build" -t commands dcs_cuda_potential_tests | tail -n 1)

# variant_build DIR FLAGS: the two objects with FLAGS (without the dependency files, which belong
# to the build), the archive copy, the benchmark (and the tests); ptxas -v to DIR/ptxas.log.
variant_build() {
  local dir=$1 flags=$2 object cmd
  mkdir -p "$dir"
  for object in points/points_kernel.cu.o cuda_backend.cu.o; do
    cmd=$(grep -F -- "-o kernels/CMakeFiles/dcs_cuda.dir/src/$object" <<<"$commands" | head -n 1)
    cmd=$(sed -E "s| -MD -MT [^ ]+ -MF [^ ]+||; s| -o kernels/CMakeFiles/dcs_cuda.dir/src/$object| -o $dir/${object##*/}|" <<<"$cmd")
    [[ $object == points/* ]] && cmd+=" -Xptxas=-v"
    (cd "$build" && eval "$cmd $flags") || return 1
  done
  cp "$build/kernels/libdcs_cuda.a" "$dir/libdcs_cuda.a"
  ar r "$dir/libdcs_cuda.a" "$dir/points_kernel.cu.o" "$dir/cuda_backend.cu.o"
  (cd "$build" && eval "$(sed -E "s| kernels/libdcs_cuda.a | $dir/libdcs_cuda.a |g; s| -o bin/dcs_potential_bench | -o $dir/dcs_potential_bench |" <<<"$bench_link")") || return 1
  if [[ -n $test_link ]]; then
    (cd "$build" && eval "$(sed -E "s| kernels/libdcs_cuda.a | $dir/libdcs_cuda.a |g; s| -o ([^ ]*dcs_cuda_potential_tests) | -o $dir/dcs_cuda_potential_tests |" <<<"$test_link")") || return 1
  fi
}

flags_of() {  # flags_of "T B [F [U [FLAGS...]]]"
  local tiles blocks fraction unroll extra
  read -r tiles blocks fraction unroll extra <<<"$1"
  echo "-DDCS_POINTS_TILES=$tiles -DDCS_POINTS_BLOCKS_PER_SM=$blocks -DDCS_POINTS_NEAR_FRACTION=${fraction:-0.5} -DDCS_POINTS_UNROLL=${unroll:-2} $extra"
}

root="$build/points_variants"
rm -rf "$root"
mkdir -p "$root"
pids=()
i=0
for shape in "$@"; do
  i=$((i + 1))
  (variant_build "$root/$i" "$(flags_of "$shape")" >"$root/$i.log" 2>&1 && touch "$root/$i/ok") &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || true; done

registers() {  # the ptxas -v lines of the points kernels: "kind/FMA-pipe pairs: N"
  awk '/Compiling entry function .*points_kernel/ {
         match($0, /PairKindE[0-9]ELi[0-9]+E/)
         split(substr($0, RSTART + 9, RLENGTH - 9), f, /ELi|E/)
         name = (f[1] == 0 ? "coulomb" : f[1] == 1 ? "screened" : "distance") "/" f[2]
       }
       /Used [0-9]+ registers/ && name != "" {
         match($0, /Used [0-9]+/); printf "%s%s: %s", sep, name, substr($0, RSTART + 5, RLENGTH - 5)
         sep = ", "; name = ""
       }
       END { print "" }' "$1"
}
sass() {  # sass OBJECT NAME: the straight loop's SASS count, when cuobjdump is here
  command -v cuobjdump >/dev/null || return 0
  cuobjdump -sass "$1" >"$root/$2.sass" 2>/dev/null || return 0
  python3 "$here/points_sass.py" "$root/$2.sass" || true
}
run_bench() {  # run_bench BINARY
  [[ $bench == 1 ]] || return 0
  "$1" --points 1000000 --atoms 16000 --model coulomb --model screened --reps "$reps" |
    grep -E '^\| (points|kernel)|ceiling' || echo "(the benchmark failed)"
}
run_tests() {  # run_tests BINARY [FLAGS]: not for the timing experiments (wrong values on purpose)
  [[ ${POINTS_TESTS:-0} == 1 && $bench == 1 && ${2:-} != *EXPERIMENT* ]] || return 0
  if timeout 120 "$1" --gtest_filter='*Points*:*points*' >"$root/tests.log" 2>&1; then
    echo "points tests: $(grep -E '^\[  PASSED  \]' "$root/tests.log")"
  else
    echo "points tests: FAILED"
    grep -E '^\[  FAILED  \]|Failure|error' "$root/tests.log" | head -n 10
  fi
}

{
  echo "# points kernel variants ($(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1))"
  echo
  echo "## default (the build's own kernel)"
  sass "$build/kernels/CMakeFiles/dcs_cuda.dir/src/points/points_kernel.cu.o" default
  run_bench "$build/bin/dcs_potential_bench"
  if [[ -n $test_link ]]; then
    run_tests "$(find "$build" -name dcs_cuda_potential_tests -type f -perm -u+x | grep -v points_variants | head -n 1)"
  fi
  i=0
  for shape in "$@"; do
    i=$((i + 1))
    echo
    echo "## $i: $shape"
    echo "flags: $(flags_of "$shape")"
    if [[ ! -f $root/$i/ok ]]; then
      echo "(does not compile: skipped)"
      grep -m 3 -E 'error|spill' "$root/$i.log" || true
      continue
    fi
    echo "registers (ptxas -v, kind/FMA-pipe pairs: registers): $(registers "$root/$i.log")"
    grep -E 'bytes spill' "$root/$i.log" | grep -v ' 0 bytes spill stores, 0 bytes spill loads' | head -n 2 || true
    sass "$root/$i/points_kernel.cu.o" "$i"
    run_bench "$root/$i/dcs_potential_bench"
    if [[ -n $test_link ]]; then run_tests "$root/$i/dcs_cuda_potential_tests" "$shape"; fi
  done
} | tee "$report"
if [[ -n $out ]]; then  # one archive: the lent GPU machine returns at most 8 files
  (cd "$root" && tar czf "$out/points_variants_logs.tar.gz" ./*.log $(ls ./*.sass 2>/dev/null))
fi
