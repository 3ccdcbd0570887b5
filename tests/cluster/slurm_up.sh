#!/usr/bin/env bash
# A single-node SLURM 22.05 cluster from Debian's packages, with accounting through slurmdbd and MariaDB, on a
# machine without systemd or cgroups (a CI runner, a container): install, write the configs from this
# machine (hostname -s, nproc, slurmd -C), start munged, mysqld_safe, slurmdbd, slurmctld and slurmd, and
# wait until sinfo and sacct answer. Needs root and apt. tests/cluster/slurm_down.sh stops exactly what this
# started: every daemon's pid is recorded in $STATE/pids. docs/cluster.md explains the choices.
set -euo pipefail
STATE=${WATTBENCH_SLURM_STATE:-/run/wattbench-slurm}
CLUSTER=wattbench
log() { echo "slurm_up: $*" >&2; }
[ "$(id -u)" = 0 ] || { log "needs root"; exit 2; }
command -v apt-get >/dev/null || { log "needs apt-get"; exit 2; }
mkdir -p "$STATE" && : > "$STATE/pids"

# 1. Packages. A policy-rc.d that denies every start: the packages' init scripts must not start daemons
#    (there is no init system to stop them later; this script starts and records its own).
if ! command -v slurmctld >/dev/null || ! command -v slurmdbd >/dev/null || ! command -v mysqld_safe >/dev/null; then
  policy=/usr/sbin/policy-rc.d
  [ -e "$policy" ] && cp -p "$policy" "$STATE/policy-rc.d.saved"
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    slurmctld slurmd slurm-client munge slurmdbd mariadb-server >/dev/null
  if [ -e "$STATE/policy-rc.d.saved" ]; then mv "$STATE/policy-rc.d.saved" "$policy"; else rm -f "$policy"; fi
fi

# 2. Configs from this machine. One node, every core and the memory slurmd measures, less 512 MB for the
#    daemons. proctrack/linuxproc and task/none: no cgroup. cons_tres with CR_Core_Memory: jobs get the
#    cores and memory they ask for and no more, so the rules' resources are really enforced as allocations.
host=$(hostname -s)
node=$(slurmd -C | head -1 | sed -E "s/^NodeName=[^ ]+/NodeName=$host/; s/ RealMemory=([0-9]+)/ RealMemory=\1/")
mem=$(sed -nE 's/.*RealMemory=([0-9]+).*/\1/p' <<<"$node")
node=$(sed -E "s/ RealMemory=[0-9]+/ RealMemory=$((mem - 512))/" <<<"$node")
mkdir -p /etc/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm
cat > /etc/slurm/slurm.conf <<CONF
# Written by tests/cluster/slurm_up.sh for a single-node test cluster ($(nproc) cores).
ClusterName=$CLUSTER
SlurmctldHost=$host
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
JobCompType=jobcomp/none
AccountingStoreFlags=job_comment
MinJobAge=300
ReturnToService=2
SchedulerParameters=sched_interval=2
$node
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
cat > /etc/slurm/slurmdbd.conf <<CONF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
PidFile=/run/slurmdbd.pid
LogFile=/var/log/slurm/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$password
StorageLoc=slurm_acct_db
CONF
chmod 600 /etc/slurm/slurmdbd.conf

# 3. Daemons, each recorded as it starts.
started() { echo "$1 $2" >> "$STATE/pids"; log "$1 started (pid $2)"; }
wait_for() {  # wait_for SECONDS WHAT COMMAND...: poll until COMMAND succeeds
  local limit=$1 what=$2; shift 2
  for _ in $(seq "$limit"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  log "$what did not answer within ${limit}s"; exit 1
}
pidfile_pid() { wait_for 30 "$1's pid file" test -s "$1" && cat "$1"; }

[ -s /etc/munge/munge.key ] || { mungekey -c -k /etc/munge/munge.key 2>/dev/null || dd if=/dev/urandom of=/etc/munge/munge.key bs=1k count=1 2>/dev/null; }
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge && chown munge:munge /run/munge
runuser -u munge -- munged --pid-file=/run/munge/munged.pid
started munged "$(pidfile_pid /run/munge/munged.pid)"
wait_for 20 munge sh -c 'munge -n | unmunge'

mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
[ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql >/dev/null
rm -f /run/mysqld/mysqld.pid
setsid mysqld_safe --pid-file=/run/mysqld/mysqld.pid > "$STATE/mysqld_safe.log" 2>&1 < /dev/null &
started mysqld_safe $!
wait_for 60 MariaDB mysqladmin ping
started mysqld "$(pidfile_pid /run/mysqld/mysqld.pid)"
mysql -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost'; ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$password';
          CREATE DATABASE IF NOT EXISTS slurm_acct_db; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"

rm -f /run/slurmdbd.pid /run/slurmctld.pid /run/slurmd.pid
slurmdbd
started slurmdbd "$(pidfile_pid /run/slurmdbd.pid)"
wait_for 60 slurmdbd sacctmgr -n list cluster
sacctmgr -i add cluster "$CLUSTER" >/dev/null 2>&1 || true
slurmctld
started slurmctld "$(pidfile_pid /run/slurmctld.pid)"
slurmd
started slurmd "$(pidfile_pid /run/slurmd.pid)"
wait_for 60 "sinfo (an idle node)" sh -c "sinfo -h -o %T | grep -q idle"
wait_for 60 sacct sacct -n -X
log "up: $(sinfo -h -o '%P %D %c %m %T' | head -1)"
