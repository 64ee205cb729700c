"""`kiosk bench ...`: the benchmarks that print figures."""

from __future__ import annotations

import argparse
import json

from kiosk.cli.common import Subparsers, cli_config
from kiosk.cpus import available


def register(sub: Subparsers) -> None:
    p = sub.add_parser("bench", help="benchmarks that print figures")
    p.add_argument("what", choices=["brain", "echo", "fleet", "screen", "socket", "soak",
                                     "voice"])
    p.add_argument("--minutes", type=float,
                   help="soak: minutes of simulated conversation (default 60); echo: minutes "
                        "of avatar speech for the self-trigger count (default 10)")
    p.add_argument("--scenes", type=int, default=40, help="echo: double-talk scenes")
    p.add_argument("--paths", type=int, default=6, help="echo: simulated rooms of each kind")
    p.add_argument("--no-jack", action="store_true", help="echo: skip the JACK device run")
    p.add_argument("--jack-seconds", type=float, default=60.0,
                   help="echo: seconds the JACK device run plays (real time; default 60)")
    p.add_argument("--seed", type=int, default=1, help="echo: which simulated rooms and scenes")
    p.add_argument("--utterances", type=int, default=35,
                   help="voice: visitor turns (whole demo dialogues), each said by two voices")
    p.add_argument("--lang", choices=["en", "ja"], default="en", help="voice: the language")
    p.add_argument("--noise-db", type=float, default=None,
                   help="voice: crowd babble this many dB under the speech (default: none)")
    p.add_argument("--timed", type=int, default=8,
                   help="voice: questions through the loop at real speed for the latency")
    p.add_argument("--paused", type=int, default=None,
                   help="voice: questions said with a pause, through the loop at real speed, "
                        "for the turn-taking figures (default: all of the dialogues')")
    p.add_argument("--navigations", type=int, default=100, help="screen: browser navigations")
    p.add_argument("--seconds", type=float, default=0.0,
                   help="socket: seconds of the demo recording (default: all of it)")
    p.add_argument("--connections", type=int, default=1000,
                   help="socket: WebSocket connections the flood opens")
    p.add_argument("--megabytes", type=float, default=100.0,
                   help="socket: megabytes of frames the flood offers")
    p.add_argument("--pages", type=int, default=5000, help="size of the generated site")
    p.add_argument("--turns", type=int, default=400, help="timed turns per site")
    p.add_argument("--embedder", help="model name from models/manifest.toml")
    p.add_argument("--cpus", type=int, default=None,
                   help="voice, brain: pin the process to this many cores (engines size their "
                        "threads to them): the kiosk's CPU budget")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    if args.cpus is not None:
        from kiosk.cpus import pin
        from kiosk.errors import KioskError

        if args.what not in ("voice", "brain"):
            raise KioskError("bench", f"--cpus is for bench voice and bench brain, not "
                                      f"{args.what}", "drop --cpus")
        pin(args.cpus)  # before any engine is made: they size themselves to it
    if args.what == "fleet":
        from kiosk.bench import fleet as bench_fleet

        report = bench_fleet.run(cli_config(args))
        print(json.dumps(report) if args.json else bench_fleet.format_report(report))
        return 0
    if args.what == "voice":
        from kiosk.bench import voice as bench_voice

        report = bench_voice.run(cli_config(args), args.lang, args.utterances, args.noise_db,
                                 args.timed, args.paused)
        report["cpus"] = available()  # the pinned cores, else all the process may use
        print(json.dumps(report) if args.json else json.dumps(report, indent=1))
        return 0
    if args.what == "echo":
        from kiosk.bench import echo as bench_echo

        report = bench_echo.run(cli_config(args), avatar_minutes=args.minutes or 10.0,
                                scenes=args.scenes, paths_per_kind=args.paths,
                                jack=not args.no_jack, seed=args.seed,
                                jack_seconds=args.jack_seconds)
        print(json.dumps(report) if args.json else json.dumps(report, indent=1))
        return 0
    if args.what == "soak":
        from kiosk.bench import soak

        report = soak.run(cli_config(args), args.minutes or 60.0)
        print(json.dumps(report) if args.json else json.dumps(report, indent=1))
        return 0
    if args.what == "socket":
        from kiosk.bench import avatar_load

        report = avatar_load.run(args.seconds, args.connections, args.megabytes)
        print(json.dumps(report) if args.json else json.dumps(report, indent=1))
        return 0
    if args.what == "screen":
        from kiosk.bench import screen as bench_screen

        report = bench_screen.run(args.navigations)
        print(json.dumps(report) if args.json else
              f"{report['navigations']} navigations, {report['missed']} missed; lag p50 "
              f"{report['lag_ms']['p50']} ms, p95 {report['lag_ms']['p95']} ms")
        return 0
    from kiosk.bench import brain as bench_brain

    cfg = cli_config(args)
    report = bench_brain.run(cfg, pages=args.pages, turns=args.turns)
    report["cpus"] = available()
    print(json.dumps(report) if args.json else bench_brain.format_report(report))
    return 0
