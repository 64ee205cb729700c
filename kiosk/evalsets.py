"""Every dialogue set at once: `kiosk eval --all`.

A set is a folder of `../shared/bench/` (its `site/`, `dialogues.jsonl` and, when there is
one, `offtopic.jsonl`), plus the demo in each language. Each is evaluated as `kiosk eval` does
(kiosk.eval.evaluate) with its own site's index; the results are one table of page top-1 by
set x strategy and, for the brain, by kind, with key facts said, reply F1, unspeakable replies
and off-topic answers, and a last row of the worst real site for each column.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kiosk.config import DEMO_DIR, DEMO_SITE, Config
from kiosk.errors import KioskError
from kiosk.eval import Dialogue, evaluate, load_dialogues

log = logging.getLogger(__name__)

# The sets that are real venue sites (the worst row is taken over these): CAsT is an outside
# test of context selection, and the demo was written with its own site.
NOT_A_VENUE = ("cast", "demo")
KINDS = ("independent", "immediate", "distant", "situational", "site", "ellipsis",
         "long_detail")


@dataclass(frozen=True)
class DialogueSet:
    name: str
    site: Path
    dialogues: tuple[Path, ...]

    @property
    def venue(self) -> bool:
        return not self.name.startswith(NOT_A_VENUE)

    def load(self) -> list[Dialogue]:
        return [d for path in self.dialogues for d in load_dialogues(path)]


def default_bench_dir() -> Path:
    """`../shared/bench/` beside the checkout the project runs from."""
    return Path(__file__).resolve().parent.parent.parent / "shared" / "bench"


def find_sets(bench: Path, names: list[str] | None = None) -> list[DialogueSet]:
    """The bench's sets, in name order, then the demo's two (`names`: only these)."""
    if not bench.is_dir():
        raise KioskError("eval", f"no dialogue sets at {bench}",
                         "pass --bench DIR, the folder of ../shared/bench/'s sets")
    sets: list[DialogueSet] = []
    for folder in sorted(p for p in bench.iterdir() if p.is_dir()):
        main = folder / "dialogues.jsonl"
        if not main.is_file() or not (folder / "site").is_dir():
            continue
        extra = (folder / "offtopic.jsonl",) if (folder / "offtopic.jsonl").is_file() else ()
        sets.append(DialogueSet(folder.name, folder / "site", (main, *extra)))
    for lang in ("en", "ja"):
        sets.append(DialogueSet(f"demo-{lang}", DEMO_SITE,
                                (DEMO_DIR / "dialogues" / f"{lang}.jsonl",)))
    if names:
        unknown = set(names) - {s.name for s in sets}
        if unknown:
            raise KioskError("eval", f"no set named {', '.join(sorted(unknown))}",
                             f"sets: {', '.join(s.name for s in sets)}")
        sets = [s for s in sets if s.name in names]
    return sets


def _brain_for(cfg: Config, site: Path) -> Any:
    from kiosk.wiring import load_brain

    paths = dataclasses.replace(cfg.paths, site=str(site), index="")
    return load_brain(dataclasses.replace(cfg, paths=paths))


def evaluate_all(cfg: Config, sets: list[DialogueSet],
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Each set's `kiosk eval` report (per-turn records included), by name."""
    reports: dict[str, Any] = {}
    for dialogue_set in sets:
        brain = _brain_for(cfg, dialogue_set.site)
        reports[dialogue_set.name] = evaluate(brain, dialogue_set.load())
        reports[dialogue_set.name]["venue"] = dialogue_set.venue
        if progress is not None:
            progress(dialogue_set.name)
    return {"sets": reports, "summary": summary(reports)}


def _row(report: dict[str, Any]) -> dict[str, Any]:
    strategies = report["strategies"]
    resolved, raw = strategies["resolved"], strategies["raw"]
    row: dict[str, Any] = {"page_turns": resolved["page_turns"]}
    for name in ("raw", "seed", "resolved", "oracle_ref", "oracle"):
        if name in strategies:
            row[name] = strategies[name]["page_top1"]
    for kind in KINDS:
        if kind in resolved["by_kind"]:
            row[kind] = resolved["by_kind"][kind]["top1"]
            row[f"{kind}_raw"] = raw["by_kind"][kind]["top1"]
            row[f"{kind}_turns"] = resolved["by_kind"][kind]["turns"]
    for key in ("key_hit", "reply_f1", "unspeakable", "offtopic_false_answers",
                "false_refusals"):
        row[key] = resolved.get(key)
    return row


def summary(reports: dict[str, Any]) -> dict[str, Any]:
    """Per set, the table's row; and per column, the worst venue site (lowest; for
    `unspeakable` and off-topic answers, highest)."""
    rows = {name: _row(report) for name, report in reports.items()}
    venues = [name for name, report in reports.items() if report.get("venue")]
    worst: dict[str, Any] = {}
    columns = {c for name in venues for c in rows[name] if not c.endswith("_turns")}
    for column in sorted(columns):
        values = [(rows[name][column], name) for name in venues
                  if rows[name].get(column) is not None]
        if not values:
            continue
        higher_is_worse = column in ("unspeakable", "offtopic_false_answers", "false_refusals")
        value, name = max(values) if higher_is_worse else min(values)
        worst[column] = {"value": value, "set": name}
    return {"rows": rows, "worst": worst}


_COLUMNS = (("raw", "raw"), ("seed", "seed"), ("resolved", "RESOLVED"),
            ("oracle_ref", "or_ref"), ("oracle", "oracle"),
            ("independent", "indep"), ("independent_raw", "(raw)"),
            ("immediate", "immed"), ("distant", "distant"), ("key_hit", "key"),
            ("reply_f1", "F1"), ("unspeakable", "unspk"), ("offtopic_false_answers", "offtop"))


def format_summary(result: dict[str, Any]) -> str:
    rows, worst = result["summary"]["rows"], result["summary"]["worst"]

    def cell(value: Any) -> str:
        if value is None:
            return f"{'-':>9}"
        return f"{value:>9}" if isinstance(value, int) else f"{value:>9.3f}"

    head = f"{'set':<16}{'pages':>6}" + "".join(f"{label:>9}" for _, label in _COLUMNS)
    lines = [head]
    for name, row in rows.items():
        lines.append(f"{name:<16}{row['page_turns']:>6}"
                     + "".join(cell(row.get(column)) for column, _ in _COLUMNS))
    lines.append(f"{'worst venue':<16}{'':>6}"
                 + "".join(cell(worst.get(column, {}).get("value")) for column, _ in _COLUMNS))
    lines.append("(page top-1 by strategy; by kind: the brain's top-1 (indep: raw beside it); "
                 "key: key facts said; F1: reply vs reference; unspk: replies a listener "
                 "could not take in; offtop: off-topic questions answered)")
    return "\n".join(lines)
