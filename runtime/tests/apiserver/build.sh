#!/usr/bin/env bash
# Builds a real kube-apiserver v1.20.2 from Debian bookworm's `kubernetes` source package with
# Debian's Go, and installs Debian's etcd (shared/notes/kubernetes-api.md §9). The binary is cached
# outside the checkout, keyed by the version, so later runs on the same machine skip the build.
#
# Prints the path of the kube-apiserver binary on its last line; progress goes to stderr. Needs root
# (apt-get) unless everything is already installed. Safe to run in parallel: a lock file beside the
# cache folder makes concurrent callers wait for one build.
# BASALT_APISERVER_CACHE overrides the cache folder (default /var/cache/basalt).
set -euo pipefail

version=1.20.5+really1.20.2-1.1+deb12u1
cache=${BASALT_APISERVER_CACHE:-/var/cache/basalt}/kube-apiserver-1.20.2
bin="$cache/kube-apiserver"

# Fast path, no lock: everything already in place.
if [ -x "$bin" ] && command -v etcd >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1 \
  && command -v curl >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi

# Parallel callers (several test binaries on a fresh machine) build once: the first takes the lock
# and builds, the others wait for it here and then find the binary.
mkdir -p "$(dirname "$cache")"
exec 9>"$cache.lock"
if ! flock -n 9; then
  echo "apiserver: waiting for another build.sh (lock $cache.lock)" >&2
  flock 9
fi

need_pkgs=()
for cmd in etcd openssl curl; do
  command -v "$cmd" >/dev/null 2>&1 || need_pkgs+=("$cmd")
done
if [ ! -x "$bin" ]; then
  command -v go >/dev/null 2>&1 || need_pkgs+=(go)
  command -v rsync >/dev/null 2>&1 || need_pkgs+=(rsync)
  dpkg -s golang-github-modern-go-reflect2-dev >/dev/null 2>&1 || need_pkgs+=(reflect2)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "apiserver: installing Debian packages (missing: ${need_pkgs[*]})" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  pkgs=(etcd-server openssl curl)
  if [ ! -x "$bin" ]; then
    pkgs+=(golang-go rsync golang-github-modern-go-reflect2-dev)
  fi
  apt-get install -y -qq "${pkgs[@]}" >&2
fi

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

echo "apiserver: building kube-apiserver v1.20.2 into $cache (minutes; once per machine)" >&2
work="$cache.build"
rm -rf "$work"
mkdir -p "$work" "$cache"
src_list=/etc/apt/sources.list.d/basalt-debian-src.sources
cleanup() {
  rm -f "$src_list"
}
trap cleanup EXIT
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$src_list"
else
  echo "apiserver: /etc/apt/sources.list.d/debian.sources not found; cannot add deb-src" >&2
  exit 1
fi
apt-get update -qq >&2
(cd "$work" && apt-get source --download-only "kubernetes=$version" >&2)
rm -f "$src_list"
apt-get update -qq >&2 || true
(cd "$work" && tar xzf kubernetes_1.20.5+really1.20.2.orig.tar.gz)
tree="$work/kubernetes-1.20.2"
# The vendored reflect2 v1.0.1 reads Go's map iterator with the pre-1.18 layout and crashes the
# server on its first pretty-printed response: swap in Debian's v1.0.2.
reflect_dir=$(dpkg -L golang-github-modern-go-reflect2-dev | grep '/reflect2$' | head -n1)
rm "$tree"/vendor/github.com/modern-go/reflect2/*.go
cp "$reflect_dir"/*.go "$tree"/vendor/github.com/modern-go/reflect2/
mkdir -p "$work/home"
(cd "$tree" && HOME="$work/home" GOPROXY=off GOSUMDB=off GOFLAGS= make WHAT=cmd/kube-apiserver >&2)
cp "$tree/_output/bin/kube-apiserver" "$bin.tmp"
mv "$bin.tmp" "$bin"
rm -rf "$work"
echo "$bin"
