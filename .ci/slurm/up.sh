#!/usr/bin/env bash
# A SLURM cluster of NODES (1 or 2, default 1) nodes in DIR, as root, without systemd: munge,
# MariaDB, slurmdbd (accounting, which `sacct` and the Snakemake SLURM executor read),
# slurmctld and a slurmd per node, with one partition `ci`; each node declares this machine's
# real CPUs and memory (`slurmd -C`). Two nodes are two slurmd on this machine (`slurmd -N`,
# a port each), named by this host's name and `localhost`: names that resolve here, as a
# multi-node job's rendezvous host (its first node's name) must (fpa.training.launch).
# Nothing outside DIR is written but the link /run/slurm/conf -> DIR: `srun` inside a job
# (the Snakemake jobstep plugin drops SLURM_CONF from its environment) reads the node's
# configuration there, as on a configless cluster. Free ports are picked.
#   .ci/slurm/up.sh DIR [NODES] && export SLURM_CONF=DIR/slurm.conf   ...   .ci/slurm/down.sh DIR
# Packages (Debian): slurm-wlm slurmdbd munge mariadb-server (.ci/run installs them).
set -euo pipefail
DIR="$(mkdir -p "$1" && cd "$1" && pwd)"
NODES="${2:-1}"
[[ "$NODES" =~ ^[12]$ ]] || { echo "up.sh: NODES: expected 1 or 2, got '$NODES'" >&2; exit 2; }
HERE="$(cd "$(dirname "$0")" && pwd)"
[ "$(id -u)" = 0 ] || { echo "up.sh: needs root (the daemons run as root)" >&2; exit 2; }
for tool in munged mariadbd mariadb-install-db slurmdbd slurmctld slurmd sacctmgr sinfo; do
  command -v "$tool" >/dev/null || { echo "up.sh: $tool not found (apt-get install slurm-wlm slurmdbd munge mariadb-server)" >&2; exit 2; }
done
RUN_CONF=/run/slurm/conf
if [ -e "$RUN_CONF" ] && [ "$(readlink "$RUN_CONF")" != "$DIR" ]; then
  echo "up.sh: $RUN_CONF exists (another SLURM on this machine?)" >&2; exit 2
fi
mkdir -p "$DIR"/{munge,mysql,state,spool,run,log} /run/slurm
ln -sfn "$DIR" "$RUN_CONF"
chmod 700 "$DIR" "$DIR/munge"
export SLURM_CONF="$DIR/slurm.conf"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# A daemon in the foreground, detached from the caller's output, its pid in DIR/run/NAME.pid.
start() {
  local name=$1; shift
  "$@" </dev/null >>"$DIR/log/$name.out" 2>&1 &
  echo $! >"$DIR/run/$name.pid"
}
wait_for() {
  local what=$1 deadline=$((SECONDS + 60)); shift
  while [ $SECONDS -lt $deadline ]; do
    if timeout 10 "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "up.sh: $what did not come up; logs in $DIR/log:" >&2
  tail -n 20 "$DIR"/log/*.log >&2
  exit 1
}

HOST="$(hostname -s)"
CTLD_PORT=$(free_port) DBD_PORT=$(free_port) DB_PORT=$(free_port)
NAMES=("$HOST")
if [ "$NODES" = 2 ]; then
  [ "$HOST" != localhost ] || { echo "up.sh: this host is named localhost; two nodes need two names" >&2; exit 2; }
  NAMES+=(localhost)
fi
MUNGE_SOCKET="$DIR/munge/munge.socket"
DB_PASSWORD="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"

dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$DIR/munge/munge.key"
start munged munged --foreground --force --socket="$MUNGE_SOCKET" --key-file="$DIR/munge/munge.key" \
  --log-file="$DIR/log/munged.log" --pid-file="$DIR/run/munged.daemon.pid" --seed-file="$DIR/munge/seed"
wait_for munged test -S "$MUNGE_SOCKET"

mariadb-install-db --no-defaults --datadir="$DIR/mysql" --user=root --skip-test-db >"$DIR/log/mariadb-install.log" 2>&1
start mariadbd mariadbd --no-defaults --datadir="$DIR/mysql" --socket="$DIR/mysql/mysqld.sock" \
  --port="$DB_PORT" --bind-address=127.0.0.1 --skip-name-resolve --user=root \
  --pid-file="$DIR/run/mariadbd.daemon.pid" --log-error="$DIR/log/mariadbd.log"
wait_for mariadbd mariadb --no-defaults --socket="$DIR/mysql/mysqld.sock" -e "SELECT 1"
mariadb --no-defaults --socket="$DIR/mysql/mysqld.sock" -e \
  "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"

for name in "${NAMES[@]}"; do
  echo "$(slurmd -C | head -n 1 | sed "s/^NodeName=[^ ]*/NodeName=$name/") NodeAddr=127.0.0.1 Port=$(free_port) State=UNKNOWN"
  mkdir -p "$DIR/spool/$name"
done >"$DIR/nodes.conf"
sed -e "s|@DIR@|$DIR|g" -e "s|@HOST@|$HOST|g" -e "s|@MUNGE_SOCKET@|$MUNGE_SOCKET|g" \
    -e "s|@CTLD_PORT@|$CTLD_PORT|g" -e "s|@DBD_PORT@|$DBD_PORT|g" \
    -e "/@NODES@/{r $DIR/nodes.conf" -e "d}" "$HERE/slurm.conf.in" >"$DIR/slurm.conf"
# slurmdbd reads slurmdbd.conf beside $SLURM_CONF; it holds the database password (mode 600)
(umask 077; sed -e "s|@DIR@|$DIR|g" -e "s|@MUNGE_SOCKET@|$MUNGE_SOCKET|g" -e "s|@DBD_PORT@|$DBD_PORT|g" \
    -e "s|@DB_PORT@|$DB_PORT|g" -e "s|@DB_PASSWORD@|$DB_PASSWORD|g" "$HERE/slurmdbd.conf.in" >"$DIR/slurmdbd.conf")

start slurmdbd slurmdbd -D
wait_for slurmdbd sacctmgr -n list cluster
sacctmgr -i add cluster fpaci >/dev/null
start slurmctld slurmctld -D -i
for name in "${NAMES[@]}"; do start "slurmd-$name" slurmd -D -N "$name"; done
wait_for "the nodes" sh -c "[ \"\$(sinfo -h -N -o %t | grep -cx idle)\" = $NODES ]"
echo "SLURM up in $DIR: export SLURM_CONF=$DIR/slurm.conf"
