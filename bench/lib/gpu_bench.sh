# What the GPU benchmark scripts (bench/msm_gpu_bench.sh, bench/periodic_gpu_bench.sh) share:
# finding the test binary they run and the report's first lines. Sourced, not run.

# gpu_bench_binary BUILD_DIR SUBDIR TARGET: prints BUILD_DIR/SUBDIR/TARGET, or says how to build
# it and fails with status 2.
gpu_bench_binary() {
  local bin="$1/$2/$3"
  [[ -x $bin ]] || { echo "$bin not built (cmake --build $1 --target $3)" >&2; return 2; }
  echo "$bin"
}

# gpu_bench_header TITLE: the title, the device (name, top SM clock) and the revision.
gpu_bench_header() {
  echo "# $1"
  echo
  echo "device: $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader 2>/dev/null | head -n 1)"
  echo "revision: ${DCS_GIT_REVISION:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
}
