#!/usr/bin/env bash
# Set-up and the whole test suite in one command (CI runs exactly this). GPU tests skip, saying
# why, where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$(scripts/setup.sh | tail -n 1)
# The Slurm examples' test runs the MPI example when the MPI build exists.
[[ "${DCS_NO_MPI:-0}" == 1 ]] || export DCS_MPI_BIN="$PWD/build/mpi-cpu/bin/dcs"
ctest --preset "$preset" -j "$(nproc)" "$@"
# MPI ranks under mpirun (the MPI build), compared with the serial build's maps.
if [[ "${DCS_NO_MPI:-0}" != 1 ]]; then
  DCS_SERIAL_BIN="$PWD/build/$preset/bin/dcs" ctest --preset mpi-cpu -L mpi "$@"
fi
