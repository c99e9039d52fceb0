#!/usr/bin/env bash
# Stops the cluster that .ci/slurm/up.sh DIR started (its daemons, by their recorded pids).
set -uo pipefail
DIR="$1"
# jobs first, so that no job step outlives its slurmd
if [ -f "$DIR/slurm.conf" ] && [ -f "$DIR/run/slurmctld.pid" ]; then
  SLURM_CONF="$DIR/slurm.conf" timeout 10 scancel --user "$(id -un)" 2>/dev/null
  for _ in $(seq 50); do
    [ -z "$(SLURM_CONF="$DIR/slurm.conf" timeout 5 squeue -h 2>/dev/null)" ] && break
    sleep 0.2
  done
fi
for pid_file in "$DIR"/run/slurmd-*.pid "$DIR"/run/{slurmctld,slurmdbd,mariadbd,munged}.pid; do
  [ -f "$pid_file" ] || continue
  pid=$(cat "$pid_file")
  kill "$pid" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  rm -f "$pid_file"
done
[ "$(readlink /run/slurm/conf)" = "$(cd "$DIR" && pwd)" ] && rm -f /run/slurm/conf
true
