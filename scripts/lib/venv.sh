# Sourced by the scripts that make the Python venvs (setup-md.sh, setup-python.sh,
# setup-viewers.sh): each is Debian's python3 with pinned PyPI packages, and VENV/.dcs-pins
# records what it was made with, so that a second run keeps a venv whose pins match. Sources
# debian.sh (install_missing_debs) for python3-venv.
source "$(dirname "${BASH_SOURCE[0]}")/debian.sh"

# venv_up_to_date NAME VENV STAMP: true, saying so on stderr as NAME, when VENV was made with
# STAMP (the pins, one a line).
venv_up_to_date() {
  local name=$1 venv=$2 want=$3
  [[ -x "$venv/bin/python" && -f "$venv/.dcs-pins" && "$(cat "$venv/.dcs-pins")" == "$want" ]] ||
    return 1
  echo "$name: $venv is up to date" >&2
}

# new_pinned_venv VENV [VENV OPTION...] -- PIN...: VENV made afresh from /usr/bin/python3 (with
# the options of `python3 -m venv`) and the pins installed. The caller writes the stamp
# (VENV/.dcs-pins) once its own checks passed, so that a half-made venv is made again.
new_pinned_venv() {
  local venv=$1 options=()
  shift
  while [[ $1 != -- ]]; do
    options+=("$1")
    shift
  done
  shift
  rm -rf "$venv"
  /usr/bin/python3 -m venv "${options[@]}" "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" >&2
}

# pinned_venv NAME VENV STAMP FINISH [VENV OPTION...] -- PIN...: VENV as made with STAMP (the
# pins, one a line): kept when it was (venv_up_to_date); else python3-venv installed where
# missing, VENV made afresh (new_pinned_venv), finished by the caller's command FINISH (more
# installs, import checks; `true` for none) and only then stamped.
pinned_venv() {
  local name=$1 venv=$2 stamp=$3 finish=$4
  shift 4
  venv_up_to_date "$name" "$venv" "$stamp" && return 0
  install_missing_debs "$name" python3-venv
  new_pinned_venv "$venv" "$@"
  "$finish"
  echo "$stamp" > "$venv/.dcs-pins"
}
