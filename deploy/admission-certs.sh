#!/usr/bin/env bash
# The certificate step of `basalt webhook-manager`, without cert-manager: a self-signed CA and a
# server certificate signed by it (openssl), stored in the Secret that deploy/admission.yaml mounts
# (`volcano-admission-secret`: ca.crt, tls.crt, tls.key, as Volcano's gen-admission-secret.sh
# writes it). The webhook manager writes ca.crt into the webhook configurations' caBundle at start.
#
#   deploy/admission-certs.sh [--service NAME] [--namespace NS] [--secret NAME] [--days N]
#                             [--san SAN]... [--ca DIR] [--out-dir DIR] [--kubectl CMD]
#
# Defaults: service volcano-admission-service, namespace volcano-system, secret
# volcano-admission-secret, 3650 days. The certificate names the Service's DNS names
# (NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local) and every --san (e.g. IP:127.0.0.1 or
# DNS:webhook.example.com, for a webhook outside the cluster reached through --webhook-url).
# With --ca, the CA in DIR (ca.crt, ca.key) signs the new server certificate instead of a new CA:
# a rotation that leaves the webhook configurations' caBundle valid.
# With --out-dir the files are written there and no Secret is created (nothing talks to a
# cluster); otherwise they go to a temporary folder, the Secret is created or updated from them
# (`kubectl create secret generic --dry-run=client -o yaml | kubectl apply -f -`), and the folder
# is removed. Re-running replaces the
# certificate: the webhook manager reloads the files when the Secret's projection changes.
set -euo pipefail

service=volcano-admission-service
namespace=volcano-system
secret=volcano-admission-secret
days=3650
out=""
kubectl=kubectl
ca=""
sans=()
while [ $# -gt 0 ]; do
  case $1 in
    --service) service=$2; shift ;;
    --namespace) namespace=$2; shift ;;
    --secret) secret=$2; shift ;;
    --days) days=$2; shift ;;
    --san) sans+=("$2"); shift ;;
    --out-dir) out=$2; shift ;;
    --ca) ca=$2; shift ;;
    --kubectl) kubectl=$2; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "admission-certs.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
command -v openssl >/dev/null || { echo "admission-certs.sh: openssl not found" >&2; exit 1; }

if [ -n "$out" ]; then
  mkdir -p "$out"
  dir=$out
else
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi

alt="DNS:$service,DNS:$service.$namespace,DNS:$service.$namespace.svc,DNS:$service.$namespace.svc.cluster.local"
for s in "${sans[@]+"${sans[@]}"}"; do
  case $s in
    DNS:*|IP:*) alt="$alt,$s" ;;
    *) echo "admission-certs.sh: --san $s: expected DNS:<name> or IP:<address>" >&2; exit 2 ;;
  esac
done

if [ -n "$ca" ]; then
  for f in ca.crt ca.key; do
    [ -r "$ca/$f" ] || { echo "admission-certs.sh: --ca $ca: $f is missing or unreadable" >&2; exit 1; }
  done
  if [ "$(cd "$ca" && pwd)" != "$(cd "$dir" && pwd)" ]; then
    cp "$ca/ca.crt" "$ca/ca.key" "$dir/"
  fi
else
  openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj "/CN=$service-ca" \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
fi
openssl req -newkey rsa:2048 -nodes -subj "/CN=$service.$namespace.svc" \
  -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
cat >"$dir/ext.cnf" <<EOC
basicConstraints = CA:FALSE
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = $alt
EOC
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days "$days" -extfile "$dir/ext.cnf" -out "$dir/tls.crt" 2>/dev/null
rm -f "$dir/tls.csr" "$dir/ext.cnf" "$dir/ca.srl"
chmod 600 "$dir/ca.key" "$dir/tls.key"

if [ -n "$out" ]; then
  echo "admission-certs.sh: ca.crt, tls.crt, tls.key (and ca.key) in $out for $alt" >&2
  exit 0
fi
$kubectl -n "$namespace" create secret generic "$secret" \
  --from-file=ca.crt="$dir/ca.crt" --from-file=tls.crt="$dir/tls.crt" --from-file=tls.key="$dir/tls.key" \
  --dry-run=client -o yaml | $kubectl apply -f - >/dev/null
echo "admission-certs.sh: Secret $namespace/$secret holds a certificate for $alt" >&2
