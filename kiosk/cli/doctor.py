"""`kiosk doctor`: the appliance's health, each problem with its fix."""

from __future__ import annotations

import argparse
import json

from kiosk.cli.common import Subparsers, cli_config, cli_config_path


def register(sub: Subparsers) -> None:
    p = sub.add_parser("doctor", help="check the appliance: each problem with its fix")
    p.add_argument("--quick", action="store_true", help="do not record from the microphone")
    p.add_argument("--echo", action="store_true",
                   help="play a probe and measure the echo through echo.mode (6 s)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    """The appliance's health; exit status 1 when a check failed."""
    from kiosk.doctor import format_checks, healthy, run_checks
    from kiosk.models import default_state_dir

    cfg = cli_config(args)
    checks = run_checks(cfg, cli_config_path(args), default_state_dir(),
                        record_s=0.0 if args.quick else 1.0, echo_probe=args.echo)
    if args.json:
        print(json.dumps([c.__dict__ for c in checks], ensure_ascii=False))
    else:
        print(format_checks(checks))
    return 0 if healthy(checks) else 1
