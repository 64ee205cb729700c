#!/usr/bin/env bash
# Installs this checkout in a Debian bookworm arm64 root (run under qemu-user emulation) as a
# Pi owner would (scripts/install.sh), runs the probe there and on this machine, and compares:
# page top-1, CER/WER, the fixed questions' replies, index checksums, doctor, the bridge
# handshake, the systemd units. Not part of .ci/run: emulation is slow (see the README, "On
# arm64"). Run as root on an x86-64 Debian/Ubuntu machine; everything runs at nice 19.
#
#   sudo scripts/check-arm64.sh [--cache DIR] [--fresh] [--unpinned] [--steps a,b]
#                               [--utterances N] [--skip-install] [--shell]
#
# --cache DIR: where the arm64 root is kept between runs (default ~/.cache/kiosk-arm64);
#   the probe files and logs of the last run are in DIR/last.
# --fresh: build the root again (debootstrap) instead of reusing it.
# --unpinned: let pip pick the newest releases in the root; by default it is held to the
#   versions of this checkout's .venv (pip freeze), so that both sides run the same code.
# --steps: only these probe steps (scripts/arm64_probe.py --help); the other steps' results
#   from the last run are kept in the probe files.
# --skip-install: reuse the root's install as it is (probe and compare only).
# --shell: open a shell in the root (mounted), for a look around; nothing else.
set -euo pipefail

main() {  # the whole script is read before it runs: editing it during a run is safe
SRC="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${KIOSK_ARM64_CACHE:-$HOME/.cache/kiosk-arm64}"
FRESH=0 PINNED=1 SKIP_INSTALL=0 SHELL_ONLY=0 STEPS="" UTTERANCES=2
MIRROR="${KIOSK_ARM64_MIRROR:-http://deb.debian.org/debian}"
# the root's own packages: what debootstrap's minbase lacks for pip, the venv and the checks;
# the appliance's own Debian packages (libportaudio2, libspeexdsp1) are left to install.sh
ROOT_PACKAGES="python3,python3-venv,python3-pip,ca-certificates,systemd,procps"

die() { echo "check-arm64: $*" >&2; exit 2; }
say() { echo "check-arm64: $(date -u +%H:%M:%S) $*" >&2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --cache) CACHE="$2"; shift 2 ;;
    --fresh) FRESH=1; shift ;;
    --unpinned) PINNED=0; shift ;;
    --steps) STEPS="$2"; shift 2 ;;
    --utterances) UTTERANCES="$2"; shift 2 ;;
    --skip-install) SKIP_INSTALL=1; shift ;;
    --shell) SHELL_ONLY=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, binfmt_misc and chroot need it)"
[ "$(uname -m)" = x86_64 ] || die "run on x86-64: the point is to compare with arm64"
[ -x "$SRC/.venv/bin/python" ] || die "no $SRC/.venv: run scripts/setup.sh first"
renice -n 19 $$ >/dev/null  # every step below inherits it: the machine is shared
START=$(date +%s)
ROOTFS="$CACHE/root"
OUT="$CACHE/last"
mkdir -p "$CACHE" "$OUT"

# 1. emulation: qemu-user-static registered with binfmt_misc (F flag: works inside a chroot)
if ! command -v debootstrap >/dev/null || [ ! -e /usr/bin/qemu-aarch64-static ] \
   || ! command -v update-binfmts >/dev/null; then
  say "installing qemu-user-static binfmt-support debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static binfmt-support \
    debootstrap >/dev/null
fi
if ! mountpoint -q /proc/sys/fs/binfmt_misc; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] \
   || ! grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
  update-binfmts --enable qemu-aarch64
fi

# 2. the root: debootstrap once, then reused
if [ "$FRESH" = 1 ] && [ -d "$ROOTFS" ]; then
  say "removing the old root (--fresh)"
  rm -rf --one-file-system "$ROOTFS"
fi
if [ ! -f "$ROOTFS/.kiosk-root-complete" ]; then
  say "building a bookworm arm64 root in $ROOTFS (debootstrap, about 10 min)"
  rm -rf --one-file-system "$ROOTFS.tmp"
  debootstrap --arch=arm64 --variant=minbase --include="$ROOT_PACKAGES" bookworm \
    "$ROOTFS.tmp" "$MIRROR" > "$OUT/debootstrap.log" 2>&1 \
    || die "debootstrap failed: see $OUT/debootstrap.log"
  mv "$ROOTFS.tmp" "$ROOTFS"
  touch "$ROOTFS/.kiosk-root-complete"
fi
chroot "$ROOTFS" /bin/true 2>/dev/null \
  || die "arm64 programs do not run: binfmt_misc has no working qemu-aarch64 entry"

# 3. mounts for the root, undone (and every process left in the root ended) on exit. No
# /sys: it would be this machine's (x86-64) and onnxruntime >= 1.29 reads it at import (CPU
# and device discovery): under emulation that import ends in a segmentation fault (found by
# this script; on a Pi /sys is the Pi's own). Without /sys it warns that cpuinfo failed.
MOUNTS=()
cleanup() {
  local pid
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    if [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$ROOTFS" ]; then
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  local i
  for (( i=${#MOUNTS[@]}-1; i>=0; i-- )); do umount -l "${MOUNTS[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
for fs in proc dev dev/pts; do
  mkdir -p "$ROOTFS/$fs"
  mountpoint -q "$ROOTFS/$fs" && continue
  case "$fs" in
    proc) mount -t proc proc "$ROOTFS/proc" ;;
    *) mount --bind "/$fs" "$ROOTFS/$fs" ;;
  esac
  MOUNTS+=("$ROOTFS/$fs")
done
cp -L /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
# certificate authorities added on this machine (a TLS-inspecting proxy in front of the
# package registries) are trusted in the root as well, or pip cannot reach PyPI
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  mkdir -p "$ROOTFS/usr/local/share/ca-certificates"
  if ! diff -rq /usr/local/share/ca-certificates "$ROOTFS/usr/local/share/ca-certificates" \
       >/dev/null 2>&1; then
    cp /usr/local/share/ca-certificates/*.crt "$ROOTFS/usr/local/share/ca-certificates/"
    chroot "$ROOTFS" update-ca-certificates >/dev/null
  fi
fi
in_root() { chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 "$@"; }

if [ "$SHELL_ONLY" = 1 ]; then
  in_root /bin/bash -l || true
  exit 0
fi

# 4. the checkout (its tracked files, as they are in the work tree) into the root
rm -rf --one-file-system "$ROOTFS/opt/kiosk-src"
mkdir -p "$ROOTFS/opt/kiosk-src" "$ROOTFS/opt/kiosk-out"
(cd "$SRC" && git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) \
  | tar -C "$ROOTFS/opt/kiosk-src" -xf -

# 5. scripts/install.sh in the root, as on a Pi (no systemd running: units written, not enabled)
STEP_TIMES=()
timed() {  # timed NAME COMMAND...: runs it, keeps its wall time for the summary
  local name="$1" t0=$(date +%s) rc=0
  shift
  "$@" || rc=$?
  STEP_TIMES+=("$name: $(( $(date +%s) - t0 )) s (exit $rc)")
  return $rc
}
PIP_ENV=()
if [ "$PINNED" = 1 ]; then
  "$SRC/.venv/bin/python" -m pip freeze --exclude-editable --disable-pip-version-check \
    > "$ROOTFS/opt/kiosk-out/constraints.txt"
  PIP_ENV=(PIP_CONSTRAINT=/opt/kiosk-out/constraints.txt)
fi
if [ "$SKIP_INSTALL" = 0 ]; then
  say "scripts/install.sh in the arm64 root (pip, models, e5 conversion, index: emulated, slow)"
  if ! timed install in_root "${PIP_ENV[@]}" bash /opt/kiosk-src/scripts/install.sh \
       --no-enable > "$OUT/install.log" 2>&1; then
    tail -n 30 "$OUT/install.log" >&2
    say "install failed (log: $OUT/install.log); the probe runs all the same"
  fi
fi

# 6. the probe, natively and in the root; each writes its JSON after every step
PROBE_ARGS=(--utterances "$UTTERANCES")
[ -n "$STEPS" ] && PROBE_ARGS+=(--steps "$STEPS")
if [ -z "$STEPS" ]; then rm -f "$OUT/probe-x86_64.json" "$OUT/probe-aarch64.json"; fi
say "probe on x86-64"
X86_STATE="$CACHE/x86-state"
mkdir -p "$X86_STATE"
timed probe-x86_64 env KIOSK_STATE_DIR="$X86_STATE" KIOSK_CONFIG="$X86_STATE/kiosk.toml" \
  KIOSK_MODELS_DIR="${KIOSK_MODELS_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/kiosk-avatar/models}" \
  "$SRC/.venv/bin/python" "$SRC/scripts/arm64_probe.py" --out "$OUT/probe-x86_64.json" \
  "${PROBE_ARGS[@]}" > "$OUT/probe-x86_64.log" 2>&1 || true
VENV=/usr/local/lib/kiosk-avatar/venv
if [ -x "$ROOTFS$VENV/bin/python" ]; then
  say "probe in the arm64 root (emulated)"
  cp "$OUT/probe-aarch64.json" "$ROOTFS/opt/kiosk-out/" 2>/dev/null || true
  timed probe-aarch64 in_root KIOSK_CONFIG=/etc/kiosk-avatar/kiosk.toml \
    KIOSK_STATE_DIR=/var/lib/kiosk-avatar KIOSK_MODELS_DIR=/var/lib/kiosk-avatar/models \
    PYTHONUNBUFFERED=1 "$VENV/bin/python" /opt/kiosk-src/scripts/arm64_probe.py \
    --out /opt/kiosk-out/probe-aarch64.json "${PROBE_ARGS[@]}" \
    > "$OUT/probe-aarch64.log" 2>&1 || true
  cp "$ROOTFS/opt/kiosk-out/probe-aarch64.json" "$OUT/" 2>/dev/null || true
else
  say "no installed venv in the root ($VENV): no arm64 probe"
fi

# 7. the comparison
set +e
"$SRC/.venv/bin/python" "$SRC/scripts/arm64_compare.py" "$OUT/probe-x86_64.json" \
  "$OUT/probe-aarch64.json" | tee "$OUT/table.md"
rc=${PIPESTATUS[0]}
set -e
echo
for t in "${STEP_TIMES[@]}"; do echo "wall time: $t"; done
echo "wall time: total $(( $(date +%s) - START )) s (emulated: not the kiosk's latency)"
echo "logs and probe files: $OUT"
exit "$rc"
}

main "$@"
