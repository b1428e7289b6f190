#!/usr/bin/env bash
# Starts a real etcd + kube-apiserver v1.20.2 on free loopback ports for tests and for humans
# (shared/notes/kubernetes-api.md §9). Builds the server first if it is not cached (build.sh).
#
#   start.sh DIR [--owner-pid PID] [--remove-on-exit]
#
# DIR (created if missing) receives everything of this instance:
#   ca.crt ca.key apiserver.crt apiserver.key   a CA and a serving cert for IP 127.0.0.1 signed by it
#                                               (rustls rejects a self-signed CA:TRUE leaf)
#   sa.key sa.pub                               the service-account signing key
#   tokens.csv                                  static bearer tokens (see below)
#   audit-policy.yaml audit.log                 every request at level Metadata, one JSON line each
#                                               (rotation only past 4 GiB: tests read one file)
#   admin.kubeconfig                            user `admin`, group system:masters
#   scheduler.kubeconfig                        system:serviceaccount:volcano-system:volcano-scheduler
#   controllers.kubeconfig                      system:serviceaccount:volcano-system:volcano-controllers
#   admission.kubeconfig                        system:serviceaccount:volcano-system:volcano-admission
#   server                                      the URL, https://127.0.0.1:PORT
#   etcd.pid kube-apiserver.pid etcd.log kube-apiserver.log running
# The two ServiceAccount identities carry the groups system:serviceaccounts,
# system:serviceaccounts:volcano-system and system:authenticated, so RBAC bindings to the
# ServiceAccounts (deploy/fresh/rbac.yaml) apply to them. Authorization is RBAC only.
#
# With --owner-pid, a watchdog stops the servers once that process has exited (a test binary that
# never runs destructors, or is killed); --remove-on-exit makes the watchdog delete DIR too.
# Stop by hand with stop.sh DIR. Prints the server URL on its last line; progress on stderr.
# BASALT_KUBE_APISERVER overrides the binary (skips build.sh). BASALT_APISERVER_FLAGS: extra
# kube-apiserver flags, space-separated (e.g. --watch-cache=false).
set -euo pipefail

usage() {
  echo "usage: $0 DIR [--owner-pid PID] [--remove-on-exit]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
dir=$1
shift
owner=""
remove_on_exit=0
while [ $# -gt 0 ]; do
  case $1 in
    --owner-pid)
      [ $# -ge 2 ] || usage
      owner=$2
      shift 2
      ;;
    --remove-on-exit)
      remove_on_exit=1
      shift
      ;;
    *) usage ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${BASALT_KUBE_APISERVER:-}" ]; then
  apiserver=$BASALT_KUBE_APISERVER
else
  apiserver=$("$here/build.sh" | tail -n1)
fi
[ -x "$apiserver" ] || {
  echo "start.sh: kube-apiserver binary not found or not executable: $apiserver" >&2
  exit 1
}
for cmd in etcd openssl curl python3; do
  command -v "$cmd" >/dev/null 2>&1 || {
    echo "start.sh: $cmd not found (build.sh installs etcd, openssl, curl and python3)" >&2
    exit 1
  }
done

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ -f "$dir/running" ]; then
  echo "start.sh: $dir already holds a running instance (stop.sh $dir first)" >&2
  exit 1
fi
cd "$dir"

# --- certificates, keys, tokens, policy -------------------------------------------------------
openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=basalt-test-ca" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out ca.crt 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out apiserver.key 2>/dev/null
openssl req -new -key apiserver.key -subj "/CN=127.0.0.1" -out apiserver.csr 2>/dev/null
cat >apiserver.ext <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost
EOF
openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
  -extfile apiserver.ext -out apiserver.crt 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out sa.key 2>/dev/null
openssl ec -in sa.key -pubout -out sa.pub 2>/dev/null

admin_token=$(openssl rand -hex 16)
scheduler_token=$(openssl rand -hex 16)
controllers_token=$(openssl rand -hex 16)
admission_token=$(openssl rand -hex 16)
sa_groups="system:serviceaccounts,system:serviceaccounts:volcano-system,system:authenticated"
cat >tokens.csv <<EOF
$admin_token,admin,uid-admin,"system:masters"
$scheduler_token,system:serviceaccount:volcano-system:volcano-scheduler,uid-volcano-scheduler,"$sa_groups"
$controllers_token,system:serviceaccount:volcano-system:volcano-controllers,uid-volcano-controllers,"$sa_groups"
$admission_token,system:serviceaccount:volcano-system:volcano-admission,uid-volcano-admission,"$sa_groups"
EOF
chmod 600 tokens.csv ca.key apiserver.key sa.key

cat >audit-policy.yaml <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
# One line per request, written when the response is complete (or the handler panicked).
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
EOF

# --- processes ----------------------------------------------------------------------------------
# Three distinct free loopback ports, held together while picked so they differ.
free_ports() {
  python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

alive() {
  # A zombie (exited, not yet reaped by a non-reaping init) counts as gone.
  [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat")" != Z ]
}

kill_started() {
  for f in kube-apiserver.pid etcd.pid; do
    if [ -f "$f" ]; then
      kill -KILL "$(cat "$f")" 2>/dev/null || true
      rm -f "$f"
    fi
  done
}

started=0
for attempt in 1 2 3; do
  read -r etcd_port peer_port port < <(free_ports)
  rm -rf etcd-data
  etcd --name basalt --data-dir "$dir/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "basalt=http://127.0.0.1:$peer_port" --logger zap --log-level warn \
    </dev/null >etcd.log 2>&1 &
  echo $! >etcd.pid
  "$apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$port" --insecure-port=0 \
    --tls-cert-file="$dir/apiserver.crt" --tls-private-key-file="$dir/apiserver.key" \
    --client-ca-file="$dir/ca.crt" --token-auth-file="$dir/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-key-file="$dir/sa.pub" --service-account-signing-key-file="$dir/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc --api-audiences=https://kubernetes.default.svc \
    --service-cluster-ip-range=10.0.0.0/24 --endpoint-reconciler-type=none \
    --disable-admission-plugins=ServiceAccount \
    --audit-policy-file="$dir/audit-policy.yaml" --audit-log-path="$dir/audit.log" --audit-log-maxsize=4096 \
    --audit-log-mode=blocking --profiling=false ${BASALT_APISERVER_FLAGS:-} \
    </dev/null >kube-apiserver.log 2>&1 &
  echo $! >kube-apiserver.pid
  # Ready = /readyz ok: etcd reachable, RBAC bootstrap roles and other post-start hooks done.
  for _ in $(seq 1 600); do
    if ! alive "$(cat kube-apiserver.pid)" || ! alive "$(cat etcd.pid)"; then
      break
    fi
    if [ "$(curl -s --max-time 2 --cacert ca.crt -H "Authorization: Bearer $admin_token" \
      "https://127.0.0.1:$port/readyz" 2>/dev/null)" = ok ]; then
      started=1
      break
    fi
    sleep 0.1
  done
  [ $started = 1 ] && break
  echo "start.sh: attempt $attempt failed (ports $etcd_port/$peer_port/$port); last lines of the logs:" >&2
  tail -n 5 etcd.log kube-apiserver.log >&2 || true
  kill_started
  sleep 0.5
done
if [ $started != 1 ]; then
  echo "start.sh: kube-apiserver did not become ready; logs in $dir" >&2
  exit 1
fi
touch running

# --- kubeconfigs ---------------------------------------------------------------------------------
server="https://127.0.0.1:$port"
ca_data=$(base64 -w0 ca.crt)
kubeconfig() {
  # $1 file, $2 user name, $3 token
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: basalt-test
    cluster:
      server: $server
      certificate-authority-data: $ca_data
users:
  - name: $2
    user:
      token: $3
contexts:
  - name: basalt-test
    context:
      cluster: basalt-test
      user: $2
      namespace: default
current-context: basalt-test
EOF
  chmod 600 "$1"
}
kubeconfig admin.kubeconfig admin "$admin_token"
kubeconfig scheduler.kubeconfig volcano-scheduler "$scheduler_token"
kubeconfig controllers.kubeconfig volcano-controllers "$controllers_token"
kubeconfig admission.kubeconfig volcano-admission "$admission_token"
echo "$server" >server

# --- watchdog ------------------------------------------------------------------------------------
if [ -n "$owner" ]; then
  pids="$(cat kube-apiserver.pid) $(cat etcd.pid)"
  (
    trap '' HUP INT
    while [ -f "$dir/running" ] && kill -0 "$owner" 2>/dev/null; do
      sleep 0.5
    done
    if [ -f "$dir/running" ]; then
      "$here/stop.sh" "$dir" || true
    fi
    # Whatever happened to DIR meanwhile (stopped, deleted): no process of this instance outlives
    # its owner. The command line names DIR, so a reused pid is never hit.
    for pid in $pids; do
      if grep -qF "$dir/" "/proc/$pid/cmdline" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
      fi
    done
    if [ $remove_on_exit = 1 ] && ! kill -0 "$owner" 2>/dev/null; then
      rm -rf "$dir"
    fi
  ) </dev/null >/dev/null 2>&1 &
fi

echo "start.sh: kube-apiserver ready at $server (etcd 127.0.0.1:$etcd_port); kubeconfigs in $dir" >&2
echo "$server"
