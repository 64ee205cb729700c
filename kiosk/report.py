"""`kiosk report`: what visitors asked and what the site could not answer, per day, for the
people who write the site.

Counts come from the word-free turn counts every kiosk keeps (kind, act, answering page, and
whether the question was cut off and asked again). The
refused questions themselves exist only when the venue enabled logging.store_transcripts;
they are grouped by meaning (the brain's sentence encoder) so the venue sees the topics to
add, most asked first.
"""

from __future__ import annotations

import collections
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kiosk.errors import KioskError
from kiosk.metrics import turn_outcome

# e5 puts every short question close to every other (unrelated ones score 0.75-0.85), so
# vectors are compared after taking away the centre of generic questions: paraphrases ("is there
# parking" / "where can I park my car" / 駐車場はありますか) then score 0.55-0.73, unrelated
# questions below 0.47 (average linkage over a group).
GROUP_SIMILARITY = 0.5
# per language: each language's questions sit around their own centre
GENERIC_QUESTIONS = {
    "en": ("what is this", "how do I get there", "when", "can you help me", "where is it",
           "how much is it", "who are you", "what time is it", "is it open", "thank you",
           "tell me more", "is there one"),
    "ja": ("これは何ですか", "どうやって行くの", "いつ", "手伝ってくれる", "どこですか",
           "いくらですか", "あなたは誰", "今何時", "開いてる", "ありがとう", "もっと教えて",
           "ありますか"),
}
MAX_GROUPED = 500  # the most recent refused questions grouped (the rest are counted)

Embed = Callable[[list[str]], npt.NDArray[np.float32]]

log = logging.getLogger(__name__)

# what a terminal (or the serial console's) would act on instead of showing: C0 and C1 controls
# (ESC starts a command, CR forges a line), DEL, and the marks that reorder the text around them
_TERMINAL_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown(text: str) -> str:
    """Text as a terminal may print it: every control character written as an escape."""
    return _TERMINAL_UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                                text)


# JSON escapes C0 controls in strings itself (a raw newline is its own layout)
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def as_json(report: dict[str, Any]) -> str:
    """The report as JSON that is safe to print: the controls JSON leaves raw are written as
    \\u escapes (the same JSON)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}",
                            json.dumps(report, indent=1, ensure_ascii=False))


def parse_since(text: str) -> float:
    """`7d`, `24h`, `2w` -> seconds."""
    found = re.fullmatch(r"\s*(\d+)\s*([hdw])\s*", text)
    if not found:
        raise KioskError("usage", f"--since {text!r} is not a period", "write it like 7d, 24h "
                         "or 2w")
    return int(found.group(1)) * {"h": 3600, "d": 86_400, "w": 604_800}[found.group(2)]


# the latest time time.gmtime can name a day of (9999-12-31)
_LAST_TIME_S = 253_402_300_799


def record_time(record: dict[str, Any]) -> float | None:
    """A record's time in seconds, or None when it is not a time a day can be made of (a
    string, a list, Infinity, a number past the year 9999)."""
    value = record.get("time")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not (0 <= value <= _LAST_TIME_S):  # False for NaN as well
        return None
    return float(value)


def _read(folder: Path, kind: str, since_s: float) -> list[dict[str, Any]]:
    first_day = time.strftime("%Y-%m-%d", time.gmtime(since_s))
    records = []
    for path in sorted(folder.glob(f"{kind}-*.jsonl")):
        if path.stem.removeprefix(f"{kind}-") < first_day:
            continue
        bad = 0
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut by a power loss
            if not isinstance(record, dict):
                bad += 1
                continue
            when = record_time(record)
            if when is None:
                bad += 1
            elif when >= since_s:
                records.append({**record, "time": when})
        if bad:
            log.warning("report: %d record(s) of %s have no usable time; left out", bad,
                        path.name)
    return records


@dataclass
class Day:
    day: str
    turns: int = 0
    answered: int = 0
    refused: int = 0
    social: int = 0
    unclear: int = 0  # cut off mid-phrase: asked to say it again
    pages: collections.Counter[str] = field(default_factory=collections.Counter)
    kinds: collections.Counter[str] = field(default_factory=collections.Counter)

    def add(self, record: dict[str, Any]) -> None:
        outcome = turn_outcome(record)
        self.turns += 1
        setattr(self, outcome, getattr(self, outcome) + 1)
        if record.get("page"):
            self.pages[str(record["page"])] += 1
        self.kinds[str(record.get("kind") or "none")] += 1

    @property
    def answered_share(self) -> float | None:
        asked = self.answered + self.refused
        return round(self.answered / asked, 3) if asked else None


def group_similar(texts: list[str], embed: Embed,
                  threshold: float = GROUP_SIMILARITY) -> list[list[str]]:
    """Questions grouped by meaning (average linkage), largest group first; repeats of the
    same words count in their group."""
    if not texts:
        return []
    unique = list(dict.fromkeys(t.strip() for t in texts if t.strip()))
    counts = collections.Counter(t.strip() for t in texts)
    from kiosk.text import detect_lang

    vectors = embed(unique)
    centres = {lang: embed(list(qs)).mean(axis=0) for lang, qs in GENERIC_QUESTIONS.items()}
    langs = [detect_lang(t) for t in unique]
    vectors = vectors - np.stack([centres.get(lang, centres["en"]) for lang in langs])
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-6)
    similarity = vectors @ vectors.T
    groups: list[list[int]] = [[i] for i in range(len(unique))]
    while True:
        best, pair = threshold, None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                link = float(similarity[np.ix_(groups[a], groups[b])].mean())
                if link >= best:
                    best, pair = link, (a, b)
        if pair is None:
            break
        a, b = pair
        groups[a] += groups.pop(b)
    out = [[unique[i] for i in sorted(g, key=lambda i: -counts[unique[i]])] for g in groups]
    return sorted(out, key=lambda g: -sum(counts[t] for t in g))


def build_report(folder: Path, since_s: float, now_s: float,
                 embed: Embed | None = None) -> dict[str, Any]:
    days: dict[str, Day] = {}
    total = Day("all")
    for record in _read(folder, "stats", since_s):
        day = time.strftime("%Y-%m-%d", time.gmtime(record["time"]))
        days.setdefault(day, Day(day)).add(record)
        total.add(record)
    report: dict[str, Any] = {
        "since": time.strftime("%Y-%m-%d %H:%M", time.gmtime(since_s)),
        "until": time.strftime("%Y-%m-%d %H:%M", time.gmtime(now_s)),
        "days": [_day_dict(days[d]) for d in sorted(days)],
        "total": _day_dict(total),
        "top_pages": total.pages.most_common(10),
        "kinds": dict(total.kinds.most_common()),
        "refused_questions": None,
    }
    transcripts = _read(folder, "turns", since_s)
    if transcripts:
        refused = [str(r.get("utterance") or "") for r in transcripts
                   if turn_outcome(r) == "refused"]
        refused = [t for t in refused if t.strip()][-MAX_GROUPED:]
        groups = group_similar(refused, embed) if embed is not None else [[t] for t in refused]
        report["refused_questions"] = [{"asked": sum(refused.count(t) for t in g),
                                        "questions": g} for g in groups]
    return report


def _day_dict(day: Day) -> dict[str, Any]:
    return {"day": day.day, "turns": day.turns, "answered": day.answered,
            "refused": day.refused, "social": day.social, "unclear": day.unclear,
            "answered_share": day.answered_share}


def format_report(report: dict[str, Any]) -> str:
    lines = [f"kiosk report {report['since']} .. {report['until']} (UTC)", "",
             "day          turns  answered  refused  social  unclear  answered share"]
    for d in [*report["days"], report["total"]]:
        share = "-" if d["answered_share"] is None else f"{d['answered_share']:.0%}"
        lines.append(f"{d['day']:<12}{d['turns']:>6}{d['answered']:>10}{d['refused']:>9}"
                     f"{d['social']:>8}{d['unclear']:>9}  {share:>13}")
    lines += ["", "pages most asked about:"]
    lines += [f"  {n:>5}  {shown(page)}" for page, n in report["top_pages"]] or ["  (none)"]
    lines += ["", "kinds of reference: " + (", ".join(
        f"{shown(k)} {n}" for k, n in report["kinds"].items()) or "(none)")]
    groups = report["refused_questions"]
    lines.append("")
    if groups is None:
        lines.append("questions the site could not answer: counts only (the words are kept "
                     "only with logging.store_transcripts = true)")
    else:
        lines.append("questions the site could not answer, grouped (add these to the site):")
        for g in groups[:30]:
            more = f" (+{len(g['questions']) - 3} more)" if len(g["questions"]) > 3 else ""
            lines.append(f"  {g['asked']:>5}  " + " | ".join(shown(q) for q in g["questions"][:3])
                         + more)
        if not groups:
            lines.append("  (none)")
    return "\n".join(lines) + "\n"


def report_for(folder: Path, since: str, embed_loader: Callable[[], Embed] | None,
               now_s: float | None = None) -> dict[str, Any]:
    """The report over the last `since` (e.g. 7d); the encoder is loaded only when there are
    transcripts to group."""
    now = time.time() if now_s is None else now_s
    since_s = now - parse_since(since)
    embed = None
    if embed_loader is not None and any(folder.glob("turns-*.jsonl")):
        embed = embed_loader()
    return build_report(folder, since_s, now, embed)

