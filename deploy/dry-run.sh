#!/usr/bin/env bash
# Checks every manifest of deploy/ with the real validation of a kube-apiserver v1.20.2: starts the
# test apiserver (runtime/tests/apiserver/start.sh), then for each kustomization (the default one
# for a cluster that runs Volcano, deploy/fresh/ for a fresh install) and each manifest file
# (deploy/controller.yaml and the admission files included) runs
# `kubectl apply --dry-run=server`, which admits, defaults and validates the objects as a real
# apply would (schema errors, unknown kinds, bad field values) without storing them. The CRDs are
# applied for real first so the custom objects that use them (the Queues) can be validated.
#
#   deploy/dry-run.sh            (from the repository root; CI's step "deploy/ server-side dry run")
set -euo pipefail

cd "$(dirname "$0")/.."
kubectl=$(runtime/tests/apiserver/kubectl.sh | tail -n1)
dir=$(mktemp -d /tmp/basalt-dry-run.XXXXXX)
runtime/tests/apiserver/start.sh "$dir" --owner-pid $$ --remove-on-exit >/dev/null
trap 'runtime/tests/apiserver/stop.sh "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
k() { "$kubectl" --kubeconfig "$dir/admin.kubeconfig" "$@"; }

# The CRDs themselves are validated by the server's dry run before they are created.
for f in deploy/crds/*.yaml; do
  case $f in */kustomization.yaml) continue ;; esac
  k apply --dry-run=server -f "$f" >/dev/null
  echo "dry run: $f ok"
done
k apply -k deploy/crds >/dev/null
k wait --for condition=established crd --all --timeout=60s >/dev/null
# Volcano's namespace exists on a cluster that runs Volcano; namespaced objects need it.
k create namespace volcano-system >/dev/null
# controller.yaml (`basalt controller`) and the admission files (`basalt webhook-manager`), opt-in
# and in neither kustomization, go through the same server-side dry run.
for f in deploy/base/*.yaml deploy/fresh/*.yaml deploy/controller.yaml deploy/admission.yaml deploy/admission-webhooks.yaml; do
  case $f in */kustomization.yaml) continue ;; esac
  k apply --dry-run=server -f "$f" >/dev/null
  echo "dry run: $f ok"
done
for kz in deploy deploy/fresh; do
  k apply --dry-run=server -k "$kz" >/dev/null
  echo "dry run: kubectl apply -k $kz ok"
done
