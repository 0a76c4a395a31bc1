#!/usr/bin/env bash
# Checks that the C++/CUDA sources git tracks, or would track (new files not ignored), are
# formatted as .clang-format says (no file is changed); --fix formats them in place instead. Needs clang-format 14 (other versions format a
# few constructs differently) and git.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=$(command -v clang-format-14 || command -v clang-format) ||
  { echo "check-format.sh: clang-format (14) not found" >&2; exit 1; }
mode=(--dry-run -Werror)
[[ "${1:-}" == --fix ]] && mode=(-i)
git ls-files -z --cached --others --exclude-standard '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.c' |
  xargs -0 -r "$clang_format" "${mode[@]}"
