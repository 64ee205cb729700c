"""Every dialogue set at once: `kiosk eval --all`.

A set is a folder of `../shared/bench/` (its `site/`, `dialogues.jsonl` and, when there is
one, `offtopic.jsonl`), plus the demo in each language. Each is evaluated as `kiosk eval` does
(kiosk.eval.evaluate) with its own site's index; the results are one table of page top-1 by
set x strategy and, for the brain, by kind, with key facts said, reply F1, unspeakable replies
and off-topic answers, and a last row of the worst real site for each column.
"""

from __future__ import annotations

import dataclasses
import json
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


# Key facts this project wrote for sets that came without them (kiosk/bench/keys/SOURCE.md).
KEYS_DIR = Path(__file__).resolve().parent / "bench" / "keys"
# Chit-chat asked of every real site in its language (kiosk/bench/offtopic/SOURCE.md).
CHAT_DIR = Path(__file__).resolve().parent / "bench" / "offtopic"


def chat_dialogues(lang: str) -> list[Dialogue]:
    """The project's chit-chat questions in this language (none: an empty list)."""
    path = CHAT_DIR / f"{lang}.jsonl"
    return load_dialogues(path) if path.is_file() else []


@dataclass(frozen=True)
class DialogueSet:
    name: str
    site: Path
    dialogues: tuple[Path, ...]
    keys: Path | None = None

    @property
    def venue(self) -> bool:
        return not self.name.startswith(NOT_A_VENUE)

    def load(self) -> list[Dialogue]:
        dialogues = [d for path in self.dialogues for d in load_dialogues(path)]
        return add_keys(dialogues, self.keys) if self.keys is not None else dialogues


def add_keys(dialogues: list[Dialogue], path: Path) -> list[Dialogue]:
    """The key facts of `path` (lines of id, turn, user, key) on the turns that have none;
    a line whose turn is missing or says other words is an error, never a key on the wrong
    turn."""
    keys: dict[tuple[str, int], tuple[str, tuple[tuple[str, ...], ...]]] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            key = tuple(tuple(str(alt) for alt in group) for group in raw["key"])
            keys[(str(raw["id"]), int(raw["turn"]))] = (str(raw["user"]), key)
        except (KeyError, TypeError, ValueError) as exc:
            raise KioskError("eval", f"{path}:{lineno}: not a key line ({exc!r})",
                             "each line: {\"id\", \"turn\", \"user\", \"key\"}") from exc
    out = []
    for dialogue in dialogues:
        turns = list(dialogue.turns)
        for pos, turn in enumerate(turns):
            found = keys.pop((dialogue.dialogue_id, pos), None)
            if found is None:
                continue
            if found[0] != turn.user or turn.expect is None:
                raise KioskError("eval", f"{path}: the key of {dialogue.dialogue_id} turn {pos} "
                                 f"is for {found[0]!r}, the turn says {turn.user!r}"
                                 + ("" if turn.expect else " and expects no page"),
                                 "write the key for the turn's own words")
            if turn.key is None:
                turns[pos] = dataclasses.replace(turn, key=found[1])
        out.append(dataclasses.replace(dialogue, turns=tuple(turns)))
    if keys:
        missing = ", ".join(f"{i} turn {t}" for i, t in sorted(keys))
        raise KioskError("eval", f"{path}: no such turn for {missing}",
                         "key lines name a dialogue id and a 0-based turn of the set")
    return out


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
        keys = KEYS_DIR / f"{folder.name}.jsonl"
        sets.append(DialogueSet(folder.name, folder / "site", (main, *extra),
                                keys if keys.is_file() else None))
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


# How the gate is fitted (scripts/fit_gate.py, `kiosk eval --all --cv site`): the L2 weights
# of its logistic regression (on standardized features) and the thresholds of its committee's
# members, which decide by majority (`choose_gate`).
GATE_L2 = (0.3, 1.0, 3.0, 10.0)
GATE_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def _brain_for(cfg: Config, site: Path, gate: Any = "default", features: bool = False) -> Any:
    """The brain of a set's site; `gate`: a ContextGate, None (no gate), or the shipped one."""
    from kiosk.wiring import load_brain

    paths = dataclasses.replace(cfg.paths, site=str(site), index="")
    brain = load_brain(dataclasses.replace(cfg, paths=paths))
    if gate != "default" or features:
        kept = brain.params.gate if gate == "default" else gate
        brain.params = dataclasses.replace(brain.params, gate=kept, gate_features=features)
    return brain


def evaluate_all(cfg: Config, sets: list[DialogueSet],
                 progress: Callable[[str], None] | None = None,
                 gates: dict[str, Any] | None = None, features: bool = False) -> dict[str, Any]:
    """Each set's `kiosk eval` report (per-turn records included), by name. `gates`: the
    context gate each set runs with (another than the shipped one: a left-out site's);
    `features`: the gate's features measured on every follow-up (for fitting it)."""
    reports: dict[str, Any] = {}
    for dialogue_set in sets:
        gate = (gates or {}).get(dialogue_set.name, "default")
        brain = _brain_for(cfg, dialogue_set.site, gate, features)
        dialogues = dialogue_set.load()
        report = evaluate(brain, dialogues)
        report["venue"] = dialogue_set.venue
        chat = chat_dialogues(dialogues[0].lang) if dialogue_set.venue and dialogues else []
        if chat:
            asked = evaluate(brain, chat)
            report["chat"] = {
                "answered": asked["strategies"]["resolved"]["offtopic_false_answers"],
                "turns": asked["turns"]}
        reports[dialogue_set.name] = report
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
    row["chat_answered"] = report["chat"]["answered"] if "chat" in report else None
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
        higher_is_worse = column in ("unspeakable", "offtopic_false_answers", "false_refusals",
                                     "chat_answered")
        value, name = max(values) if higher_is_worse else min(values)
        worst[column] = {"value": value, "set": name}
    return {"rows": rows, "worst": worst}


_COLUMNS = (("raw", "raw"), ("seed", "seed"), ("resolved", "RESOLVED"),
            ("oracle_ref", "or_ref"), ("oracle", "oracle"),
            ("independent", "indep"), ("independent_raw", "(raw)"),
            ("immediate", "immed"), ("distant", "distant"), ("key_hit", "key"),
            ("reply_f1", "F1"), ("unspeakable", "unspk"), ("offtopic_false_answers", "offtop"),
            ("chat_answered", "chat"))


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
                 "could not take in; offtop: off-topic questions answered; chat: the project's "
                 "chit-chat questions answered, kiosk/bench/offtopic)")
    return "\n".join(lines)


# ------------------------------------------------------------------ the context gate, fitted


def gate_rows(report: dict[str, Any]) -> tuple[list[dict[str, float]], list[int]]:
    """A set's follow-ups that teach the gate: those whose page the bare search (`raw`) and
    the brain disagree on; label 1 where the words alone found it, 0 where the context did."""
    rows: list[dict[str, float]] = []
    labels: list[int] = []
    for record in report["turns"]:
        got = record.get("resolved") or {}
        gate = got.get("gate")
        if gate is None or record["expect"] is None:
            continue
        alone, context = record["raw"]["rr"] == 1.0, got["rr"] == 1.0
        if alone != context:
            rows.append(gate["features"])
            labels.append(int(alone))
    return rows, labels


def _rows(reports: dict[str, Any], names: list[str]) -> tuple[list[dict[str, float]], list[int]]:
    rows: list[dict[str, float]] = []
    labels: list[int] = []
    for name in names:
        r, lab = gate_rows(reports[name])
        rows += r
        labels += lab
    return rows, labels


def gate_net(gate: Any, report: dict[str, Any]) -> tuple[int, int]:
    """Of a set's teaching follow-ups, (won, lost) by the gate: pages the words alone found
    that the context missed, and the other way round (history left as it was measured)."""
    rows, labels = gate_rows(report)
    said = [gate.alone(row) for row in rows]
    return (sum(a and y == 1 for a, y in zip(said, labels, strict=True)),
            sum(a and y == 0 for a, y in zip(said, labels, strict=True)))


def choose_gate(reports: dict[str, Any], names: list[str]) -> Any:
    """The gate of these sets' follow-ups: a committee of every L2 weight and threshold of
    the grid, by majority (`GateCommittee`). Choosing one pair by leaving each site out in
    turn moved with every change to any site's follow-ups: at the sixty-fourth stop, four
    states of the sets gave the left-out sites +5/+4/0/+1, +4/+4/0/+1, +5/+4/-1/+1 and
    +4/0/-1/0 turns won on balance (logingov-en, methods18f-en, misskey-ja, vagov-en); the
    majority gave +2/+4/0/+1 in all four, no turn lost."""
    from kiosk.dialogue.gate import fit_committee

    return fit_committee(*_rows(reports, names), GATE_L2, GATE_THRESHOLDS)


def cross_validate(cfg: Config, sets: list[DialogueSet],
                   progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Leave one venue site out: the gate is fitted on the other venue sites' follow-ups
    (measured once, without a gate) and the left-out site is evaluated with it. Sets that are
    no venue (CAsT, the demo) are evaluated with the gate fitted on every venue site."""
    venues = [s for s in sets if s.venue]
    measured = evaluate_all(cfg, venues, progress, gates={s.name: None for s in venues},
                            features=True)["sets"]
    gates = {s.name: choose_gate(measured, [v.name for v in venues if v.name != s.name])
             for s in venues}
    everywhere = choose_gate(measured, [v.name for v in venues])
    gates.update({s.name: everywhere for s in sets if not s.venue})
    result = evaluate_all(cfg, sets, progress, gates=gates)
    result["cv"] = {
        "left_out": [s.name for s in venues],
        "teaching_follow_ups": {s.name: len(gate_rows(measured[s.name])[0]) for s in venues},
        "members": {s.name: len(gates[s.name].members) for s in venues},
        # measured without a gate, against the left-out site's own gate (history as it was)
        "won_lost": {s.name: gate_net(gates[s.name], measured[s.name]) for s in venues},
        "without_gate": summary(measured)["rows"]}
    return result
