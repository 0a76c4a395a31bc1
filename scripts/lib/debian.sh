# Sourced by the set-up scripts: install_missing_debs NAME PACKAGE... installs, with apt-get
# (through sudo when not root), those of the Debian packages not installed yet, saying which on
# stderr as NAME.

# The packages building the dcs binary needs (scripts/setup-build.sh; scripts/setup.sh adds the
# tests' on top): the compilers and libraries of the CPU build (GoogleTest: the presets configure
# the tests), and python3 with pip, which fetches chemfiles' source (scripts/setup-chemfiles.sh).
dcs_build_packages=(cmake ninja-build g++ pkg-config libhdf5-dev libcli11-dev libspdlog-dev
                    libfmt-dev libgtest-dev zlib1g-dev libdeflate-dev libssl-dev python3 python3-pip
                    libfftw3-dev)  # libfftw3-dev: smooth PME's FFTs (libdcs/src/periodic/pme.cpp)
install_missing_debs() {
  local name=$1 p
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "$name: installing ${missing[*]}" >&2
  local sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
}
