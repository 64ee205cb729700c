"""`kiosk models install|list|verify`: the model files of models/manifest.toml."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from kiosk.cli.common import Subparsers, cli_config
from kiosk.errors import KioskError

log = logging.getLogger(__name__)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("models", help="provision, list or verify model files")
    p.add_argument("action", choices=["install", "list", "verify"])
    p.add_argument("names", nargs="*", help="model names (default: all in the manifest)")
    p.add_argument("--wheels", help="take wheels from this folder (air-gapped install)")
    p.add_argument("--converted", help="take converted model files from this folder (devices)")
    p.add_argument("--force", action="store_true", help="reinstall even when the file verifies")
    p.set_defaults(func=cmd_models)


def cmd_models(args: argparse.Namespace) -> int:
    from kiosk.models import install, load_manifest, verify

    cfg = cli_config(args)
    manifest = load_manifest()
    names = args.names or [n for n, e in manifest.items() if e.install_by_default]
    for name in names:
        if name not in manifest:
            raise KioskError("model", f"no model named {name!r} in the manifest",
                             f"use one of: {', '.join(manifest)}")
    models_dir = cfg.paths.models_path()
    if args.action == "list":
        for name in names:
            entry = manifest[name]
            state = "ok" if verify(entry, models_dir) else "missing"
            print(f"{name:<14}{state:<9}{entry.package}=={entry.version}  {entry.licence}")
        return 0
    if args.action == "verify":
        bad = [n for n in names if not verify(manifest[n], models_dir)]
        for n in bad:
            print(f"{n}: missing or wrong checksum in {models_dir}; run: kiosk models install {n}")
        return 1 if bad else 0
    wheels = Path(args.wheels) if args.wheels else None
    converted = Path(args.converted) if args.converted else None
    for name in names:
        path = install(manifest[name], models_dir, wheels_dir=wheels, converted_dir=converted,
                       force=args.force)
        print(f"{name}: {path}")
    # Setup runs this right after pip: the files pip and this command just wrote leave the
    # page cache, or the first processes to map them count large folios as resident (fsutil).
    from kiosk.fsutil import drop_cached

    fresh = [models_dir] + ([Path(sys.prefix)] if sys.prefix != sys.base_prefix else [])
    log.info("page cache of %d installed files released", drop_cached(fresh))
    return 0
