#!/usr/bin/env bash
# A private one-node Slurm on this machine, for trying and testing examples/slurm/.
#   scripts/slurm-local.sh start|stop|status|env
# start installs slurm-wlm + munge if missing and starts munged, slurmctld and slurmd (again only
# what does not answer); stop cancels its jobs and stops them; status exits 0 when the node
# answers, 3 otherwise; env prints 'export SLURM_CONF=...' for `eval`. Everything lives in
# ${DCS_SLURM_DIR:-/tmp/dcs-slurm} (configuration, munge key, state, pid files, log/*.log):
# nothing under /etc changes and no system service starts, so it works in a container. Ports
# ${DCS_SLURM_PORT:-16817} and the next, away from a system Slurm's. Needs root (sudo otherwise).
# Exit status: 0 done, 1 failed (the logs are printed), 2 usage.
set -euo pipefail

DIR=${DCS_SLURM_DIR:-/tmp/dcs-slurm}
PORT=${DCS_SLURM_PORT:-16817}
NODE=$(hostname -s)
CONF="$DIR/slurm.conf"
MUNGE_SOCKET="$DIR/munge/munge.socket"
WAIT_S=${DCS_SLURM_WAIT_S:-60}

SUDO=()
if [[ $(id -u) -ne 0 ]]; then SUDO=(sudo); fi

say() { printf 'slurm-local: %s\n' "$*" >&2; }

# The pid in pid file $1 when that process still runs (and is the daemon named $2), else nothing.
live_pid() {
  local file=$1 name=$2 pid
  [[ -r $file ]] || return 0
  pid=$(<"$file")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  if [[ -r /proc/$pid/comm && $(</proc/"$pid"/comm) == "$name"* ]]; then echo "$pid"; fi
}

munged_pid()    { live_pid "$DIR/run/munged.pid" munged; }
slurmctld_pid() { live_pid "$DIR/run/slurmctld.pid" slurmctld; }
slurmd_pid()    { live_pid "$DIR/run/slurmd.pid" slurmd; }

# The node's state as sinfo says it ("idle", "mixed", "down*", ...), or nothing without slurmctld.
node_state() {
  [[ -n $(slurmctld_pid) && -r $CONF ]] || return 0
  SLURM_CONF=$CONF timeout 20 sinfo -h -n "$NODE" -o '%T' 2>/dev/null | head -n1 || true
}

install_packages() {
  local missing=()
  for cmd in munged slurmctld slurmd sbatch; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  command -v apt-get >/dev/null 2>&1 || { say "missing ${missing[*]} and no apt-get to install them"; return 1; }
  say "installing slurm-wlm munge (missing: ${missing[*]})"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get install -y --no-install-recommends slurm-wlm slurmctld slurmd slurm-client munge \
    >"${TMPDIR:-/tmp}/dcs-slurm-apt.log" 2>&1 || {
    "${SUDO[@]}" apt-get update >/dev/null 2>&1 &&
      "${SUDO[@]}" apt-get install -y --no-install-recommends slurm-wlm slurmctld slurmd slurm-client munge \
        >"${TMPDIR:-/tmp}/dcs-slurm-apt.log" 2>&1
  } || { say "apt-get failed: see ${TMPDIR:-/tmp}/dcs-slurm-apt.log"; return 1; }
  # The packages start the Debian services where systemd or init scripts run; ours are separate.
}

write_config() {
  local cpus mem_mb
  cpus=$(nproc)
  mem_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 }' /proc/meminfo)
  mkdir -p "$DIR"/{munge,state,spool/slurmd,run,log}
  chmod 700 "$DIR/munge"
  cat >"$CONF.new" <<EOF
# Written by scripts/slurm-local.sh: a private one-node Slurm (node $NODE = 127.0.0.1).
ClusterName=dcslocal
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: a requeued job waits cred_expire + 1 s before it may start again (default 120 s,
# 5 s the least); short here so that tests of requeue-and-resume take seconds.
AuthInfo=socket=$MUNGE_SOCKET,cred_expire=5
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/slurmd
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# No cgroups (containers, no systemd): processes tracked through /proc, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
# Cores are the consumable resource; memory is not, so jobs without --mem share the node.
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Scheduling passes every second (defaults: 60 s, backfill 30 s), for tests that wait on jobs.
SchedulerParameters=sched_interval=1,bf_interval=1
MpiDefault=none
ReturnToService=2
MaxArraySize=10001
# Jobs that finish are listed by squeue for a short while only; the tests poll sacct-free.
MinJobAge=60
SlurmctldTimeout=60
SlurmdTimeout=60
InactiveLimit=0
KillWait=10
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.new" "$CONF"
  if [[ ! -s $DIR/munge/munge.key ]]; then
    (umask 077; dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none)
  fi
  chmod 400 "$DIR/munge/munge.key"
}

start_munged() {
  [[ -n $(munged_pid) ]] && return 0
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  # --force: munged refuses to run as root, or with a socket outside /run, without it.
  munged --force --socket="$MUNGE_SOCKET" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/run/munged.pid" --log-file="$DIR/log/munged.log" \
    --seed-file="$DIR/munge/munged.seed" --num-threads=2
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -S $MUNGE_SOCKET ]] && munge -n -S "$MUNGE_SOCKET" | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  say "munged did not answer on $MUNGE_SOCKET"
  return 1
}

status() {
  local m c d state
  m=$(munged_pid); c=$(slurmctld_pid); d=$(slurmd_pid)
  state=$(node_state)
  printf 'dir:       %s\nmunged:    %s\nslurmctld: %s\nslurmd:    %s\nnode %s:   %s\n' \
    "$DIR" "${m:-not running}" "${c:-not running}" "${d:-not running}" "$NODE" "${state:-no answer}"
  [[ -n $m && -n $c && -n $d && -n $state ]]
}

show_logs() {
  local f
  for f in "$DIR"/log/*.log; do
    [[ -r $f ]] || continue
    say "--- last lines of $f"
    tail -n 25 "$f" >&2
  done
}

stop_pid() {  # stop_pid NAME PID: SIGTERM, then SIGKILL after 10 s
  local name=$1 pid=$2 i
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  say "$name ($pid) did not stop on SIGTERM; SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
}

stop() {
  if [[ -n $(slurmctld_pid) && -r $CONF ]]; then
    # Cancel this Slurm's jobs first, so that no slurmstepd outlives slurmd.
    local jobs
    jobs=$(SLURM_CONF=$CONF timeout 10 squeue -h -o '%A' 2>/dev/null || true)
    if [[ -n $jobs ]]; then
      # shellcheck disable=SC2086
      SLURM_CONF=$CONF timeout 10 scancel $jobs 2>/dev/null || true
      local i
      for ((i = 0; i < 50; i++)); do
        [[ -z $(SLURM_CONF=$CONF timeout 10 squeue -h -t R,CG -o '%A' 2>/dev/null || true) ]] && break
        sleep 0.2
      done
    fi
  fi
  stop_pid slurmd "$(slurmd_pid)"
  stop_pid slurmctld "$(slurmctld_pid)"
  stop_pid munged "$(munged_pid)"
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
}

start() {
  if [[ $(id -u) -ne 0 ]]; then
    say "start needs root (the daemons run as SlurmUser=root); run it with sudo"
    return 1
  fi
  if [[ -n $(munged_pid) && -n $(slurmd_pid) ]]; then
    case $(node_state) in
      idle*|mixed*|alloc*) say "already running (SLURM_CONF=$CONF)"; return 0 ;;
    esac
  fi
  install_packages
  # Anything half-started is stopped, so that the daemons read one configuration.
  stop
  write_config
  start_munged
  # -i: ignore saved state of a previous start (jobs, node states); the configuration is new.
  SLURM_CONF=$CONF slurmctld -f "$CONF" -i
  SLURM_CONF=$CONF slurmd -f "$CONF" -N "$NODE"
  local i state=""
  for ((i = 0; i < WAIT_S * 5; i++)); do
    state=$(node_state)
    case $state in
      idle*|mixed*|alloc*) say "node $NODE is $state (SLURM_CONF=$CONF; logs in $DIR/log)"; return 0 ;;
      drain*|down*|fail*)
        # A node that was down at slurmctld's start comes back once slurmd registers.
        SLURM_CONF=$CONF scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true ;;
    esac
    if [[ -z $(slurmctld_pid) || -z $(slurmd_pid) ]] && ((i > 10)); then break; fi
    sleep 0.2
  done
  say "the node did not become idle in ${WAIT_S} s (state: ${state:-no answer}; slurmctld: $(slurmctld_pid), slurmd: $(slurmd_pid))"
  SLURM_CONF=$CONF sinfo -R >&2 2>/dev/null || true
  show_logs
  return 1
}

case ${1:-} in
  start) start ;;
  stop) stop; say "stopped" ;;
  status) status || exit 3 ;;
  env) printf 'export SLURM_CONF=%q\n' "$CONF" ;;
  *) echo "usage: $0 start|stop|status|env   (directory: \${DCS_SLURM_DIR:-/tmp/dcs-slurm})" >&2; exit 2 ;;
esac
