#!/usr/bin/env bash
# On the GPU machine, in one call: build for sm_90, the whole test suite (GPU tests included),
# compute-sanitizer, the benchmarks and the seed-claims measurements. Logs and results go to
# OUTDIR; a summary is printed last. DCS_GIT_REVISION=<hash> names the commit where the copy of
# the tree has no .git.
# Usage: scripts/gpu/gpu-check.sh OUTDIR [steps...]   (default: build test sanitize bench claims
#   pipeline). Other steps: pipebench (bench/pipeline_bench.py), mpi (the MPI build's tests, one
#   GPU per rank), mpibench (bench/mpi_bench.py), bodies (the shared backend test bodies only),
#   cpubench (`dcs bench --cpu` with PyMOL from .carry-gpu/pymol), cpuprobe
#   (dcs_cpu_kernel_probe and the AVX kernels' disassembly), hybrid (the MUFU vs FMA-pipe rsqrt
#   table of dcs_potential_bench), trajectory (tests/trajectory/trajectory_device_check.py: the
#   averaged maps on the GPUs vs the CPU backend, 1 vs all GPUs, kill -9 + --resume), trajbench
#   (bench/trajectory_bench.py, frames per second), models (the physics models: model tests
#   on every CUDA kernel, --validate under each model, the kernel table with its ceilings),
#   points (compute_points on the device, --at-atoms and a mesh, 1 vs every GPU, the table),
#   python (the package built with CUDA by pip, its GPU tests, the call vs the command line),
#   e2e (bench/e2e_bench.py: end to end against the floors; E2E_ARGS="--gpus 1 2" on 2 GPUs),
#   msm (MSM on the GPU: its tests and the float64 reference's, sanitizers, a --validate run
#   with --device auto and bench/msm_gpu_bench.sh),
#   periodic (the periodic method on the GPU: its tests, memcheck, the periodic CLI cases on the
#   GPU and bench/periodic_gpu_bench.sh),
#   msmscale (bench/msm_scale_bench.py: dcs --method msm end to end at 1.5e6 atoms x 464^3 and
#   1e8 atoms x 2048^3; MSM_SCALE_CASES overrides the cases),
#   msmcost (bench/msm_cost_bench.py --device cuda: msm's CPU-calibrated work estimate against
#   the GPU's measured msm/exact time, issue 38's 2e5 atoms x 97^3 among the cases),
#   writer (bench/writer_bench.py at 1700^3, 1 and 4 writers, page cache and direct writes),
#   scaling (bench/scaling_bench.py: 1..N visible GPUs, each row with its floor).
#   Each step is one `if want` block below.
set -uo pipefail
out="${1:?usage: scripts/gpu/gpu-check.sh OUTDIR [steps...]}"
shift
steps=("$@")
((${#steps[@]})) || steps=(build test sanitize bench claims pipeline)
cd "$(dirname "$0")/../.."
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
# scripts/gpu/prepare-gpu-carry.sh.
if [[ ! -d /usr/share/apbs && -d .carry-gpu/apbs ]]; then cp -r .carry-gpu/apbs /usr/share/apbs; fi
if [[ -d .carry-gpu/pylib ]]; then export PYTHONPATH="$PWD/.carry-gpu/pylib${PYTHONPATH:+:$PYTHONPATH}"; fi
python=$(command -v python3)
# MDAnalysisTests' trajectories (no MDAnalysis there): carried in .carry-gpu/md-data.
[[ -d .carry-gpu/md-data ]] && export DCS_MD_DATA="$PWD/.carry-gpu/md-data"
# chemfiles: built here from its carried source distribution (no network on this machine).
if [[ -f .carry-gpu/chemfiles-0.10.4.tar.gz ]]; then
  DCS_CHEMFILES_SDIST="$PWD/.carry-gpu/chemfiles-0.10.4.tar.gz" bash scripts/setup-chemfiles.sh \
    >"$out/chemfiles.log" 2>&1 || { echo "chemfiles build failed"; tail -n 30 "$out/chemfiles.log"; }
fi
# libdeflate (HDF5 chunk compression) may be missing there: .carry-gpu/debs holds Debian's.
if [[ ! -f /usr/include/libdeflate.h && -d .carry-gpu/debs ]]; then
  for deb in .carry-gpu/debs/*.deb; do dpkg -x "$deb" /; done
  ldconfig
fi
# FFTW3 (libdcs's smooth PME) likewise: .carry-gpu/fftw-debs.
if [[ ! -f /usr/include/fftw3.h && -d .carry-gpu/fftw-debs ]]; then
  for deb in .carry-gpu/fftw-debs/*.deb; do dpkg -x "$deb" /; done
  ldconfig
fi

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv >"$out/device.txt" 2>&1
echo "revision: ${DCS_GIT_REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}" >>"$out/device.txt"

configure() {
  step configure configure.log cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES=90 -DDCS_ENABLE_CUDA=ON -DDCS_BUILD_TESTS=ON -DDCS_WARNINGS_AS_ERRORS=ON \
       -DDCS_SYSTEM_PYTHON="$python" -DDCS_MD_PYTHON="$python" \
       -DDCS_GIT_REVISION="${DCS_GIT_REVISION:-$(git rev-parse --short=12 HEAD 2>/dev/null)}"
}
# build_step NAME LOG [TARGET...]: the build folder configured first where it has not been, then
# the targets (every target without any) built as step NAME, logged in LOG.
build_step() {
  local name=$1 log=$2 targets=()
  shift 2
  (($#)) && targets=(--target "$@")
  [[ -f $build/build.ninja ]] || configure
  step "$name" "$log" cmake --build "$build" -j "$jobs" "${targets[@]}"
}
if want build; then
  configure
  step build build.log cmake --build "$build" -j "$jobs"
fi
if want models; then
  # Issue 22's physics models on the GPU: the shared bodies' model tests on every CUDA kernel,
  # dcs --validate on a real molecule under each model and preset, and the kernel table with the
  # rsqrt and rsqrt + ex2 ceilings measured in the same run.
  build_step "build models" build_models.log \
       dcs dcs_cuda_potential_tests dcs_cuda_coulomb_term_test dcs_potential_bench
  step "model bodies: every CUDA kernel" models_bodies.log \
       "$build/tests/cuda/potential/dcs_cuda_potential_tests" --gtest_filter='*Model*:*Analytic*'
  step "Coulomb term edge cases on the device" models_coulomb.log \
       "$build/tests/cuda/potential/dcs_cuda_coulomb_term_test"
  mol=$(ls data/*.pqr | head -n 1)
  for opts in "--ionic-strength 0.15" "--dielectric-model distance --dielectric 4" \
              "--preset chimerax" "--preset pymol" ""; do
    tag=$(echo "${opts:-coulomb}" | tr -c 'a-z0-9' '_')
    step "dcs --device cuda $opts --validate (all points)" "models_run_$tag.log" \
         "$build/bin/dcs" --atoms "$mol" --grid 97 $opts --device cuda --validate \
         --validate-points 0 -o "$out/model_$tag.h5" --force --no-progress
  done
  step "model kernel table, 256^3 x 16 000 atoms" models_bench.md timeout 300 \
       "$build/bin/dcs_potential_bench" --grid 256 --atoms 16000 --model coulomb --model screened \
       --model distance --kernel production --kernel production-mufu --kernel production-sw4 --reps 5
fi

if want points; then
  # The potential at points on the GPU: the shared points bodies and the CUDA points tests, dcs
  # --validate on a molecule's atoms and a mesh, 1 GPU vs every GPU (the CSVs byte for byte),
  # and the points kernel table against the same run's ceilings.
  build_step "build points" build_points.log dcs dcs_cuda_potential_tests dcs_potential_bench
  step "points tests on the device" points_tests.log \
       "$build/tests/cuda/potential/dcs_cuda_potential_tests" --gtest_filter='*Points*:*points*'
  mol=$(ls data/*.pqr | head -n 1)
  mesh=tests/data/mesh/sphere_binary.ply
  step "dcs --device cuda --at-atoms --validate (all points)" points_atoms.log \
       "$build/bin/dcs" --atoms "$mol" --at-atoms --device cuda:0 --validate --validate-points 0 \
       -o "$out/points_gpu0.h5" --force --no-progress
  step "dcs --device cuda --points mesh --ionic-strength 0.15 --validate" points_mesh.log \
       "$build/bin/dcs" --atoms "$mol" --points "$mesh" --offset 1.4 --ionic-strength 0.15 \
       --device cuda --validate -o "$out/mesh_gpu.h5" --force --no-progress
  step "dcs --device cuda (every GPU) --at-atoms" points_atoms_all.log \
       "$build/bin/dcs" --atoms "$mol" --at-atoms --device cuda -o "$out/points_gpus.h5" --force \
       --no-progress
  # The CSVs' data lines (their # lines name the command and device, which differ).
  step "1 GPU and every GPU: the same values (CSV data bytes)" points_cmp.log \
       cmp <(grep -v '^#' "$out/points_gpu0.csv") <(grep -v '^#' "$out/points_gpus.csv")
  step "points kernel table, 10^6 points x 16 000 atoms" points_bench.md timeout 300 \
       "$build/bin/dcs_potential_bench" --points 1000000 --atoms 16000 --model coulomb \
       --model screened --model distance --reps 5
fi

if want bodies; then
  # One process per test binary, so the float64 references are computed once.
  build_step "build test bodies" build_bodies.log \
       dcs_cuda_potential_tests dcs_cuda_coulomb_term_test
  step "backend bodies: every CUDA kernel" bodies_cuda.log \
       "$build/tests/cuda/potential/dcs_cuda_potential_tests"
  step "Coulomb term edge cases on the device" bodies_coulomb.log \
       "$build/tests/cuda/potential/dcs_cuda_coulomb_term_test"
  grep -hE "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|FAILED  \]" "$out/bodies_cuda.log" "$out/bodies_coulomb.log" | tail -n 30
fi
if want cpubench; then
  build_step "build dcs" build_dcs.log dcs
  # PyMOL, the CPU table's peer: a CPython wheel (.carry-gpu/pymol) unpacked beside the tree, with
  # the GL client libraries its module links (.carry-gpu/gl-debs) unpacked there too, not into /.
  if compgen -G ".carry-gpu/pymol/*.whl" >/dev/null; then
    pyroot=$PWD/.carry-gpu/pymol-root glroot=$PWD/.carry-gpu/gl-root
    rm -rf "$pyroot" "$glroot"
    mkdir -p "$pyroot" "$glroot"
    for whl in .carry-gpu/pymol/*.whl; do "$python" -m zipfile -e "$whl" "$pyroot"; done
    for deb in .carry-gpu/gl-debs/*.deb; do [[ -f $deb ]] && dpkg -x "$deb" "$glroot"; done
    export DCS_PYMOL_PYTHON="$python" PYTHONPATH="$pyroot${PYTHONPATH:+:$PYTHONPATH}"
    export LD_LIBRARY_PATH="$glroot/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  { lscpu; grep -m1 -o -w 'avx512[a-z_]*\|avx2\|fma' /proc/cpuinfo | sort -u | tr '\n' ' '; echo; } \
    >"$out/cpu.txt" 2>&1
  grep -o -w 'avx512f\|avx2\|fma' /proc/cpuinfo | sort | uniq -c >>"$out/cpu.txt"
  step "dcs bench --cpu" bench_cpu.log "$build/bin/dcs" bench --cpu --results-dir "$out"
  step "dcs bench --cpu, rows of 128/129/136" bench_cpu_rows.log "$build/bin/dcs" bench --cpu \
       --sizes 128 129 136 --atom-counts 4000 --kernel simd-avx512 simd-avx2 --repetitions 3 \
       --results-dir "$out/rows"
  grep -hE "^\|" "$out/bench_cpu.log" "$out/bench_cpu_rows.log" | head -n 60
fi
if want cpuprobe; then
  build_step "build dcs_cpu_kernel_probe" build_probe.log dcs dcs_cpu_kernel_probe
  { c++ --version | head -n 1; lscpu | grep -E "Model name|MHz|Thread|Core"; } >"$out/probe_host.txt" 2>&1
  step "CPU kernel probe" cpuprobe.md "$build/bin/dcs_cpu_kernel_probe" --nx 96 128 129 136 --atoms 4000
  cat "$out/cpuprobe.md"
  for f in 'sweep_row<dcs::cpu_fast::avx2::Vec, 4' 'sweep_row<dcs::cpu_fast::avx512::Vec, 4' \
           'sweep_tail<dcs::cpu_fast::avx512::Vec' 'sweep_tail<dcs::cpu_fast::avx2::Vec'; do
    echo "=== $f"
    objdump -d --no-show-raw-insn -C "$build/bin/dcs" | awk -v f="$f" 'index($0, f) && /^[0-9a-f]+ </ {p=1} p && /^$/ {p=0} p'
  done >"$out/kernels.asm" 2>&1
fi
if want hybrid; then
  build_step "build dcs_potential_bench" build_hybrid.log dcs_potential_bench
  step "hybrid table, 16 000 atoms" hybrid.md timeout 200 "$build/bin/dcs_potential_bench" --grid 256 --grid 129 \
       --atoms 16000 --kernel production --kernel production-sw4 --kernel production-sw2 --kernel production-mufu --reps 5
  step "hybrid table, 10^6 atoms" hybrid_1e6.md timeout 150 "$build/bin/dcs_potential_bench" --grid 256 \
       --atoms 1000000 --kernel production --kernel production-sw4 --kernel production-mufu --reps 2
  grep -hE "^\|" "$out/hybrid.md" "$out/hybrid_1e6.md" | head -n 40
fi
if want test; then
  step "ctest (all labels)" ctest.log ctest --test-dir "$build" -j 4 --output-on-failure --timeout 900 \
       -R "${TEST_REGEX:-.}"
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
if want msm; then
  # MSM on the GPU (kernels/src/msm): its tests (GPU vs CPU MSM vs float64 exact, slab splits
  # and 2 GPUs bit for bit), the CPU MSM tests it shares prepare() with, memcheck and racecheck
  # on a small case, dcs --method msm --validate on 2lzt with the default --device auto (which
  # must take the GPU, and compute the float64 reference there: kernels/src/reference, with its
  # tests against the CPU reference), and the benchmark (bench/msm_gpu_bench.sh: 1.5e6 atoms x
  # 464^3 at 1e-3, goal <= 1 s on one H100).
  build_step "build msm" build_msm.log dcs dcs_cuda_msm_tests dcs_msm_tests dcs_cuda_reference_tests
  step "msm CUDA tests" msm_cuda_tests.log "$build/tests/cuda/msm/dcs_cuda_msm_tests"
  step "msm CPU tests" msm_cpu_tests.log "$build/tests/unit/dcs_msm_tests"
  step "float64 reference CUDA tests" reference_cuda_tests.log \
       "$build/tests/cuda/reference/dcs_cuda_reference_tests"
  for tool in memcheck racecheck; do
    step "msm compute-sanitizer $tool" "msm_$tool.log" compute-sanitizer --tool "$tool" \
         --error-exitcode 1 "$build/tests/cuda/msm/dcs_cuda_msm_tests" \
         --gtest_filter='MsmCuda.PlaneStatistics*:MsmCuda.OtherModels*'
    step "reference compute-sanitizer $tool" "reference_$tool.log" compute-sanitizer \
         --tool "$tool" --error-exitcode 1 "$build/tests/cuda/reference/dcs_cuda_reference_tests" \
         --gtest_filter='ReferenceCuda.OneAtom*:ReferenceCuda.EdgeCases'
  done
  step "dcs --method msm --validate -v (2lzt, 129^3, --device auto)" msm_run.log \
       "$build/bin/dcs" --atoms data/2lzt.pqr --grid 129 --method msm --msm-error 1e-3 \
       --validate -v -o "$out/msm_2lzt.h5" --force --no-progress
  step "--device auto ran msm and its reference on the GPU" msm_run_on_gpu.log \
       grep -E "float64 reference at .* on .*cuda:" "$out/msm_run.log"
  step "msm benchmark (1.5e6 atoms x 464^3)" msm_bench.log timeout 1200 \
       bash bench/msm_gpu_bench.sh "$build" "$out"
  grep -hE "^\[  (PASSED|FAILED|SKIPPED) |rel RMS|prepare|atoms x" "$out/msm_cuda_tests.log" \
       "$out/msm_bench.log" | tail -n 40
fi
if want periodic; then
  # The periodic (Ewald) method on the GPU (kernels/src/periodic): its tests (GPU vs the CPU ewald
  # backend and the float64 Ewald sum: a single charge, a truncated octahedron, 2lzt in a box,
  # tz2 frame 0 from .carry-gpu/md-data/tz2_frame0.pqr; slab splits, reruns and a second GPU
  # bit for bit; at atoms), the CPU ewald tests, memcheck on the small cases, the periodic CLI
  # cases with DCS_TEST_DEVICE=cuda, and bench/periodic_gpu_bench.sh (frames per second).
  build_step "build periodic" build_periodic.log \
       dcs periodic_dump dcs_cuda_periodic_tests dcs_ewald_tests
  step "periodic CUDA tests" periodic_cuda_tests.log "$build/tests/cuda/periodic/dcs_cuda_periodic_tests"
  step "ewald CPU tests" ewald_cpu_tests.log "$build/tests/unit/dcs_ewald_tests"
  step "periodic compute-sanitizer memcheck" periodic_memcheck.log compute-sanitizer \
       --tool memcheck --error-exitcode 1 "$build/tests/cuda/periodic/dcs_cuda_periodic_tests" \
       --gtest_filter='EwaldCuda.SingleCharge*:EwaldCuda.Refuses*'
  step "periodic CLI on the GPU" periodic_cli.log env DCS_TEST_DEVICE=cuda \
       ctest --test-dir "$build" -R 'periodic\.cli_' --output-on-failure
  step "periodic GPU bench" periodic_bench.log bench/periodic_gpu_bench.sh "$build" "$out"
fi
if want msmcost; then
  build_step "build dcs" build_dcs.log dcs
  step "msm cost on the GPU" msm_cost.log "$python" bench/msm_cost_bench.py "$build/bin/dcs" \
       "$out/msmcost" --device cuda --cases 100:97:1e-3 100:97:1e-5 27:97:1e-5 27:129:1e-3 8:65:1e-5
  cat "$out/msmcost/msm_cost_bench.md" 2>/dev/null
fi
if want msmscale; then
  # The issue's two scale goals through the real binary, each against its floor (the script's
  # header): the inputs are written here by dcs_tile_atoms (3.6 GB for 1e8 atoms), the 1e8 map
  # is 34 GB on this machine's disk for the file run.
  build_step "build msmscale" build_msmscale.log dcs dcs_tile_atoms
  step "msm at scale" msm_scale.log timeout 1500 "$python" bench/msm_scale_bench.py \
       "$build/bin/dcs" "$out/msmscale" --cases ${MSM_SCALE_CASES:-1.5e6:464 1e8:2048}
  tail -n 8 "$out/msm_scale.log"
fi
if want pipeline; then
  # 1 vs all GPUs, kill -9 and --resume (the pipeline tests on the GPUs), memcheck on every GPU.
  # It builds what it runs when the call has no `build` step (a no-op after one).
  build_step "build pipeline" build_pipeline.log
  gpus=$(nvidia-smi --list-gpus | wc -l)
  # Every GPU count the host allows, 1, 2, 4, ... and all (CUDA_VISIBLE_DEVICES), and one GPU
  # named with cuda:0 while all are visible: the tests' limits follow the count they run on.
  counts=()
  for ((n = 1; n < gpus; n *= 2)); do counts+=("$n"); done
  counts+=("$gpus")
  for n in "${counts[@]}"; do
    visible=$(seq -s, 0 $((n - 1)))
    step "pipeline tests on $n of $gpus GPU(s)" "pipeline_gpu_$n.log" env DCS_TEST_DEVICE=cuda \
         CUDA_VISIBLE_DEVICES="$visible" \
         ctest --test-dir "$build" -L pipeline -R "pipeline\\." -j 2 --output-on-failure
  done
  if ((gpus > 1)); then
    step "pipeline tests on cuda:0 of $gpus" pipeline_gpu_cuda0.log env DCS_TEST_DEVICE=cuda:0 \
         ctest --test-dir "$build" -L pipeline -R "pipeline\\." -j 2 --output-on-failure
  fi
  mol=$(ls data/*.pqr | head -n 1)
  step "compute-sanitizer memcheck, every GPU" memcheck_pipeline.log compute-sanitizer --tool memcheck \
       --error-exitcode 1 "$build/bin/dcs" --atoms "$mol" --grid 97 --device cuda --memory-limit 8M \
       -o "$out/sanitized.h5" --force --validate
  rm -f "$out/sanitized.h5"
fi
if want python; then
  # The Python package on the GPU (issue 23): built with CUDA by pip from this tree against the
  # machine's own nanobind and scikit-build-core (nothing can be fetched there) into a private
  # folder, its pytest files with device="cuda" (test_gpu.py; MDAnalysis and PyMOL are not on
  # the machine, so those files skip), and bench/python_vs_cli.py at 256^3 (the call against
  # the command line's compute time). Needs the build step's dcs binary.
  build_step "build dcs for the python tests" build_python_dcs.log dcs
  site=$build/python-site
  step "pip install . (CUDA)" python_install.log env CMAKE_BUILD_PARALLEL_LEVEL="$jobs" \
       "$python" -m pip install --no-build-isolation --no-deps --no-index --upgrade \
       --target "$site" -Ccmake.define.DCS_ENABLE_CUDA=ON -Cbuild-dir=build/python-gpu .
  for case in gpu maps errors; do
    step "python tests: test_$case.py" "python_$case.log" env PYTHONPATH="$site:$PWD/tests/python" \
         DCS_BINARY="$PWD/$build/bin/dcs" "$python" tests/python/run_pytest.py \
         "tests/python/test_$case.py"
  done
  big=$(ls /usr/share/apbs/examples/misc/achbp.pqr 2>/dev/null || echo data/2lzt.pqr)
  step "python call vs command line, 256^3" python_bench.md env PYTHONPATH="$site" \
       "$python" bench/python_vs_cli.py "$build/bin/dcs" --atoms "$big" --grid 256 --device cuda
fi

if want trajectory; then
  step "trajectory on the GPUs (vs CPU, 1 vs all GPUs, kill -9 + --resume)" trajectory_gpu.log \
       "$python" tests/trajectory/trajectory_device_check.py --dcs "$build/bin/dcs" \
       --data "${DCS_MD_DATA:-.carry-gpu/md-data}"
fi
if want trajbench; then
  step "trajectory benchmark" trajbench.log "$python" bench/trajectory_bench.py "$build/bin/dcs" \
       "$out" ${TRAJBENCH_ARGS:-}
fi
if want pipebench; then
  step "pipeline benchmark" pipebench.log "$python" bench/pipeline_bench.py "$build/bin/dcs" "$out" \
       ${PIPEBENCH_ARGS:-}
fi
if want e2e; then
  step "end to end against the floors" e2e.log "$python" bench/e2e_bench.py "$build/bin/dcs" "$out" \
       ${E2E_ARGS:-}
fi
if want writer; then
  # The map writer against the parallel disk floor in the same call (issue 36 item 3): the
  # scratch files (about 20 GB at 1700^3) go to /tmp and are removed; WRITER_ARGS overrides.
  [[ -x $build/bin/dcs ]] || build_step "build dcs" build_dcs.log dcs
  step "writer against the disk floor" writer.log "$python" bench/writer_bench.py "$build/bin/dcs" \
       /tmp/dcs-writer-bench ${WRITER_ARGS:---grid 1700 --writers 1 4 --modes page direct}
  cp /tmp/dcs-writer-bench/writer_bench.md "$out/" 2>/dev/null; rm -rf /tmp/dcs-writer-bench
fi
if want scaling; then
  # 1..N visible GPUs (issue 36 item 4): bench/scaling_bench.py's table; SCALING_ARGS adds
  # options (e.g. "--cases exact256 traj", "--gpus 1 2 4").
  [[ -x $build/bin/dcs ]] || build_step "build dcs" build_dcs.log dcs
  step "scaling over the GPUs" scaling.log "$python" bench/scaling_bench.py "$build/bin/dcs" \
       "$out/scaling" ${SCALING_ARGS:-}
fi
if want mpi || want mpibench; then
  # OpenMPI and parallel HDF5 from .carry-gpu/mpi-debs (scripts/gpu/prepare-gpu-carry.sh) where
  # missing: the machine's own OpenMPI when it has one (libmpi.so.40 either way), else all.
  if [[ ! -f /usr/include/hdf5/openmpi/hdf5.h && -d .carry-gpu/mpi-debs ]]; then
    for deb in .carry-gpu/mpi-debs/*.deb; do
      if command -v mpirun >/dev/null && [[ $(basename "$deb") != *hdf5* && $(basename "$deb") != libaec* && $(basename "$deb") != libsz* ]]; then
        continue
      fi
      dpkg -x "$deb" /
    done
    # dpkg -x runs no maintainer scripts: make the alternatives' links by hand.
    for tool in mpirun mpiexec mpicc mpicxx h5pcc; do
      [[ -e /usr/bin/$tool || ! -e /usr/bin/$tool.openmpi ]] || ln -s "$tool.openmpi" "/usr/bin/$tool"
    done
    [[ -e /usr/bin/mpirun || ! -e /usr/bin/orterun ]] || ln -s orterun /usr/bin/mpirun
    ldconfig
  fi
  { command -v mpirun; mpirun --version | head -n 1; ls -l /usr/bin/h5pcc*; } >"$out/mpi_env.txt" 2>&1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpibuild=build/gpu-mpi
  rm -f "$mpibuild/CMakeCache.txt"  # HDF5 may have been unpacked since the last configure
  h5pcc_arg=()
  [[ -x /usr/bin/h5pcc.openmpi ]] && h5pcc_arg=(-DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.openmpi)
  step "configure (MPI)" configure_mpi.log cmake -S . -B "$mpibuild" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES=90 -DDCS_ENABLE_CUDA=ON -DDCS_ENABLE_MPI=ON -DDCS_BUILD_TESTS=ON \
       -DDCS_WARNINGS_AS_ERRORS=ON -DDCS_SYSTEM_PYTHON="$python" -DDCS_MD_PYTHON="$python" \
       "${h5pcc_arg[@]}" \
       -DDCS_GIT_REVISION="${DCS_GIT_REVISION:-$(git rev-parse --short=12 HEAD 2>/dev/null)}"
  step "build (MPI)" build_mpi.log cmake --build "$mpibuild" -j "$jobs" --target dcs
fi
if want mpi; then
  # One GPU per rank (shared where there are fewer GPUs), compared with the serial build.
  step "MPI tests on GPUs" mpi_gpu.log env DCS_TEST_DEVICE=cuda DCS_SERIAL_BIN="$PWD/$build/bin/dcs" \
       ctest --test-dir "$mpibuild" -L mpi -R "${MPI_TEST_REGEX:-.}" --output-on-failure
fi
if want mpibench; then
  step "MPI benchmark" mpibench.log "$python" bench/mpi_bench.py "$mpibuild/bin/dcs" "$out" ${MPIBENCH_ARGS:-}
fi
if want claims && [[ -x scripts/gpu/seed_claims.sh ]]; then
  step "seed claims (ncu)" claims.log scripts/gpu/seed_claims.sh "$out" "$build"
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
