#!/usr/bin/env bash
# Provides kubectl v1.20.2, the client of the same Debian `kubernetes` source package the test
# apiserver is built from (build.sh): Debian ships it prebuilt as `kubernetes-client`, so it is
# downloaded with apt-get and unpacked beside the cached kube-apiserver, without installing the
# package (a kubectl already on PATH, another version, is left alone).
#
# Prints the path of kubectl on its last line; progress goes to stderr. Needs root for apt-get
# unless the binary is already cached. BASALT_APISERVER_CACHE overrides the cache folder
# (default /var/cache/basalt), as for build.sh.
set -euo pipefail

version=1.20.5+really1.20.2-1.1+deb12u1
cache=${BASALT_APISERVER_CACHE:-/var/cache/basalt}/kube-apiserver-1.20.2
bin="$cache/kubectl"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache.kubectl.lock"
flock 9
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "kubectl: downloading Debian's kubernetes-client $version" >&2
if ! (cd "$work" && apt-get download "kubernetes-client=$version" >&2 2>/dev/null); then
  apt-get update -qq >&2
  (cd "$work" && apt-get download "kubernetes-client=$version" >&2)
fi
dpkg-deb -x "$work"/kubernetes-client_*.deb "$work/x"
install -m 0755 "$work/x/usr/bin/kubectl" "$bin.tmp"
mv "$bin.tmp" "$bin"
"$bin" version --client >&2
echo "$bin"
