#!/usr/bin/env bash
# Tuning aid: the points kernel's table (dcs_potential_bench --points) for several compile-time
# shapes (points per lane x blocks per SM: DCS_POINTS_PER_LANE, DCS_POINTS_BLOCKS_PER_SM), each
# measured against the same run's ceilings; a third field is the exact path's reach as a
# fraction of the group radius (DCS_POINTS_NEAR_FRACTION, default 1), a fourth the atoms per
# step (DCS_POINTS_UNROLL, default 4). Recompiles only points_kernel.cu and cuda_backend.cu
# of an existing build with the shape's -D flags and relinks the benchmark; the build is left
# with the default shape. A shape that does not compile (spills) is reported and skipped.
# Usage: scripts/gpu/points_variants.sh BUILD_DIR "P B [F [U]]" ...
set -euo pipefail
build=${1:?usage: points_variants.sh BUILD_DIR "P B" ...}
shift
cmake --build "$build" --target dcs_potential_bench >/dev/null
objects=(src/points/points_kernel.cu.o src/cuda_backend.cu.o)
compile() {  # compile EXTRA_FLAGS: the two objects again, then relink
  for object in "${objects[@]}"; do
    cmd=$(ninja -C "$build" -t commands dcs_potential_bench | grep -F -- "-o kernels/CMakeFiles/dcs_cuda.dir/$object" | head -n 1)
    (cd "$build" && eval "$cmd $1") || return 1
  done
  ninja -C "$build" dcs_potential_bench >/dev/null || return 1
}
for shape in "$@"; do
  read -r lane blocks fraction unroll <<<"$shape"
  fraction=${fraction:-1.0}
  unroll=${unroll:-4}
  echo "## $lane points per lane, $blocks blocks per SM, exact path within R + $fraction R, $unroll atoms per step"
  flags="-DDCS_POINTS_PER_LANE=$lane -DDCS_POINTS_BLOCKS_PER_SM=$blocks"
  flags+=" -DDCS_POINTS_NEAR_FRACTION=$fraction -DDCS_POINTS_UNROLL=$unroll"
  if ! compile "$flags" >"$build/points_variant.log" 2>&1; then
    echo "(does not compile: skipped)"
    grep -m 3 error "$build/points_variant.log" || true
    continue
  fi
  "$build/bin/dcs_potential_bench" --points 1000000 --atoms 16000 --model coulomb --model screened --reps 3 |
    grep -E '^\| points'
done
compile ""
