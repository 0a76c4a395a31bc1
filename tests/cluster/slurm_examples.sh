#!/usr/bin/env bash
# The Slurm examples (examples/slurm/) under a real slurmctld + slurmd on this machine
# (scripts/slurm-local.sh), compared with single-process runs: a job array over 8 molecules
# (every map complete, written once, equal to one `dcs` run over the list); the same list again
# (--resume skips every input); with the MPI build, mpi-one-map.sbatch with 2 ranks under mpirun
# and srun --mpi=pmix (bit-identical to the serial run) and the requeue path (SIGTERM to the
# batch shell, the job requeued, the partial map continued and equal to the serial run).
# Usage: slurm_examples.sh DCS_BIN SOURCE_DIR [DCS_MPI_BIN]   (no MPI binary: MPI parts skipped)
# Environment: DCS_SYSTEM_PYTHON (python with h5py), DCS_SLURM_DIR (default /tmp/dcs-slurm; a
# Slurm already running there is used), DCS_SLURM_REQUIRED=1 (fail instead of skipping),
# DCS_KEEP_TMP=1. Exit: 0 passed, 1 failed, 77 skipped (Slurm cannot start here; reason printed).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 DCS_BIN SOURCE_DIR [DCS_MPI_BIN]" >&2
  exit 2
fi
DCS=$(readlink -f "$1")
SRC=$(readlink -f "$2")
MPI_BIN=${3:-${DCS_MPI_BIN:-}}
[[ -n $MPI_BIN ]] && MPI_BIN=$(readlink -f "$MPI_BIN")
PY=${DCS_SYSTEM_PYTHON:-/usr/bin/python3}
SLURM_LOCAL="$SRC/scripts/slurm-local.sh"
EXAMPLES="$SRC/examples/slurm"
APBS=/usr/share/apbs/examples
T_START=$SECONDS

WORK=$(mktemp -d "${TMPDIR:-/tmp}/dcs-slurm-test.XXXXXX")
STARTED_SLURM=0
JOBS=()
PASSED=0

log() { printf '[slurm-test %3ds] %s\n' "$((SECONDS - T_START))" "$*"; }

cleanup() {
  local status=$?
  set +e
  if [[ ${#JOBS[@]} -gt 0 && -n ${SLURM_CONF:-} ]]; then
    scancel "${JOBS[@]}" 2>/dev/null
  fi
  if [[ $STARTED_SLURM -eq 1 ]]; then "$SLURM_LOCAL" stop >/dev/null 2>&1; fi
  if [[ $PASSED -eq 1 && ${DCS_KEEP_TMP:-0} != 1 ]]; then
    rm -rf "$WORK"
  else
    echo "work directory kept: $WORK"
  fi
  exit "$status"
}
trap cleanup EXIT

skip() {
  echo "SKIP: $*"
  if [[ ${DCS_SLURM_REQUIRED:-0} == 1 ]]; then echo "(DCS_SLURM_REQUIRED=1: a failure)"; exit 1; fi
  exit 77
}

fail() {
  echo "FAIL: $*"
  local f
  for f in "$WORK"/logs/*.out; do
    [[ -r $f ]] || continue
    echo "--- $f"
    tail -n 40 "$f"
  done
  for f in "${DCS_SLURM_DIR:-/tmp/dcs-slurm}"/log/*.log; do
    [[ -r $f ]] || continue
    echo "--- last lines of $f"
    tail -n 15 "$f"
  done
  exit 1
}

# ---- preconditions --------------------------------------------------------------------------
[[ -x $DCS ]] || fail "no dcs binary at $1"
[[ -z $MPI_BIN || -x $MPI_BIN ]] || fail "DCS_MPI_BIN=$MPI_BIN is not an executable"
"$PY" -c 'import h5py, numpy' 2>/dev/null || fail "$PY cannot import h5py and numpy (python3-h5py)"
[[ -d $APBS ]] || fail "no $APBS (Debian's apbs-data; scripts/setup.sh installs it)"
if [[ $(id -u) -ne 0 ]] && ! sudo -n true 2>/dev/null; then
  skip "the local Slurm runs its daemons as root: run as root or with password-less sudo"
fi

# ---- Slurm ----------------------------------------------------------------------------------
if "$SLURM_LOCAL" status >/dev/null 2>&1; then
  log "using the Slurm already running in ${DCS_SLURM_DIR:-/tmp/dcs-slurm}"
else
  start_log="$WORK/slurm-start.log"
  STARTED_SLURM=1
  start=("$SLURM_LOCAL" start)
  # shellcheck disable=SC2054  # (the comma belongs to sudo's option)
  [[ $(id -u) -eq 0 ]] || start=(sudo -n --preserve-env=DCS_SLURM_DIR,DCS_SLURM_PORT "$SLURM_LOCAL" start)
  if ! "${start[@]}" >"$start_log" 2>&1; then
    cat "$start_log"
    skip "scripts/slurm-local.sh start failed here (output above)"
  fi
  log "started Slurm: $(tail -n 1 "$start_log")"
fi
eval "$("$SLURM_LOCAL" env)"
export SLURM_CONF
sinfo >/dev/null || fail "sinfo does not answer"
# Inside a container, OpenMPI's shared-memory single copy (CMA) may be refused; copy instead.
export OMPI_MCA_btl_vader_single_copy_mechanism=none

mkdir -p "$WORK/logs"
cd "$WORK"

# Terminal job states; anything else (PENDING, RUNNING, REQUEUED, COMPLETING...) is waited on.
FINAL='^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)$'

# wait_job ID LIMIT_S: until every task of job ID is in a terminal state; then each task must
# be COMPLETED with exit code 0:0.
wait_job() {
  local id=$1 limit=$2 t0=$SECONDS states
  while :; do
    states=$(squeue -h -r -j "$id" -t all -o '%T' 2>/dev/null || true)
    if [[ -n $states ]] && ! grep -qvE "$FINAL" <<<"$states"; then break; fi
    ((SECONDS - t0 <= limit)) || fail "job $id not finished after ${limit} s: $(squeue -h -r -j "$id" -t all -o '%i %T %r' | tr '\n' ';')"
    sleep 0.5
  done
  local bad
  bad=$(scontrol show job -o "$id" | grep -v 'JobState=COMPLETED .*ExitCode=0:0' |
        grep -o 'JobId=[0-9]* \|ArrayTaskId=[0-9]*\|JobState=[A-Z_]*\|ExitCode=[0-9:]*' | tr '\n' ' ' || true)
  [[ -z $bad ]] || fail "job $id: tasks that did not complete: $bad"
}

# mtimes DIR: "name mtime_ns" of every file in DIR, sorted.
mtimes() { find "$1" -maxdepth 1 -type f -printf '%f %T@\n' | sort; }

# same_maps A B [A B ...]: /potential bytes, /statistics attributes and the grid attributes equal.
same_maps() {
  "$PY" - "$@" <<'PYEOF'
import sys
import h5py
import numpy as np

def load(path):
    with h5py.File(path, "r") as f:
        if "resume" in f:
            raise SystemExit(f"{path}: a finished map keeps no /resume group")
        p = f["potential"]
        grid = {k: np.asarray(p.attrs[k]).tolist() for k in ("dims", "origin", "spacing", "units")}
        stats = {k: np.asarray(f["statistics"].attrs[k]).tolist() for k in f["statistics"].attrs}
        return p[...], grid, stats

args = sys.argv[1:]
for a, b in zip(args[::2], args[1::2]):
    va, ga, sa = load(a)
    vb, gb, sb = load(b)
    if ga != gb:
        raise SystemExit(f"{a} vs {b}: grids differ: {ga} vs {gb}")
    if va.dtype != vb.dtype or va.shape != vb.shape or va.tobytes() != vb.tobytes():
        d = np.abs(va.astype(np.float64) - vb.astype(np.float64)).max() if va.shape == vb.shape else "shape"
        raise SystemExit(f"{a} vs {b}: /potential differs (max |diff| {d})")
    if sa != sb:
        raise SystemExit(f"{a} vs {b}: /statistics differ: {sa} vs {sb}")
print(f"{len(args) // 2} map(s) bit-identical (/potential, /statistics, grid)")
PYEOF
}

# ---- 1. the job array -------------------------------------------------------------------------
INPUTS=(
  "$APBS/born/ion.pqr" "$APBS/solv/methanol.pqr" "$APBS/ionize/acetate.pqr"
  "$APBS/geoflow/imidazole_zap.pqr" "$APBS/hca-bind/acet.pqr" "$APBS/pka-lig/bx6_7_lig_apbs.pqr"
  "$APBS/bem/test_proteins/1ajj.pqr" "$APBS/FKBP/1d7h-min.pqr"
)
for f in "${INPUTS[@]}"; do [[ -r $f ]] || fail "apbs-data input $f is missing"; done
printf '# array test inputs\n' >inputs.txt
printf '%s\n' "${INPUTS[@]}" >>inputs.txt
GRID=(--grid 40)

log "serial reference: one dcs over the ${#INPUTS[@]} inputs"
"$DCS" --atoms "${INPUTS[@]}" "${GRID[@]}" --output-dir ref -q >logs/serial.txt 2>&1 ||
  fail "serial reference run failed: $(cat logs/serial.txt)"

submit() {  # submit SBATCH-ARGS...: sets JOB to the job id, remembered for the cleanup
  JOB=$(sbatch --parsable --chdir="$WORK" "$@") || fail "sbatch $* failed"
  JOB=${JOB%%;*}
  JOBS+=("$JOB")
}

count_lines() {  # count_lines TEXT FILES...: how many lines of FILES contain TEXT
  local text=$1; shift
  cat "$@" | grep -c -F -- "$text" || true
}

log "array 1: --array=1-7:2 (4 tasks) over ${#INPUTS[@]} inputs"
export DCS_INPUT_LIST="$WORK/inputs.txt" DCS_OUTPUT_DIR="$WORK/maps" DCS_BIN="$DCS"
submit --array=1-7:2 --output="logs/array1-%A_%a.out" "$EXAMPLES/array.sbatch" "${GRID[@]}"
wait_job "$JOB" 120
log "array 1 done (job $JOB)"

# Every input: exactly one complete map, written by exactly one task.
expected=$(for f in "${INPUTS[@]}"; do b=$(basename "$f"); echo "${b%.pqr}.h5"; done | sort)
actual=$(find maps -mindepth 1 -printf '%f\n' | sort)
[[ $actual == "$expected" ]] || fail "maps/ holds [${actual//$'\n'/ }], expected [${expected//$'\n'/ }]"
tasks=$(find logs -name 'array1-*.out' | wc -l)
[[ $tasks -eq 4 ]] || fail "expected 4 task logs, got $tasks"
for f in "${INPUTS[@]}"; do
  b=$(basename "$f")
  n=$(count_lines "$f -> $WORK/maps/${b%.pqr}.h5" logs/array1-*.out)
  [[ $n -eq 1 ]] || fail "$f was written by $n tasks (expected exactly 1)"
done
for t in 1 3 5 7; do
  grep -q -- "--shard slurm: share $(((t - 1) / 2)) of 4" logs/array1-*_"$t".out ||
    fail "task $t did not take share $(((t - 1) / 2)) of 4"
done
for f in logs/array1-*.out; do grep -q "batch: .* 0 failed" "$f" || fail "$f: no batch summary with 0 failed"; done
refs=()
for f in "${INPUTS[@]}"; do b=$(basename "$f" .pqr); refs+=("maps/$b.h5" "ref/$b.h5"); done
same_maps "${refs[@]}" || fail "array maps differ from the single-process run"
log "array 1: each input computed once, all maps equal the single-process run"

# ---- 2. resubmission: --resume skips everything ----------------------------------------------
before=$(mtimes maps)
log "array 2: --array=0-2 (other shares) over the same list, --resume"
submit --array=0-2 --output="logs/array2-%A_%a.out" "$EXAMPLES/array.sbatch" "${GRID[@]}"
wait_job "$JOB" 120
after=$(mtimes maps)
[[ $before == "$after" ]] || fail "the resubmitted array changed maps/: before [$before] after [$after]"
for f in "${INPUTS[@]}"; do
  n=$(count_lines "$f -> $WORK/maps/$(basename "$f" .pqr).h5: complete already, skipped (--resume)" \
      logs/array2-*.out)
  [[ $n -eq 1 ]] || fail "$f: expected one 'complete already, skipped' line in the array 2 logs, got $n"
done
written=$(grep -h -o 'batch: [0-9]* inputs: [0-9]* written' logs/array2-*.out | awk '{s += $4} END {print s + 0}')
[[ $written -eq 0 ]] || fail "the resubmitted array wrote $written maps"
log "array 2: every input skipped (--resume), no map touched"

# ---- 3. MPI: one map over 2 ranks -----------------------------------------------------------
if [[ -z $MPI_BIN ]]; then
  log "MPI part skipped: no MPI build (pass DCS_MPI_BIN=<build>/bin/dcs of preset mpi or mpi-cpu)"
else
  MOL="$SRC/data/2lzt.pqr"
  "$DCS" --atoms "$MOL" --grid 96 -o ref/2lzt-96.h5 -q >logs/serial-2lzt.txt 2>&1 ||
    fail "serial 2lzt run failed: $(cat logs/serial-2lzt.txt)"
  mkdir -p mpi
  for launcher in mpirun srun; do
    log "MPI: 2 ranks via $launcher, 2lzt at 96^3"
    export DCS_BIN="$MPI_BIN" DCS_ATOMS="$MOL" DCS_OUTPUT="$WORK/mpi/2lzt-$launcher.h5" DCS_LAUNCHER=$launcher
    submit --nodes=1 --ntasks-per-node=2 --output="logs/mpi-$launcher-%j.out" "$EXAMPLES/mpi-one-map.sbatch" --grid 96
    wait_job "$JOB" 120
    grep -q "2 ranks share the map" logs/mpi-$launcher-*.out || fail "$launcher: the log does not show 2 ranks sharing the map"
    same_maps "mpi/2lzt-$launcher.h5" ref/2lzt-96.h5 || fail "the $launcher map differs from the serial run"
  done

  # ---- 4. requeue: SIGTERM to the batch shell, the job requeues itself and resumes ------------
  BIG="$APBS/misc/achbp.pqr"
  BIG_GRID=(--grid 200)
  "$DCS" --atoms "$BIG" "${BIG_GRID[@]}" -o ref/achbp.h5 -q >logs/serial-achbp.txt 2>&1 ||
    fail "serial achbp run failed: $(cat logs/serial-achbp.txt)"
  log "requeue: achbp at 200^3 over 2 ranks of 1 thread, SIGTERM to the batch shell after the first checkpoint"
  # One thread per rank: the run takes seconds on any machine (not less on one with more cores);
  # 8 slabs of 25 planes, written in 4 rounds, each round checkpointed (interval 0.1 s).
  export DCS_BIN="$MPI_BIN" DCS_ATOMS="$BIG" DCS_OUTPUT="$WORK/mpi/achbp.h5" DCS_LAUNCHER=mpirun
  submit --nodes=1 --ntasks-per-node=2 --output="logs/requeue-%j.out" \
         "$EXAMPLES/mpi-one-map.sbatch" "${BIG_GRID[@]}" --threads 1 --checkpoint-interval 0.1
  job=$JOB
  # Signal once the first round is on disk: the partial file is created sparse (chunks allocated,
  # not written), so its allocated blocks grow when the first checkpoint flushes the first slabs
  # (or, on a filesystem that shows no such growth, the first progress line, logged after a round).
  t0=$SECONDS
  blocks0=""
  while :; do
    [[ -e mpi/achbp.h5 ]] && fail "the requeue job finished before it could be signalled (make the map larger)"
    if [[ -e mpi/achbp.h5.partial ]]; then
      blocks=$(stat -c %b mpi/achbp.h5.partial 2>/dev/null || echo 0)
      [[ -n $blocks0 ]] || blocks0=$blocks
      ((blocks > blocks0 + 2048)) && break  # 1 MiB more on disk than at creation
    fi
    grep -q "info: progress achbp" logs/requeue-*.out 2>/dev/null && break
    ((SECONDS - t0 < 120)) || fail "no checkpoint of mpi/achbp.h5.partial after 120 s"
    sleep 0.1
  done
  sleep 0.3  # the round's checkpoint (flush, then the plane flags) completes
  scancel --signal=TERM --batch "$job" || fail "scancel --signal=TERM --batch $job failed"
  wait_job "$job" 180
  out=$(ls logs/requeue-*.out)
  grep -q "requeueing $job" "$out" || fail "the batch script did not requeue itself"
  grep -q "(restart 1)" "$out" || fail "the job did not run a second time"
  grep -E -q "resuming .*achbp.h5.partial: [1-9][0-9]* of 200 planes are done" "$out" ||
    fail "the second run did not resume a partial map with planes done"
  read -r todo all < <(grep -o '[0-9]* of [0-9]* slabs to compute' "$out" | tail -n 1 | awk '{print $1, $3}')
  [[ -n $todo && $todo -lt $all ]] || fail "the second run computed ${todo:-?} of ${all:-?} slabs (expected fewer than all)"
  log "requeue: $(grep -o 'resuming .*' "$out" | head -n 1 | sed "s|$WORK/||"); $todo of $all slabs computed again"
  same_maps mpi/achbp.h5 ref/achbp.h5 || fail "the requeued and resumed map differs from the serial run"
fi

PASSED=1
log "PASS (${SECONDS}s in all)"
