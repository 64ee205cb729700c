"""`kiosk ask`, `kiosk eval`, `kiosk demo`: the brain in text, measured on dialogues, and the
scripted demo."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kiosk.cli.common import Subparsers, cli_config
from kiosk.config import DEMO_DIR
from kiosk.errors import KioskError
from kiosk.wiring import load_brain, screen_source


def register(sub: Subparsers) -> None:
    p = sub.add_parser("ask", help="text conversation with the brain")
    p.add_argument("--site")
    p.add_argument("--index")
    p.add_argument("--screen", help="page id on the touchscreen (':screen ID' changes it); "
                                    "default: the configured screen source")
    p.add_argument("--lang", choices=["ja", "en"])
    p.add_argument("--embedder", help="model name from models/manifest.toml")
    p.add_argument("--explain", action="store_true",
                   help="show act, kind, detail flag, query, top pages and scores")
    p.set_defaults(func=cmd_ask)
    p = sub.add_parser("eval", help="top-1 and MRR per query strategy on dialogues")
    p.add_argument("--site")
    p.add_argument("--index")
    p.add_argument("--dialogues", help="a JSON-lines file of dialogues (or --all)")
    p.add_argument("--all", action="store_true",
                   help="every set of --bench and the demo, in one table (JSON: each set's "
                        "report and the table)")
    p.add_argument("--bench", help="folder of dialogue sets for --all (default: "
                                   "../shared/bench beside the checkout)")
    p.add_argument("--sets", help="with --all: only these sets, comma-separated")
    p.add_argument("--cv", choices=["site"],
                   help="with --all: leave one venue site out: each is evaluated with the "
                        "context gate fitted without it")
    p.add_argument("--embedder", help="model name from models/manifest.toml")
    p.add_argument("--ranker", choices=["hybrid", "dense", "lexical"], default="hybrid",
                   help="dense and lexical legs fused (default), or one alone")
    p.add_argument("--json", action="store_true")
    p.add_argument("--by-turn", nargs="?", const="resolved", metavar="STRATEGY",
                   help="list the turns a strategy missed (default: resolved): utterance, kind, "
                        "expected and found pages, query, reply")
    p.set_defaults(func=cmd_eval)
    p = sub.add_parser("demo", help="scripted conversation over the bundled demo site")
    p.add_argument("--explain", action="store_true")
    p.set_defaults(func=cmd_demo)


def _explain(result: Any) -> str:
    res = result.resolution
    conf = result.bare_confidence
    conf_text = "-" if conf is None else f"{conf[0]:.3f} (lead {conf[1]:.2f})"
    lines = [f"  act={res.act} kind={res.kind} detail={res.detail} bare_confidence={conf_text}",
             f"  query: {res.query.text if res.query else '(none)'}"]
    for hit in result.hits[:3]:
        lines.append(f"  {hit.score:.3f}  {hit.page_id}")
    lines.append(f"  {result.elapsed_ms:.1f} ms")
    return "\n".join(lines)


def cmd_ask(args: argparse.Namespace) -> int:
    cfg = cli_config(args)
    brain = load_brain(cfg)
    lang = args.lang or (None if cfg.brain.language == "auto" else cfg.brain.language)
    source = None if args.screen else screen_source(cfg, {p.page_id for p in brain.index.pages})
    if source is not None and cfg.screen.source != "fixed":
        import time

        deadline = time.monotonic() + 3.0  # let the browser or the bridge report once
        while source.current() is None and time.monotonic() < deadline:
            time.sleep(0.02)
    screen = args.screen
    history: tuple[Any, ...] = ()
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            try:
                line = input("visitor> ")
            except EOFError:
                break
        else:
            raw = sys.stdin.readline()
            if not raw:
                break
            line = raw.rstrip("\n")
        if not line.strip():
            continue
        if line.startswith(":screen"):
            screen = line.split(maxsplit=1)[1] if " " in line else None
            source = None  # typed by hand from now on
            print(f"(screen: {screen})")
            continue
        if source is not None:
            shown = source.current()
            screen = shown.brain_id if shown is not None else None
        result = brain.respond(history, line, screen, lang)
        if not interactive:
            print(f"visitor> {line}")
        print(f"avatar> {result.reply.text}")
        if args.explain:
            print(_explain(result))
        history = (*history, result.exchange())
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from kiosk.eval import evaluate, format_misses, format_table, load_dialogues

    cfg = cli_config(args)
    if args.all:
        return _eval_all(args, cfg)
    if not args.dialogues:
        raise KioskError("usage", "kiosk eval needs --dialogues FILE or --all",
                         "kiosk eval --dialogues ../shared/bench/vagov-en/dialogues.jsonl "
                         "--site ../shared/bench/vagov-en/site, or kiosk eval --all")
    brain = load_brain(cfg)
    dialogues = load_dialogues(Path(args.dialogues))
    report = evaluate(brain, dialogues)
    if args.by_turn:
        print(format_misses(report, args.by_turn))
    elif args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(format_table(report))
    return 0


def _eval_all(args: argparse.Namespace, cfg: Any) -> int:
    from kiosk.eval import format_misses
    from kiosk.evalsets import (
        cross_validate,
        default_bench_dir,
        evaluate_all,
        find_sets,
        format_summary,
    )

    bench = Path(args.bench) if args.bench else default_bench_dir()
    sets = find_sets(bench, args.sets.split(",") if args.sets else None)

    def progress(name: str) -> None:
        print(f"(evaluated {name})", file=sys.stderr)

    result = (cross_validate(cfg, sets, progress) if args.cv
              else evaluate_all(cfg, sets, progress))
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    elif args.by_turn:
        for name, report in result["sets"].items():
            print(f"=== {name}\n{format_misses(report, args.by_turn)}")
    else:
        print(format_summary(result))
        if "cv" in result:
            print("(left out: each venue site evaluated with the gate fitted on the others; "
                  "without the gate:)")
            print(format_summary({"summary": {"rows": result["cv"]["without_gate"],
                                              "worst": {}}}))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """The main job on the embedded defaults: a scripted conversation over the demo site."""
    cfg = cli_config(args)
    brain = load_brain(cfg)
    script = json.loads((DEMO_DIR / "script.json").read_text(encoding="utf-8"))
    for part in script:
        print(f"\n=== {part['title']} ===")
        history: tuple[Any, ...] = ()
        for step in part["turns"]:
            screen = step.get("screen")
            if screen:
                print(f"(screen shows {screen})")
            result = brain.respond(history, step["user"], screen, part["lang"])
            print(f"visitor> {step['user']}")
            print(f"avatar>  {result.reply.text}")
            if args.explain:
                print(_explain(result))
            history = (*history, result.exchange())
    return 0
