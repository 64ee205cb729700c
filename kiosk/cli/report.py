"""`kiosk report`: what visitors asked and what the site could not answer."""

from __future__ import annotations

import argparse
from pathlib import Path

from kiosk.cli.common import Subparsers, cli_config


def register(sub: Subparsers) -> None:
    p = sub.add_parser("report", help="what visitors asked and what the site could not answer")
    p.add_argument("--since", default="7d", help="period: 7d, 24h, 2w (default 7d)")
    p.add_argument("--logs", help="logs folder (default: the service's)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """Turns per day, answered share, pages asked about, and (with stored transcripts) the
    questions the site could not answer, grouped by meaning."""
    from kiosk.logs import logs_dir
    from kiosk.models import default_state_dir
    from kiosk.report import as_json, format_report, report_for
    from kiosk.wiring import query_encoder

    cfg = cli_config(args)
    folder = Path(args.logs) if args.logs else logs_dir(default_state_dir())
    found = report_for(folder, args.since, lambda: query_encoder(cfg))
    print(as_json(found) if args.json else format_report(found), end="\n" if args.json else "")
    return 0
