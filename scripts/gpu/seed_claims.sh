#!/usr/bin/env bash
# Measures the seeds' quantitative claims with Nsight Compute on the GPU machine and writes a
# Markdown table beside each claim (the content of docs/seed-claims.md).
#
# Usage: scripts/gpu/seed_claims.sh OUTDIR [BUILD_DIR] [options]
#   BUILD_DIR                 where bin/dcs_reduce_bench (and bin/dcs_potential_bench) are
#                             (default build/gpu)
#   --reduce-bench PATH       the reduction driver (default BUILD_DIR/bin/dcs_reduce_bench)
#   --potential-bench PATH    a potential driver taking --grid N --atoms N --kernel NAME --reps R
#                             (default BUILD_DIR/bin/dcs_potential_bench when it exists)
#   --potential-grid N        grid edge for the potential kernels (default 128)
#   --potential-atoms N       atoms (default 2000: one constant-memory chunk)
#   --no-potential            skip the potential kernels
#   --ladder-reps R           repetitions of the timed ladder (default 20)
# Writes OUTDIR/claims/ (raw ncu CSV exports, logs) and OUTDIR/seed-claims.md. Counters are read
# with `ncu --clock-control none` (clocks are left as found). Exit status: 0 when every step ran.
set -uo pipefail

out="${1:?usage: scripts/gpu/seed_claims.sh OUTDIR [BUILD_DIR] [options]}"
shift
build=build/gpu
if [[ $# -gt 0 && $1 != --* ]]; then build=$1; shift; fi
reduce_bench="$build/bin/dcs_reduce_bench"
potential_bench="$build/bin/dcs_potential_bench"
potential_grid=128
potential_atoms=2000
ladder_reps=20
want_potential=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --reduce-bench) reduce_bench=$2; shift 2 ;;
    --potential-bench) potential_bench=$2; shift 2 ;;
    --potential-grid) potential_grid=$2; shift 2 ;;
    --potential-atoms) potential_atoms=$2; shift 2 ;;
    --no-potential) want_potential=0; shift ;;
    --ladder-reps) ladder_reps=$2; shift 2 ;;
    *) echo "seed_claims.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")" && pwd)"
claims="$out/claims"
mkdir -p "$claims"
: >"$claims/metrics_dropped.txt"
NCU=${NCU:-ncu}
status=0

if ! command -v "$NCU" >/dev/null; then
  echo "seed_claims.sh: Nsight Compute ($NCU) not found" >&2
  exit 1
fi
[[ -x $reduce_bench ]] || { echo "seed_claims.sh: $reduce_bench not built" >&2; exit 1; }

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1
  echo ", $(date -u +%Y-%m-%d), $("$NCU" --version 2>/dev/null | tail -n 1)"
  git -C "$here/../.." rev-parse --short=12 HEAD 2>/dev/null | sed 's/^/, git /'
} | tr -d '\n' >"$claims/device.txt"

# profile NAME METRICS KERNEL_REGEX EXTRA_NCU_ARGS -- COMMAND...
# Runs ncu; when it rejects a metric, drops that metric (recorded in metrics_dropped.txt) and
# tries again, so one unknown counter does not lose the others.
profile() {
  local name=$1 metrics=$2 regex=$3; shift 3
  local extra=()
  while [[ $1 != -- ]]; do extra+=("$1"); shift; done
  shift
  local attempt
  for attempt in 1 2 3 4; do
    "$NCU" --clock-control none --csv --page raw --print-units base \
      --print-metric-instances details -k "regex:$regex" "${extra[@]}" --metrics "$metrics" \
      "$@" >"$claims/$name.csv" 2>"$claims/$name.err"
    local rc=$?
    local bad=()
    local m
    for m in ${metrics//,/ }; do
      grep -q "ERROR.*${m%%.*}" "$claims/$name.err" && bad+=("$m")
    done
    if [[ $rc -eq 0 && ${#bad[@]} -eq 0 ]]; then return 0; fi
    if [[ ${#bad[@]} -eq 0 ]]; then
      echo "seed_claims.sh: ncu failed for $name (exit $rc), see $claims/$name.err" >&2
      return 1
    fi
    printf '%s\n' "${bad[@]}" >>"$claims/metrics_dropped.txt"
    for m in "${bad[@]}"; do metrics=$(echo ",$metrics," | sed "s/,$m,/,/; s/^,//; s/,$//"); done
    [[ -n $metrics ]] || return 1
  done
  return 1
}

# 1. PMPP ch. 10: simple / convergent / shared-memory kernels at N = 256 and 2048.
pmpp_metrics=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_global_op_st.sum
profile pmpp "$pmpp_metrics" "SimpleSumReductionKernel|ConvergentSumReductionKernel|SharedMemorySumReductionKernel" -- \
  "$reduce_bench" --textbook simple,convergent,shared --n 256,2048 || status=1

# 2. PCC ch. 3: the ladder's nvprof metrics (one launch each at 2^24) and the timed ladder.
ladder_metrics=smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,\
smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct,smsp__inst_executed.sum,\
smsp__warps_launched.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,\
smsp__average_warp_latency_per_inst_issued.ratio,\
gpu__time_duration.sum
profile ladder_ncu "$ladder_metrics" "^reduce" -- \
  "$reduce_bench" --textbook neighbored,neighbored-less,interleaved,unroll2,unroll4,unroll8,unroll8-warp,unroll8-complete,unroll8-template \
  --n 16777216 || status=1
"$reduce_bench" --ladder --reps "$ladder_reps" --out "$claims/ladder.md" >"$claims/ladder.log" 2>&1 || status=1

# 3. PMPP ch. 18: the potential kernels (constant loads, FP32 instructions, store coalescing).
if [[ $want_potential -eq 1 && -x $potential_bench ]]; then
  # The constant-memory chunk (kConstantChunkAtoms, potential_kernels.hpp); when it cannot be
  # read the table prints n/a rather than a guessed size.
  chunk=$(grep -ho 'kConstantChunkAtoms = [0-9]*' "$here/../../kernels/src/potential/"*.hpp 2>/dev/null | grep -o '[0-9]*$' | head -n 1)
  if [[ -z $chunk ]]; then
    echo "seed_claims.sh: kConstantChunkAtoms not found in kernels/src/potential/" >&2
    status=1
  fi
  echo "grid=$potential_grid atoms=$potential_atoms chunk=${chunk:-0}" >"$claims/potential_params.txt"
  potential_metrics=sass__inst_executed_per_opcode,smsp__inst_executed.sum,\
smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,\
smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
  for variant in gather coarsened coalesced; do
    profile "potential_$variant" "$potential_metrics" "gather_plane_kernel" --launch-count 1 -- \
      "$potential_bench" --grid "$potential_grid" --atoms "$potential_atoms" --kernel "$variant" --reps 1 \
      || status=1
  done
  if command -v cuobjdump >/dev/null; then
    cuobjdump --dump-sass "$potential_bench" 2>/dev/null |
      awk '/Function : .*gather_plane_kernel/{p=1} /Function : /&&!/gather_plane_kernel/{p=0} p' \
        >"$claims/potential.sass"
  fi
fi

python3 "$here/seed_claims_table.py" "$claims" >"$out/seed-claims.md" || status=1
echo "seed_claims.sh: wrote $out/seed-claims.md (raw data in $claims)"
exit $status
