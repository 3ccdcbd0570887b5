#!/usr/bin/env bash
# Debian's SLURM 22.05, munge and MariaDB packages, where one of their daemons is missing (else nothing): the
# first step of tests/cluster/slurm_up.sh, apart so that the test can look at the machine after apt and before
# the cluster (tests/cluster/machine_paths.py). Installed under a policy-rc.d that denies every start: the
# packages' init scripts must not start daemons (there is no init system to stop them later; slurm_up.sh starts
# and records its own, from a folder of its own). Needs root and apt.
set -euo pipefail
log() { echo "slurm_install: $*" >&2; }
[ "$(id -u)" = 0 ] || { log "needs root"; exit 2; }
if command -v slurmctld >/dev/null && command -v slurmdbd >/dev/null && command -v mysqld_safe >/dev/null \
   && command -v munged >/dev/null; then
  exit 0
fi
command -v apt-get >/dev/null || { log "needs apt-get"; exit 2; }
policy=/usr/sbin/policy-rc.d
saved=$(mktemp)
had_policy=false
if [ -e "$policy" ]; then cp -p "$policy" "$saved"; had_policy=true; fi
restore() { if $had_policy; then mv "$saved" "$policy"; else rm -f "$policy" "$saved"; fi; }
trap restore EXIT
printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  slurmctld slurmd slurm-client munge slurmdbd mariadb-server >/dev/null
log "installed: $(dpkg-query -W -f '${Package} ${Version}\n' slurmctld munge mariadb-server | tr '\n' ';')"
