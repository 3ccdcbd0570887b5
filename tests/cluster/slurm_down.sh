#!/usr/bin/env bash
# Stop exactly what tests/cluster/slurm_up.sh started, and remove its folder ($WATTBENCH_SLURM_DIR, default
# /run/wattbench-test-cluster; only one holding slurm_up.sh's marker): first the test cluster's own jobs still queued
# or running (a failed test can leave some), then the daemons whose pids it recorded, newest first, each waited
# for until it is gone. The packages stay (a next slurm_up.sh starts in seconds). WATTBENCH_SLURM_KEEP=1 keeps
# the folder (its logs: log/, munge/, mysqld/) for a look.
set -uo pipefail
DIR=${WATTBENCH_SLURM_DIR:-/run/wattbench-test-cluster}
[ -e "$DIR/.wattbench-slurm" ] || exit 0
export SLURM_CONF=$DIR/etc/slurm.conf
# gone NAME PID: no process PID, or one of another name (a folder left by a run that ended without this script,
# its daemons long dead, names pids the system may have given to others since: those are never signalled)
gone() {
  local comm; comm=$(cat "/proc/$2/comm" 2>/dev/null) || return 0
  case "$1:$comm" in mysqld:mysqld|mysqld:mariadbd|"$1:$1") return 1 ;; *) return 0 ;; esac
}
alive() { [ -s "$DIR/pids" ] && awk -v n="$1" '$1 == n { print $2 }' "$DIR/pids" | while read -r pid; do gone "$1" "$pid" || echo "$pid"; done; }
if [ -n "$(alive slurmctld)" ] && [ -n "$(alive slurmd)" ]; then
  jobs=$(squeue -h -o %i 2>/dev/null)
  if [ -n "$jobs" ]; then
    echo "slurm_down: cancelling the test cluster's jobs" $jobs >&2
    # shellcheck disable=SC2086
    scancel $jobs
    for _ in $(seq 30); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 1; done
  fi
fi
if [ -s "$DIR/pids" ]; then
  tac "$DIR/pids" | while read -r name pid; do
    gone "$name" "$pid" && continue
    if [ "$name" = mysqld ]; then mysqladmin --defaults-file="$DIR/etc/my.cnf" shutdown 2>/dev/null || kill "$pid"; else kill "$pid"; fi
    for _ in $(seq 30); do gone "$name" "$pid" && break; sleep 1; done
    gone "$name" "$pid" || kill -9 "$pid"
    echo "slurm_down: $name stopped (pid $pid)" >&2
  done
fi
if [ "${WATTBENCH_SLURM_KEEP:-0}" = 1 ]; then
  echo "slurm_down: kept $DIR" >&2; rm -f "$DIR/pids"
else
  rm -rf "$DIR"
fi
