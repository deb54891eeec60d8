#!/usr/bin/env bash
# Build deploy/Dockerfile with podman and run the image for real (not part of `make test`):
#   deploy/test-image.sh            build, then doctor + worker + a Telegram conversation
#   deploy/test-image.sh --compose  … and the compose stack under podman-compose
#
# Needs root, Debian's podman, runc, debootstrap and podman-compose (apt-get install podman
# runc debootstrap podman-compose), redis-server, and the repository's .venv (make install).
# No container registry is needed: the base image is built locally —
#   1. `debootstrap --variant=minbase bookworm` + `podman import` → localhost/debian-minbase
#   2. a Python layer on top (Debian's python3 + python3-venv), tagged as the Dockerfile's
#      default BASE, so `podman build --pull=never` builds deploy/Dockerfile unchanged.
# Podman runs with runc, cgroupfs and raised ulimits (this kind of host has hybrid cgroups),
# from a private containers.conf; nothing under /etc is changed. Both steps are cached in
# $WORK (default /var/tmp/mnemogate-image) and in podman's image store.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/var/tmp/mnemogate-image}
IMAGE=${IMAGE:-localhost/mnemogate:test}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE=$(sed -n 's/^ARG BASE=//p' "$REPO/deploy/Dockerfile")
started=$(date +%s)
step() { printf '[image] %s (%ss)\n' "$*" "$(( $(date +%s) - started ))"; }

[ "$(id -u)" = 0 ] || { echo "run as root (rootful podman)" >&2; exit 2; }
for tool in podman runc debootstrap redis-server; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done
mkdir -p "$WORK"
cat > "$WORK/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF="$WORK/containers.conf"

if ! podman image exists localhost/debian-minbase:bookworm; then
  step "debootstrap bookworm (minbase)"
  rm -rf "$WORK/rootfs"
  debootstrap --variant=minbase bookworm "$WORK/rootfs" "$MIRROR" >"$WORK/debootstrap.log"
  tar -C "$WORK/rootfs" -c . | podman import - localhost/debian-minbase:bookworm >/dev/null 2>&1
  rm -rf "$WORK/rootfs"
fi

if ! podman image exists "$BASE"; then
  step "Python layer tagged $BASE"
  ctx="$WORK/python-layer"
  mkdir -p "$ctx"
  # the host's CA bundle, in case outbound TLS is inspected by a proxy of this network
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca.crt"
  cat > "$ctx/Containerfile" <<'LAYER'
FROM localhost/debian-minbase:bookworm
RUN apt-get update \
    && apt-get install --yes --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY ca.crt /etc/ssl/certs/ca-certificates.crt
LAYER
  podman build --pull=never --network=host -t "$BASE" "$ctx" >"$WORK/python-layer.log"
fi

REDIS_IMAGE=$(sed -n 's/^ *image: \(docker.io\/library\/redis:.*\)$/\1/p' "$REPO/deploy/compose.yaml")
if [ "${1:-}" = --compose ] && ! podman image exists "$REDIS_IMAGE"; then
  # No registry: a stand-in with Debian's redis-server (7.0) under the compose file's name.
  step "stand-in for $REDIS_IMAGE (Debian redis-server; no registry here)"
  ctx="$WORK/redis-standin"
  mkdir -p "$ctx"
  cat > "$ctx/Containerfile" <<'LAYER'
FROM localhost/debian-minbase:bookworm
RUN apt-get update \
    && apt-get install --yes --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* \
    && install -d -m 0700 -o 999 -g 1000 /data
WORKDIR /data
LAYER
  podman build --pull=never --network=host -t "$REDIS_IMAGE" "$ctx" >"$WORK/redis-standin.log"
fi

step "podman build deploy/Dockerfile"
podman build --pull=never --network=host --format docker -f "$REPO/deploy/Dockerfile" -t "$IMAGE" \
  -t localhost/mnemogate:0.1.0 "$REPO" >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; exit 1; }
podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "[image] size %.0f MB\n", $1/1e6}'
if podman run --rm --entrypoint sh "$IMAGE" -c 'test -e /src || test -e /root/.cache/pip'; then
  echo "build leftovers found in the image" >&2; exit 1
fi

step "running the image"
cd "$REPO"
.venv/bin/python -m tests.image.drive --image "$IMAGE" "$@"
step "done"
