"""`kiosk config` and `kiosk console`: the settings, the admin PIN, the serial console."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from kiosk.cli.common import Subparsers, cli_config_path
from kiosk.config import load_config
from kiosk.errors import KioskError

log = logging.getLogger(__name__)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("config", help="show, change and save the configuration")
    p.add_argument("action", choices=["show", "get", "set", "save", "schema", "set-pin",
                                      "pin-hash", "check"],
                   help="check FILE: validate a file strictly; pin-hash: PIN on stdin -> the "
                        "stored form for an inventory")
    p.add_argument("key", nargs="?")
    p.add_argument("value", nargs="?")
    p.set_defaults(func=cmd_config)
    p = sub.add_parser("console", help="serve the installer console on a serial port")
    p.add_argument("--port", help="serial device or pyserial URL (default: console.port)")
    p.set_defaults(func=cmd_console)


def cmd_config(args: argparse.Namespace) -> int:
    from kiosk import config as cfgmod
    from kiosk.configstore import ConfigStore

    path = cli_config_path(args)
    if args.action == "schema":
        print(cfgmod.format_schema())
        return 0
    if args.action in ("pin-hash", "set-pin") and (args.key or args.value):
        # a PIN on the command line stays in ps and in the shell's history
        raise KioskError("usage", f"config {args.action} takes no PIN on the command line",
                         f"type it on standard input: kiosk config {args.action}, or "
                         f"echo PIN | kiosk config {args.action} from a file only root reads")
    if args.action == "pin-hash":
        from firmware_bridge.pin import pin_record

        print(pin_record(sys.stdin.readline().strip()))
        return 0
    if args.action == "check":
        # strict: the file as written, no fallback (Ansible validates a config before placing it)
        load_config(Path(args.key) if args.key else path)
        print("ok")
        return 0
    if args.action == "set-pin":
        from firmware_bridge.pin import PinFile

        pin = sys.stdin.readline().strip()
        PinFile(path.with_name("admin-pin.json")).set(pin)
        print(f"admin PIN set ({path.with_name('admin-pin.json')}, salted scrypt hash); "
              f"wrong-PIN lock-out cleared")
        return 0
    store = ConfigStore(path)
    if args.action == "show":
        prefix = args.key or ""
        for s in cfgmod.schema():
            if not prefix or s.key == prefix or s.key.startswith(prefix + "."):
                print(f"{s.key} = {store.get(s.key)!r}")
    elif args.action == "get":
        if not args.key:
            raise KioskError("usage", "config get needs a KEY", "kiosk config get KEY")
        print(store.get(args.key))
    elif args.action == "set":
        if not args.key or args.value is None:
            raise KioskError("usage", "config set needs KEY and VALUE",
                             "kiosk config set KEY VALUE")
        store.set(args.key, args.value)
        store.save()  # first: a save that fails must not be announced as applied
        later = "" if cfgmod.setting_for(args.key).live else " (takes effect after restart)"
        print(f"{args.key} = {store.get(args.key)!r}{later}")
        print(f"saved to {path}")
    elif args.action == "save":
        changed = store.save()
        print(f"saved {path} ({len(changed)} change(s); loaded from: {store.origin})")
    return 0


def cmd_console(args: argparse.Namespace) -> int:
    import time

    from firmware_bridge.console import ConsoleSession, open_serial, serve
    from firmware_bridge.consolehost import RingLog, StandaloneHost
    from firmware_bridge.pin import PinFile
    from kiosk.configstore import ConfigStore

    path = cli_config_path(args)
    ring = RingLog()
    logging.getLogger().addHandler(ring)

    def apply_live(cfg: Any, keys: list[str]) -> None:
        # the live settings this process owns; the voice loop applies its own when it runs
        if "logging.level" in keys:
            logging.getLogger().setLevel(cfg.logging.level)
        log.info("console: applied live: %s", ", ".join(keys))

    store = ConfigStore(path, apply_live=apply_live)
    logging.getLogger().setLevel(store.saved.logging.level)
    restart_file = os.environ.get("KIOSK_RESTART_FILE")
    host = StandaloneHost(store, ring, Path(restart_file) if restart_file else None)
    pins = PinFile(path.with_name("admin-pin.json"))
    port = args.port or store.saved.console.port
    if not port:
        raise KioskError("config", "no console port: console.port is empty and --port not given",
                         "pass --port DEVICE or set console.port")
    log.info("console: serving on %s (config %s)", port, path)
    serve(open_serial(port, store.saved.console.baud),
          lambda now: ConsoleSession(store, pins, host, now), stop=lambda: False,
          clock=time.time, name=port)  # wall clock: the PIN lock-out outlives this process
    return 0
