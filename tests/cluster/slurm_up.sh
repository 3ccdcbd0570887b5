#!/usr/bin/env bash
# A single-node SLURM 22.05 cluster from Debian's packages, with accounting through slurmdbd and MariaDB, on a
# machine without systemd or cgroups (a CI runner, a container), kept in a folder of its own: install the
# packages where missing (slurm_install.sh), write the configs from this machine (hostname -s, nproc, slurmd -C)
# into $WATTBENCH_SLURM_DIR (default /run/wattbench-test-cluster), start munged, mysqld_safe, slurmdbd, slurmctld and
# slurmd from there, and wait until sinfo and sacct answer. Prints `SLURM_CONF=<its slurm.conf>` (stdout, last
# line): every client command (sinfo, sbatch, squeue, sacct, scancel, Snakemake's SLURM plugin) needs it.
#
# It meets the machine as it is and leaves it so: nothing is read from or written to /etc/slurm, /etc/munge,
# /etc/mysql, /var/lib/{slurm,munge,mysql}, /var/log/{slurm,munge,mysql} or /run/{munge,mysqld} (a machine with
# a real SLURM set-up, or files an earlier one left owned by another user, is neither used nor changed), and
# the daemons listen on free ports, not SLURM's, munge's or MariaDB's defaults. Every file and folder it makes
# gets its owner and mode set here. tests/cluster/slurm_down.sh stops exactly the daemons this started (their
# pids are recorded in the folder) and removes the folder. Needs root. docs/cluster.md explains the choices.
set -euo pipefail
DIR=${WATTBENCH_SLURM_DIR:-/run/wattbench-test-cluster}
MARK=.wattbench-slurm   # a folder holding this file was made by this script (slurm_down.sh removes only such a one)
CLUSTER=wattbench
HERE=$(cd "$(dirname "$0")" && pwd)
log() { echo "slurm_up: $*" >&2; }
[ "$(id -u)" = 0 ] || { log "needs root"; exit 2; }
case "$DIR" in /*) ;; *) log "WATTBENCH_SLURM_DIR must be absolute: $DIR"; exit 2 ;; esac

"$HERE/slurm_install.sh"

# 1. The folder: a leftover of an earlier run (its marker) is stopped and removed first; a foreign one is refused.
if [ -e "$DIR" ]; then
  [ -e "$DIR/$MARK" ] || { log "$DIR exists and was not made by slurm_up.sh: set WATTBENCH_SLURM_DIR"; exit 2; }
  WATTBENCH_SLURM_DIR=$DIR "$HERE/slurm_down.sh"
fi
mkdir -m 755 "$DIR" && chown root:root "$DIR" && : > "$DIR/$MARK" && : > "$DIR/pids"
# folder OWNER MODE PATH: each with its owner and mode said here, whatever the umask
folder() { install -d -o "$1" -g "$1" -m "$2" "$3"; }
folder root 755 "$DIR/etc"; folder root 755 "$DIR/log"; folder root 755 "$DIR/run"
folder root 700 "$DIR/slurmctld"; folder root 700 "$DIR/slurmd"
folder munge 755 "$DIR/munge"          # munged: key, socket, pid, seed, log (it refuses a folder others can write)
folder mysql 700 "$DIR/mysql"          # MariaDB's data
folder mysql 755 "$DIR/mysqld"         # MariaDB's socket, pid and error log
folder mysql 700 "$DIR/mysql-tmp"

# 2. Free TCP ports (none listening now, from /proc/net/tcp*) for slurmctld, slurmd, slurmdbd and MariaDB.
listening=$(awk 'FNR > 1 && $4 == "0A" { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null \
            | while read -r hex; do printf '%d\n' "0x$hex"; done | sort -u)
ports=()
for p in $(seq 26817 27816); do
  grep -qx "$p" <<<"$listening" || ports+=("$p")
  [ "${#ports[@]}" = 4 ] && break
done
[ "${#ports[@]}" = 4 ] || { log "no four free ports in 26817-27816"; exit 1; }
ctld_port=${ports[0]} slurmd_port=${ports[1]} dbd_port=${ports[2]} db_port=${ports[3]}

# 3. Configs from this machine. One node, every core and the memory slurmd measures, less 512 MB for the
#    daemons. proctrack/linuxproc and task/none: no cgroup. cons_tres with CR_Core_Memory: jobs get the
#    cores and memory they ask for and no more, so the rules' resources are really enforced as allocations.
host=$(hostname -s)
node=$(slurmd -C | head -1 | sed -E "s/^NodeName=[^ ]+/NodeName=$host/")
mem=$(sed -nE 's/.*RealMemory=([0-9]+).*/\1/p' <<<"$node")
node=$(sed -E "s/ RealMemory=[0-9]+/ RealMemory=$((mem - 512))/" <<<"$node")
munge_socket=$DIR/munge/munge.socket
export SLURM_CONF=$DIR/etc/slurm.conf   # the clients below, and slurmdbd: it reads slurmdbd.conf beside it
install -o root -g root -m 644 /dev/stdin "$SLURM_CONF" <<CONF
# Written by tests/cluster/slurm_up.sh for a single-node test cluster ($(nproc) cores), in $DIR.
ClusterName=$CLUSTER
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/slurmctld
SlurmdSpoolDir=$DIR/slurmd
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
PlugStackConfig=$DIR/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$dbd_port
AccountingStoragePass=socket=$munge_socket
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
install -o root -g root -m 644 /dev/null "$DIR/etc/plugstack.conf"   # no SPANK plugins (not the package's)
password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
# slurmdbd refuses a slurmdbd.conf not owned by SlurmUser or readable by others: root's, mode 600
install -o root -g root -m 600 /dev/stdin "$DIR/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$munge_socket
DbdHost=localhost
DbdPort=$dbd_port
SlurmUser=root
PidFile=$DIR/run/slurmdbd.pid
LogFile=$DIR/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=$password
StorageLoc=slurm_acct_db
CONF
# MariaDB's own settings only (--defaults-file: /etc/mysql is not read), on the loopback port above
install -o root -g root -m 644 /dev/stdin "$DIR/etc/my.cnf" <<CONF
[client]
socket=$DIR/mysqld/mysqld.sock
[mysqld]
user=mysql
datadir=$DIR/mysql
tmpdir=$DIR/mysql-tmp
socket=$DIR/mysqld/mysqld.sock
pid-file=$DIR/mysqld/mysqld.pid
log-error=$DIR/mysqld/error.log
port=$db_port
bind-address=127.0.0.1
skip-name-resolve
innodb_buffer_pool_size=64M
innodb_log_file_size=16M
CONF

# 4. Daemons, each recorded as it starts.
started() { echo "$1 $2" >> "$DIR/pids"; log "$1 started (pid $2)"; }
wait_for() {  # wait_for SECONDS WHAT COMMAND...: poll until COMMAND succeeds
  local limit=$1 what=$2; shift 2
  for _ in $(seq "$limit"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  log "$what did not answer within ${limit}s"; tail -n 20 "$DIR"/log/*.log "$DIR"/munge/*.log "$DIR"/mysqld/*.log >&2 2>/dev/null
  exit 1
}
pidfile_pid() { wait_for 30 "$1's pid file" test -s "$1" && cat "$1"; }

mungekey --create --keyfile="$DIR/munge/munge.key" && chown munge:munge "$DIR/munge/munge.key" && chmod 400 "$DIR/munge/munge.key"
runuser -u munge -- munged --key-file="$DIR/munge/munge.key" --socket="$munge_socket" --pid-file="$DIR/munge/munged.pid" \
  --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed"
started munged "$(pidfile_pid "$DIR/munge/munged.pid")"
wait_for 20 munge sh -c "munge -n --socket='$munge_socket' | unmunge --socket='$munge_socket'"

mariadb-install-db --defaults-file="$DIR/etc/my.cnf" --auth-root-authentication-method=socket > "$DIR/mysqld/install.log" 2>&1
setsid mysqld_safe --defaults-file="$DIR/etc/my.cnf" > "$DIR/mysqld/mysqld_safe.log" 2>&1 < /dev/null &
started mysqld_safe $!
wait_for 60 MariaDB mysqladmin --defaults-file="$DIR/etc/my.cnf" ping
started mysqld "$(pidfile_pid "$DIR/mysqld/mysqld.pid")"
mysql --defaults-file="$DIR/etc/my.cnf" -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$password';
  CREATE DATABASE slurm_acct_db; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"

slurmdbd
started slurmdbd "$(pidfile_pid "$DIR/run/slurmdbd.pid")"
wait_for 60 slurmdbd sacctmgr -n list cluster
sacctmgr -i add cluster "$CLUSTER" >/dev/null
slurmctld -f "$SLURM_CONF"
started slurmctld "$(pidfile_pid "$DIR/run/slurmctld.pid")"
slurmd -f "$SLURM_CONF"
started slurmd "$(pidfile_pid "$DIR/run/slurmd.pid")"
wait_for 60 "sinfo (an idle node)" sh -c "sinfo -h -o %T | grep -q idle"
wait_for 60 sacct sacct -n -X
log "up in $DIR: $(sinfo -h -o '%P %D %c %m %T' | head -1)"
echo "SLURM_CONF=$SLURM_CONF"
