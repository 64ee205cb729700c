"""Command line: parse, set up logging, dispatch. Each command group lives in `kiosk/cli/`."""

from __future__ import annotations

from kiosk.malloc import limit_arenas

limit_arenas()  # before any import starts a thread (see kiosk.malloc)

import argparse
import logging
import sys
from collections.abc import Sequence

from kiosk.cli import ask, bench, config, doctor, models, report, run, site
from kiosk.errors import KioskError
from kiosk.logs import setup_logging


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kiosk", description="kiosk-avatar: an offline voice avatar that answers from the "
                                  "venue's website.")
    parser.add_argument("--config", help="configuration TOML file")
    parser.add_argument("--models-dir", help="folder of model files (overrides the config)")
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in (models, site, report, ask, run, config, doctor, bench):
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(logging.DEBUG if args.verbose else logging.INFO)
    try:
        return int(args.func(args))
    except KioskError as exc:
        print(f"error: {exc.describe()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
