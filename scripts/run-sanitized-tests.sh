#!/usr/bin/env bash
# The whole CPU test suite again, built with AddressSanitizer and UndefinedBehaviorSanitizer
# (preset "sanitize": g++, RelWithDebInfo, no recovery). Any finding makes the instrumented
# program exit 86, which fails its test. The MPI and Slurm tests run under scripts/run-tests.sh
# only (mpirun and slurmd are not instrumented, and they drive the same code paths), and so does
# pipeline.memory_limit_bounds_the_resident_set: it measures the peak RSS against the memory
# budget, which ASan's shadow memory and quarantine inflate by design (92 MiB for a 16 MiB plan);
# likewise hostile.dev_zero_fails_fast_in_bounded_memory (a peak RSS bound) and
# hostile.threads_that_cannot_start_give_a_clear_error (a 400 MiB address-space limit, which
# ASan's shadow reservation alone exceeds). Left out as well, to keep CI's time bounded, what
# spends its time outside dcs's code: the viewers' readers and renderers and the presets' checks
# against PyMOL and ChimeraX (label viewers: the writers they open run under the sanitizers in
# the io and cli tests), the packaging tests (label install: install.prefix also runs under
# strace, where LeakSanitizer cannot work) and the CPU benchmark tables (CpuBench: the kernels
# they time run under the sanitizers in the backend tests).
# The preset sets DCS_TEST_SANITIZED=1, with which the slowest tests take a smaller but still
# representative case than in scripts/run-tests.sh (the binary is about 10 times slower under
# ASan): ParallelReader.SameAsSerialOnEveryCorpusFile one thread-count x chunk-size combination
# per call on the corpus files above 16 KiB, rotating over files (every combination on the smaller
# files); MsmDeterminism.SameBitsForAnySlabSplitAndThreadCount each thread count with one slab
# size; hostile/store_tests.py, tests/pipeline/pipeline_cli_tests.py, the kill -9 cases of
# tests/trajectory/trajectory_tests.py and the signal tests of tests/integration and
# tests/hostile smaller grids, with the same slab plans where the test is about them; the
# physics preset checks skip their printed-only float64 numpy reference. The same code paths run,
# with the same assertions; see each test's comment.
# CI runs this after scripts/run-tests.sh, which installs what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "$(nproc)"
ctest --preset sanitize -j "$(nproc)" "$@"
