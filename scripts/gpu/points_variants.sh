#!/usr/bin/env bash
# Tuning aid: the points kernel's table (dcs_potential_bench --points) for several compile-time
# shapes (16-point tiles per warp x blocks per SM: DCS_POINTS_TILES, DCS_POINTS_BLOCKS_PER_SM),
# each measured against the same run's ceilings; a third field is the exact path's reach as a
# fraction of the group radius (DCS_POINTS_NEAR_FRACTION, default 0.5), a fourth the 8-atom tiles
# per straight step (DCS_POINTS_UNROLL, default 2). Recompiles only points_kernel.cu and cuda_backend.cu
# of an existing build with the shape's -D flags and relinks the benchmark; the build is left
# with the default shape (ninja builds it again at the end). A shape that does not compile (spills) is reported and skipped.
# Usage: scripts/gpu/points_variants.sh BUILD_DIR "T B [F [U]]" ...
set -euo pipefail
build=${1:?usage: points_variants.sh BUILD_DIR "T B" ...}
shift
cmake --build "$build" --target dcs_potential_bench >/dev/null
objects=(src/points/points_kernel.cu.o src/cuda_backend.cu.o)
commands=$(ninja -C "$build" -t commands dcs_potential_bench)
# The two objects again with the shape's flags, then the library archive and the benchmark's
# link, all by hand: running ninja here would see the objects' new mtimes against its deps log,
# call them dirty and compile them again without the flags (which made every shape before
# 2026-11-26's 4th session measure the default one).
compile() {  # compile EXTRA_FLAGS
  local object
  for object in "${objects[@]}"; do
    cmd=$(grep -F -- "-o kernels/CMakeFiles/dcs_cuda.dir/$object" <<<"$commands" | head -n 1)
    (cd "$build" && eval "$cmd $1") || return 1
  done
  (cd "$build" && eval "$(grep -F 'ar qc kernels/libdcs_cuda.a' <<<"$commands" | head -n 1)") || return 1
  (cd "$build" && eval "$(tail -n 1 <<<"$commands")") || return 1
}
for shape in "$@"; do
  read -r tiles blocks fraction unroll <<<"$shape"
  fraction=${fraction:-0.5}
  unroll=${unroll:-2}
  echo "## $tiles tiles of 16 points per warp, $blocks blocks per SM, exact path within R + $fraction R, $unroll atom tiles per step"
  flags="-DDCS_POINTS_TILES=$tiles -DDCS_POINTS_BLOCKS_PER_SM=$blocks"
  flags+=" -DDCS_POINTS_NEAR_FRACTION=$fraction -DDCS_POINTS_UNROLL=$unroll"
  flags+=" ${POINTS_EXTRA_FLAGS:-}"  # e.g. -DDCS_POINTS_EXPERIMENT=1 (points_kernel.cu)
  if ! compile "$flags" >"$build/points_variant.log" 2>&1; then
    echo "(does not compile: skipped)"
    grep -m 3 error "$build/points_variant.log" || true
    continue
  fi
  "$build/bin/dcs_potential_bench" --points 1000000 --atoms 16000 --model coulomb --model screened --reps 3 |
    grep -E '^\| points'
done
touch kernels/src/points/points_kernel.cu
ninja -C "$build" dcs_potential_bench >/dev/null
