# What the GPU benchmark scripts (bench/msm_gpu_bench.sh, bench/periodic_gpu_bench.sh) share:
# finding the test binary they run and the report's first lines. Sourced, not run.

# gpu_bench_binary BUILD_DIR SUBDIR TARGET: prints BUILD_DIR/SUBDIR/TARGET, or says how to build
# it and fails with status 2.
gpu_bench_binary() {
  local bin="$1/$2/$3"
  [[ -x $bin ]] || { echo "$bin not built (cmake --build $1 --target $3)" >&2; return 2; }
  echo "$bin"
}

# gpu_bench_setup NAME SUBDIR TARGET BUILD_DIR OUT_DIR: the script's arguments (usage
# bench/NAME.sh BUILD_DIR OUT_DIR) into build and out, the test binary into bin (or exit 2),
# the report's path OUT_DIR/NAME.md into report; makes OUT_DIR.
gpu_bench_setup() {
  local usage="usage: bench/$1.sh BUILD_DIR OUT_DIR"
  build="${4:?$usage}"
  out="${5:?$usage}"
  bin="$(gpu_bench_binary "$build" "$2" "$3")"
  mkdir -p "$out"
  report="$out/$1.md"
}

# gpu_bench_header TITLE: the title, the device (name, top SM clock) and the revision.
gpu_bench_header() {
  echo "# $1"
  echo
  echo "device: $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader 2>/dev/null | head -n 1)"
  echo "revision: ${DCS_GIT_REVISION:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
}
