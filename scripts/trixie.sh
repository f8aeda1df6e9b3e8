#!/usr/bin/env bash
# Runs a command in this checkout on another Node.js line, inside a Debian 13 (trixie) root:
# its glibc (2.41) is one uWebSockets.js 20.57 loads on, which this host's may not be
# (docs/runtime.md). The checkout is bind-mounted at the same path, so node_modules, the addon
# built on the host (N-API: it loads on every line) and .cache serve unchanged.
#
#   sudo scripts/trixie.sh 24 npx vitest run        # Node.js line, then the command
#
# Needs root (debootstrap, chroot, mounts). The root is made once (~20 s, Debian's packages)
# in $TRIXIE_ROOT (default /var/tmp/preconf-trixie); Node.js comes from the npm registry
# (scripts/ensure-node.mjs), npm is the host's.
set -euo pipefail

line=${1:?usage: scripts/trixie.sh NODE_LINE COMMAND...}
shift
repo=$(cd "$(dirname "$0")/.." && pwd)
rootfs=${TRIXIE_ROOT:-/var/tmp/preconf-trixie}

if [ ! -f "$rootfs/.preconf-root" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
  started=$(date +%s)
  # mount and util-linux: the disk-full tests mount a tmpfs, taskset pins the bench tests;
  # curl: the HTTP/1.0 guard test; libatomic1: Node.js 26 links it; git: the bench tests
  # name checkouts by commit; python3-pip: ensure-nats fetches through pip.
  debootstrap --variant=minbase --include=mount,util-linux,procps,curl,ca-certificates,libatomic1,git,python3-pip \
    trixie "$rootfs" >/dev/null
  touch "$rootfs/.preconf-root"
  echo "trixie.sh: made a Debian 13 root in $rootfs in $(( $(date +%s) - started )) s"
fi

node_bin=$(node "$repo/scripts/ensure-node.mjs" "$line")
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")

mounted=()
bind() { # bind SOURCE TARGET_IN_ROOT
  mkdir -p "$rootfs$2"
  mount --bind "$1" "$rootfs$2"
  mounted=("$rootfs$2" "${mounted[@]}")
}
cleanup() {
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT

mkdir -p "$rootfs/proc" && mount -t proc proc "$rootfs/proc" && mounted=("$rootfs/proc" "${mounted[@]}")
bind /dev /dev
bind /dev/pts /dev/pts
bind /sys /sys
bind "$repo" "$repo"
bind "$npm_dir" /opt/npm
mkdir -p "${HOME:-/root}/.npm"
bind "${HOME:-/root}/.npm" /root/.npm
cp /etc/resolv.conf "$rootfs/etc/resolv.conf" 2>/dev/null || true
# The user's pip configuration and certificates, as on the host (ensure-nats uses pip).
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt" 2>/dev/null || true
cp /etc/pip.conf "$rootfs/etc/pip.conf" 2>/dev/null || true
[ -d /opt/wheels ] && bind /opt/wheels /opt/wheels
pip_env=()
while IFS= read -r v; do pip_env+=("$v"); done < <(env | grep -E '^(PIP_|HTTPS?_PROXY=|NO_PROXY=|https?_proxy=|no_proxy=|NODE_EXTRA_CA_CERTS=|npm_config_|NPM_CONFIG_)' || true)
# npm's certificate file as the host's npm sees it (often in a global npmrc the root lacks):
# behind a TLS-inspecting proxy, `npm pack` (ensure-node) fails without it.
cafile=$(npm config get cafile 2>/dev/null || true)
if [ -n "$cafile" ] && [ "$cafile" != null ] && [ -f "$cafile" ]; then
  mkdir -p "$rootfs$(dirname "$cafile")"
  cp "$cafile" "$rootfs$cafile" 2>/dev/null || true
  pip_env+=("npm_config_cafile=$cafile")
fi

# node, npm and npx of the chosen line first on the root's PATH.
bin="$rootfs/opt/preconf-bin"
mkdir -p "$bin"
ln -sf "$node_bin" "$bin/node"
printf '#!/bin/sh\nexec node /opt/npm/bin/npm-cli.js "$@"\n' >"$bin/npm"
printf '#!/bin/sh\nexec node /opt/npm/bin/npx-cli.js "$@"\n' >"$bin/npx"
chmod +x "$bin/npm" "$bin/npx"

chroot "$rootfs" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" CI="${CI:-}" LANG=C.UTF-8 "${pip_env[@]}" \
  PATH=/opt/preconf-bin:/usr/local/bin:/usr/bin:/bin \
  /bin/bash -c 'cd "$0" && echo "trixie.sh: $(node --version) on glibc $(ldd --version | head -1 | grep -o "[0-9.]*$")" && exec "$@"' "$repo" "$@"
