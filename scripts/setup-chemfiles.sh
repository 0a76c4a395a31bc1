#!/usr/bin/env bash
# Builds chemfiles (the C++ library that reads DCD, XTC, TRR, TPR, Amber NetCDF and, through VMD's
# molfile plugin, PSF) from the source distribution on PyPI, whose lib/ is the whole library
# with its dependencies vendored as tarballs: it configures without network access and builds as
# a static library (about 5 minutes on 2 cores). Installed into .deps/chemfiles-VERSION/
# (git-ignored); CMake finds it there (DCS_CHEMFILES_DIR). Idempotent: rebuilt when the patches
# in scripts/chemfiles-patches/ change (their checksum is the stamp).
# The patches fix what chemfiles 0.10.4 gets wrong for dcs's users; each says why in its lines.
# Usage: scripts/setup-chemfiles.sh   (DCS_CHEMFILES_SDIST=PATH: that source tarball instead of
# PyPI's, for machines without network: the GPU machine builds from a carried copy;
# DCS_CHEMFILES_PYTHON: the interpreter whose pip downloads it, default python3). The CMake
# configure runs this script when the default prefix has no chemfiles (io/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.10.4
prefix="$PWD/.deps/chemfiles-$version"
stamp="$(cat scripts/chemfiles-patches/*.patch | sha256sum | cut -d' ' -f1)"
# One build at a time per prefix: configures of several build trees (presets, worktrees sharing
# .deps, the Python package) may start this at once; the later ones wait and then find it done.
mkdir -p "$(dirname "$prefix")"
exec 9>"$prefix.lock"
flock 9
if [[ -f "$prefix/.dcs-built" && "$(cat "$prefix/.dcs-built")" == "$stamp" ]]; then
  echo "setup-chemfiles: $prefix is up to date" >&2
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ -n "${DCS_CHEMFILES_SDIST:-}" ]]; then
  cp "$DCS_CHEMFILES_SDIST" "$work/chemfiles-$version.tar.gz"
else
  # An interpreter with pip: the one asked for, else python3. Under `pip install .` the
  # configure passes the build's own interpreter, whose isolated environment hides pip
  # (PYTHONPATH points into pip's overlay): each candidate is tried without it.
  pip_python=""
  for candidate in "${DCS_CHEMFILES_PYTHON:-}" python3 /usr/bin/python3; do
    if [[ -n "$candidate" ]] && env -u PYTHONPATH -u PYTHONNOUSERSITE "$candidate" -c "import pip" 2>/dev/null; then
      pip_python="$candidate"
      break
    fi
  done
  [[ -n "$pip_python" ]] || { echo "setup-chemfiles: no Python with pip to download chemfiles' source (apt install python3-pip)" >&2; exit 1; }
  env -u PYTHONPATH -u PYTHONNOUSERSITE "$pip_python" -m pip download -q --disable-pip-version-check \
    --no-deps --no-binary chemfiles "chemfiles==$version" -d "$work" >&2
fi
tar -xzf "$work/chemfiles-$version.tar.gz" -C "$work"
for p in scripts/chemfiles-patches/*.patch; do
  patch -s -p1 -d "$work/chemfiles-$version" <"$p"
done
rm -rf "$prefix"
# Position-independent: the Python module (issue 23) links the same archive.
cmake -S "$work/chemfiles-$version/lib" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCHFL_BUILD_TESTS=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >&2  # CMake 4 refuses its minimum of 3.x < 3.5 otherwise
cmake --build "$work/build" -j "$(nproc)" >&2
cmake --install "$work/build" >&2
echo "$stamp" >"$prefix/.dcs-built"
echo "setup-chemfiles: built chemfiles $version into $prefix" >&2
