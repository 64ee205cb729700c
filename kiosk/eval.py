"""Evaluation of query strategies on dialogues (format: ../shared/bench/README.md).

Strategies: `raw` (the utterance alone), `page_lexical` (the utterance over whole-page BM25, a
plain lexical baseline), `prev_user`, `prev_exchange`, `window3` (fixed context windows), `seed`
(the article's rules as written, kiosk/dialogue/seed.py), `resolved` (the brain), and where the
data allows `oracle_ref` (the utterance plus the exchange its `ref` names: the upper bound of
context selection for this ranker) and `oracle` (the human rewrite).

Every strategy keeps its own history: each turn's `reply` when the data gives one, else the
reply the system itself produced with that strategy. Metrics: top-1 and MRR (over the first
`top_pages` pages), over all turns, over the turns that expect a page (`page_*`) and per kind.
A turn that expects no page is right when nothing is searched and, for acts, when the act
matches.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kiosk.answer import compose
from kiosk.brain import Brain, TurnResult
from kiosk.dialogue.history import Exchange, History
from kiosk.dialogue.lexicon import load_lexicon
from kiosk.dialogue.query import QuerySegment, SearchQuery
from kiosk.dialogue.resolver import INDEPENDENT, PAGE, Resolution, is_repair
from kiosk.dialogue.seed import seed_decide
from kiosk.errors import KioskError
from kiosk.retrieval.index import PageHit, Scores
from kiosk.text import detect_lang

BASELINES = ("raw", "page_lexical", "prev_user", "prev_exchange", "window3")


@dataclass(frozen=True)
class Turn:
    user: str
    screen: str | None
    expect: tuple[str, ...] | None
    kind: str
    act: str | None
    reply: str | None
    oracle: str | None
    ref: int | None = None  # the earlier turn whose exchange this one refers to
    # the fact a reply must say: groups, each of alternatives (../shared/bench/README.md)
    key: tuple[tuple[str, ...], ...] | None = None


@dataclass(frozen=True)
class Dialogue:
    dialogue_id: str
    lang: str
    turns: tuple[Turn, ...]


def load_dialogues(path: Path) -> list[Dialogue]:
    dialogues: list[Dialogue] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise KioskError("eval", f"dialogue file {path} not found",
                         "pass --dialogues FILE") from exc
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            turns = []
            for pos, t in enumerate(raw["turns"]):
                expect = t.get("expect")
                if isinstance(expect, str):
                    expect = (expect,)
                elif isinstance(expect, list):
                    expect = tuple(expect)
                kind = t.get("kind") or ("first_turn" if pos == 0 else "later_turn")
                ref = t.get("ref")
                if ref is not None and not (isinstance(ref, int) and -1 <= ref < pos):
                    raise ValueError(f"turn {pos}: ref {ref!r} is not an earlier turn")
                key = t.get("key")
                if key is not None:
                    key = tuple(tuple(str(alt) for alt in group) for group in key)
                turns.append(Turn(t["user"], t.get("screen"), expect, kind, t.get("act"),
                                  t.get("reply"), t.get("oracle"),
                                  ref if ref is not None and ref >= 0 else None, key))
            lang = raw.get("lang") or detect_lang(turns[0].user)
            dialogues.append(Dialogue(str(raw.get("id", lineno)), lang, tuple(turns)))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise KioskError("eval", f"{path}:{lineno}: not a dialogue ({exc!r})",
                             "see ../shared/bench/README.md for the format") from exc
    return dialogues


def _baseline_query(name: str, utterance: str, history: History) -> SearchQuery:
    segs = [QuerySegment(utterance, 1.0, "utterance")]
    if name == "prev_user" and history:
        segs.append(QuerySegment(history[-1].user, 1.0, "user"))
    elif name == "prev_exchange" and history:
        segs += [QuerySegment(history[-1].user, 1.0, "user"),
                 QuerySegment(history[-1].reply, 1.0, "reply")]
    elif name == "window3":
        for ex in history[-3:]:
            segs += [QuerySegment(ex.user, 1.0, "user"), QuerySegment(ex.reply, 1.0, "reply")]
    return SearchQuery(tuple(segs))


@dataclass
class _Score:
    top1: float = 0.0
    rr: float = 0.0
    turns: int = 0
    page: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # turns expecting a page
    by_kind: dict[str, list[float]] = field(default_factory=dict)

    def add(self, kind: str, top1: float, rr: float, page_turn: bool) -> None:
        self.top1 += top1
        self.rr += rr
        self.turns += 1
        if page_turn:
            self.page[0] += top1
            self.page[1] += rr
            self.page[2] += 1
        self.by_kind.setdefault(kind, [0.0, 0.0, 0.0])
        self.by_kind[kind][0] += top1
        self.by_kind[kind][1] += rr
        self.by_kind[kind][2] += 1

    def as_dict(self) -> dict[str, Any]:
        n = max(self.turns, 1)
        pages = max(self.page[2], 1)
        return {
            "top1": round(self.top1 / n, 4),
            "mrr": round(self.rr / n, 4),
            "turns": self.turns,
            "page_top1": round(self.page[0] / pages, 4),
            "page_mrr": round(self.page[1] / pages, 4),
            "page_turns": int(self.page[2]),
            "by_kind": {k: {"top1": round(v[0] / v[2], 4), "mrr": round(v[1] / v[2], 4),
                            "turns": int(v[2])} for k, v in sorted(self.by_kind.items())},
        }


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def reply_units(lang: str, text: str) -> Counter[str]:
    """What a reply is scored on: words (English), character 2-grams (Japanese, whose words
    are not spaced), both over NFKC-folded lower-case text."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    if lang == "ja":
        chars = "".join(ch for ch in text if ch.isalnum())
        return Counter(chars[i:i + 2] for i in range(len(chars) - 1))
    return Counter(_WORD.findall(text))


def reply_overlap(lang: str, got: str, ref: str) -> tuple[float, float]:
    """Precision and recall of a spoken reply against a reference reply, on `reply_units`.
    Precision low beside recall: the reply says more than the answer."""
    a, b = reply_units(lang, got), reply_units(lang, ref)
    common = sum((a & b).values())
    if common == 0:
        return 0.0, 0.0
    return common / sum(a.values()), common / sum(b.values())


def _key_text(lang: str, text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(text.split()) if lang == "ja" else text


def key_hit(lang: str, reply: str, key: tuple[tuple[str, ...], ...]) -> bool:
    """Whether the reply says the key fact: every group has one alternative in it, after NFKC
    and lower case (Japanese: all whitespace removed), as ../shared/bench/README.md defines."""
    said = _key_text(lang, reply)
    return all(any(_key_text(lang, alt) in said for alt in group) for group in key)


# What a listener cannot take in by ear, judged on the reply as said (apart from the answer
# module's own gate, which it checks): code and markup characters, a URL or a path, a file
# name, a run of symbols (a regular expression, "10×10" said as digits), and a pointer at
# something the listener cannot see ("as follows", 次の図) that ends the reply.
_UNSPEAKABLE = {
    "code": re.compile(r"[{}<>|`\\]|[=]{1,2}\s*\S|\$[A-Za-z_(]|;\s*$|\w\(\)"),
    "url": re.compile(r"\w+://|www\.|(?<![\w@])/[\w.-]+/"),
    "file": re.compile(r"\b[\w-]+\.(?:md|mdx|html?|js|ts|tsx|py|json|ya?ml|toml|png|jpe?g|"
                       r"svg|gif|pdf|css|sh|txt|csv|zip|exe|conf|ini)\b", re.I),
    "symbols": re.compile(r"[^\w\s、。，．,.!?！？「」『』（）()\"'“”’‘:：;；・ー〜~%％&＆/+\-–—─━]"
                          r"{2,}|\d\s*[×*]\s*\d|[\[\]^*]{2,}"),
    "dangling": re.compile(r"(?:as follows|the following|below|次の(?:図|表|とおり|通り|ように)|"
                           r"以下(?:の|のとおり|の通り)?)\s*[:：.。]?\s*$", re.I),
}


def unspeakable(text: str) -> list[str]:
    """What in a spoken reply a listener could not take in (`_UNSPEAKABLE`'s kinds), if any."""
    return [kind for kind, found in _UNSPEAKABLE.items() if found.search(text)]


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision and recall else 0.0


def reply_f1(lang: str, got: str, ref: str) -> float:
    """The harmonic mean of `reply_overlap`'s precision and recall."""
    return _f1(*reply_overlap(lang, got, ref))


@dataclass
class _Replies:
    """How the resolved strategy's spoken replies fare (page turns and off-topic turns)."""

    f1: list[float] = field(default_factory=list)
    f1_page_right: list[float] = field(default_factory=list)
    precision: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    page_turns: int = 0
    refused: int = 0  # page turns answered without a page
    offtopic: int = 0
    offtopic_answered: int = 0  # off-topic turns answered from a page, or offered pages
    # page turns whose reference reply is itself a repair ("Sorry, I didn't catch that"):
    # how many of them the avatar also met with a repair rather than an answer
    ref_repairs: int = 0
    repaired_too: int = 0
    # page turns with a key: said it, per kind too ([hits, turns])
    keys: dict[str, list[int]] = field(default_factory=dict)
    unspeakable: list[tuple[str, list[str]]] = field(default_factory=list)  # (reply, kinds)
    replies: int = 0

    def add(self, turn: Turn, result: TurnResult, top1: float, lex_repair: bool) -> None:
        answered = result.reply.page_id is not None
        if answered:
            self.replies += 1
            found = unspeakable(result.reply.text)
            if found:
                self.unspeakable.append((result.reply.text, found))
        if turn.key is not None and turn.expect is not None:
            for kind in ("all", turn.kind):
                tally = self.keys.setdefault(kind, [0, 0])
                tally[0] += key_hit(result.lang, result.reply.text, turn.key)
                tally[1] += 1
        if turn.expect is None:
            if turn.act is None:
                # Offering pages ("do you mean A or B?") is no honest "that isn't here" either.
                self.offtopic += 1
                self.offtopic_answered += answered or bool(result.ranking)
            return
        if lex_repair:
            self.ref_repairs += 1
            self.repaired_too += result.reply.repair
            return
        self.page_turns += 1
        self.refused += not answered
        if turn.reply is not None:
            precision, recall = reply_overlap(result.lang, result.reply.text, turn.reply)
            f1 = _f1(precision, recall)
            self.f1.append(f1)
            self.precision.append(precision)
            self.recall.append(recall)
            if top1:
                self.f1_page_right.append(f1)

    def as_dict(self) -> dict[str, Any]:
        def mean(xs: list[float]) -> float | None:
            return round(sum(xs) / len(xs), 4) if xs else None

        return {
            "reply_f1": mean(self.f1), "reply_f1_turns": len(self.f1),
            "reply_f1_page_right": mean(self.f1_page_right),
            "reply_precision": mean(self.precision), "reply_recall": mean(self.recall),
            "false_refusals": round(self.refused / self.page_turns, 4) if self.page_turns
            else None,
            "reference_repairs": self.ref_repairs,
            "reference_repairs_met_with_repair": round(self.repaired_too / self.ref_repairs, 4)
            if self.ref_repairs else None,
            "offtopic_turns": self.offtopic,
            "offtopic_false_answers": round(self.offtopic_answered / self.offtopic, 4)
            if self.offtopic else None,
            "key_hit": round(self.keys["all"][0] / self.keys["all"][1], 4)
            if "all" in self.keys else None,
            "key_turns": self.keys["all"][1] if "all" in self.keys else 0,
            "key_hit_by_kind": {k: round(h / n, 4) for k, (h, n) in sorted(self.keys.items())
                                if k != "all"},
            "unspeakable": len(self.unspeakable), "answered_replies": self.replies,
            "unspeakable_replies": [{"reply": text, "kinds": kinds}
                                    for text, kinds in self.unspeakable],
        }


def score_turn(turn: Turn, ranking: list[str], act: str | None) -> tuple[float, float]:
    if turn.expect is None:
        ok = not ranking and (turn.act is None or turn.act == act)
        return (1.0, 1.0) if ok else (0.0, 0.0)
    for rank, page in enumerate(ranking, 1):
        if page in turn.expect:
            return (1.0 if rank == 1 else 0.0), 1.0 / rank
    return 0.0, 0.0


def _strategy_query(name: str, turn: Turn, history: History,
                    lang: str) -> tuple[SearchQuery | None, str | None, str | None]:
    """(query, act, page shown instead of a search) of a strategy that is not the resolver."""
    if name == "oracle":
        return SearchQuery.of(turn.oracle or turn.user), None, None
    if name == "oracle_ref":
        segs = [QuerySegment(turn.user, 1.0, "utterance")]
        if turn.ref is not None and turn.ref < len(history):
            ex = history[turn.ref]
            segs += [QuerySegment(ex.user, 1.0, "user"), QuerySegment(ex.reply, 1.0, "reply")]
        return SearchQuery(tuple(segs)), None, None
    if name == "seed":
        decision = seed_decide(turn.user, history, load_lexicon(lang))
        return decision.query, decision.act, turn.screen if decision.kind == PAGE else None
    return _baseline_query(name, turn.user, history), None, None


def _strategy_turn(brain: Brain, name: str, turn: Turn, history: History,
                   lang: str) -> tuple[list[str], str | None, Exchange]:
    query, act, shown = _strategy_query(name, turn, history, lang)
    lex = load_lexicon(lang)
    if shown is not None or query is None:
        hits = [PageHit(shown, 1.0, 0)] if shown is not None and brain.index.page(shown) else []
    elif name == "page_lexical":
        hits = brain.index.rank(Scores(brain.index.page_lexical_scores(query),
                                       np.zeros(len(brain.index.chunks), dtype=np.float32)),
                                brain.params.top_pages)
    else:
        hits = brain.search(query, lang)
    if turn.reply is not None:
        reply_text, repair, page = turn.reply, is_repair(turn.reply, lex), None
    elif act is not None:
        reply_text, repair, page = lex.replies[act], False, None
    else:
        res = Resolution(lang, None, INDEPENDENT, False, query or SearchQuery.of(turn.user))
        reply = compose(res, hits, brain.index, history, turn.screen, lex, brain.params.answer,
                        brain.embedder)
        reply_text, repair, page = reply.text, reply.repair, reply.page_id
    ranking = [h.page_id for h in hits]
    ex = Exchange(turn.user, reply_text, lang, act, page or (ranking[0] if ranking else None),
                  repair=repair)
    return ranking, act, ex


def strategy_names(dialogues: list[Dialogue]) -> list[str]:
    names = [*BASELINES, "seed", "resolved"]
    if any(t.ref is not None for d in dialogues for t in d.turns):
        names.append("oracle_ref")
    if any(t.oracle for d in dialogues for t in d.turns):
        names.append("oracle")
    return names


def evaluate(brain: Brain, dialogues: list[Dialogue],
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    names = strategy_names(dialogues)
    scores = {name: _Score() for name in names}
    replies = _Replies()
    records: list[dict[str, Any]] = []
    for dialogue in dialogues:
        histories: dict[str, History] = {name: () for name in names}
        for pos, turn in enumerate(dialogue.turns):
            record: dict[str, Any] = {"dialogue": dialogue.dialogue_id, "turn": pos,
                                      "user": turn.user, "kind": turn.kind,
                                      "screen": turn.screen,
                                      "expect": list(turn.expect) if turn.expect else None}
            for name in names:
                history = histories[name]
                act: str | None = None
                result: TurnResult | None = None
                if name == "resolved":
                    result = brain.respond(history, turn.user, turn.screen, dialogue.lang)
                    ranking, act = result.ranking, result.resolution.act
                    ex = result.exchange(turn.reply)
                else:
                    ranking, act, ex = _strategy_turn(brain, name, turn, history, dialogue.lang)
                top1, rr = score_turn(turn, ranking, act)
                scores[name].add(turn.kind, top1, rr, turn.expect is not None)
                if result is not None:
                    replies.add(turn, result, top1, turn.reply is not None
                                and is_repair(turn.reply, load_lexicon(dialogue.lang)))
                histories[name] = (*history, ex)
                record[name] = {"top": ranking[0] if ranking else None, "rr": round(rr, 4)}
                if result is not None:
                    record[name].update({
                        "act": result.resolution.act, "resolved_kind": result.resolution.kind,
                        "detail": result.resolution.detail,
                        "query": result.resolution.query.text if result.resolution.query else None,
                        "reply": result.reply.text,
                        "gate": None if result.gate is None else {
                            "features": {k: round(v, 4)
                                         for k, v in result.gate.features.items()},
                            "p_alone": result.gate.p_alone, "alone": result.gate.alone,
                            "shares": result.gate.shares},
                        "scope": None if result.scope is None else {
                            k: round(v, 4) if isinstance(v, float) else v
                            for k, v in asdict(result.scope).items()},
                    })
            records.append(record)
        if progress is not None:
            progress(dialogue.dialogue_id)
    report: dict[str, Any] = {"strategies": {n: s.as_dict() for n, s in scores.items()},
                              "turns": records}
    report["strategies"]["resolved"].update(replies.as_dict())
    return report


def format_table(report: dict[str, Any]) -> str:
    strategies = report["strategies"]
    kinds = sorted({k for s in strategies.values() for k in s["by_kind"]})
    lines = [f"{'strategy':<14}{'top1':>7}{'mrr':>7}{'pages':>7}{'turns':>7}  " +
             "  ".join(f"{k[:12]:>12}" for k in kinds)]
    for name, s in strategies.items():
        cells = "  ".join(
            f"{s['by_kind'][k]['top1']:>12.3f}" if k in s["by_kind"] else f"{'-':>12}"
            for k in kinds)
        lines.append(f"{name:<14}{s['top1']:>7.3f}{s['mrr']:>7.3f}{s['page_top1']:>7.3f}"
                     f"{s['turns']:>7}  {cells}")
    lines.append("(pages: top-1 over the turns that expect a page; per-kind columns: top-1)")
    r = strategies["resolved"]
    lines.append(f"resolved replies: F1 vs reference {r['reply_f1']} over {r['reply_f1_turns']} "
                 f"turns ({r['reply_f1_page_right']} where the page was right; precision "
                 f"{r['reply_precision']}, recall {r['reply_recall']}); false refusals "
                 f"{r['false_refusals']}; off-topic answered from a page "
                 f"{r['offtopic_false_answers']} of {r['offtopic_turns']}; turns the reference "
                 f"meets with an apology: {r['reference_repairs']}, the avatar too "
                 f"{r['reference_repairs_met_with_repair']}")
    return "\n".join(lines)


def _scope_line(scope: dict[str, Any]) -> str:
    """What the check of whether the site covers a question saw (kiosk.brain.ScopeCheck)."""
    if scope["refused"]:
        return "declined: a request never answered"
    seen = ", ".join(f"{name} {scope[name]}" for name in ("best_page", "peak", "dense",
                                                          "lexical", "tokens")
                     if scope.get(name) is not None)
    return f"{'declined' if scope['declined'] else 'answered'} ({seen})"


def format_misses(report: dict[str, Any], strategy: str = "resolved") -> str:
    """One block per turn the strategy got wrong: what was said, what was expected and got."""
    out: list[str] = []
    for rec in report["turns"]:
        got = rec.get(strategy)
        if got is None or got["rr"] == 1.0:
            continue
        out.append(f"{rec['dialogue']}#{rec['turn']} [{rec['kind']}"
                   f"{' -> ' + got['resolved_kind'] if 'resolved_kind' in got else ''}] "
                   f"{rec['user']}\n  screen {rec['screen']}  expected {rec['expect']}  "
                   f"got {got['top']} (rr {got['rr']})")
        if got.get("query"):
            out.append(f"  query: {got['query'][:300]}")
        if got.get("gate") and got["gate"]["p_alone"] is not None:
            gate = got["gate"]
            out.append(f"  gate: p(alone) {gate['p_alone']} -> "
                       f"{'alone' if gate['alone'] else 'context rides'}; "
                       + ", ".join(f"{name} {share:+}" for name, share in gate["shares"]))
        if got.get("scope"):
            out.append(f"  scope: {_scope_line(got['scope'])}")
        if got.get("reply"):
            out.append(f"  reply: {got['reply'][:300]}")
    return "\n".join(out)
