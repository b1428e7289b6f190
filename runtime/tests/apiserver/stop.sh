#!/usr/bin/env bash
# Stops the etcd + kube-apiserver that start.sh started in DIR: SIGTERM, then SIGKILL after 5 s.
# Keeps DIR (logs, audit log, certificates). Stopping an instance that is not running is a no-op.
#
#   stop.sh DIR
set -euo pipefail

[ $# -eq 1 ] || {
  echo "usage: $0 DIR" >&2
  exit 2
}
dir=$1
[ -d "$dir" ] || exit 0
cd "$dir"
rm -f running

alive() {
  # A zombie (exited, not yet reaped by a non-reaping init) counts as gone.
  [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat")" != Z ]
}

# The apiserver first, so it does not log etcd errors while going down.
for name in kube-apiserver etcd; do
  [ -f "$name.pid" ] || continue
  pid=$(cat "$name.pid")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$name.pid"
done
rm -rf etcd-data
