#!/usr/bin/env bash
# Stop exactly the daemons tests/cluster/slurm_up.sh started (the pids it recorded), newest first, and wait
# until each is gone. Leaves the packages and configs (a next slurm_up.sh starts in seconds).
set -uo pipefail
STATE=${WATTBENCH_SLURM_STATE:-/run/wattbench-slurm}
[ -s "$STATE/pids" ] || exit 0
tac "$STATE/pids" | while read -r name pid; do
  kill -0 "$pid" 2>/dev/null || continue
  if [ "$name" = mysqld ]; then mysqladmin shutdown 2>/dev/null || kill "$pid"; else kill "$pid"; fi
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
  echo "slurm_down: $name stopped (pid $pid)" >&2
done
rm -f "$STATE/pids"
