"""The context gate: a follow-up's context rides unless the turn's own words find their page
much better alone. The model is pure (fit, probability, what decided); in the brain it turns a
follow-up into a question alone, on a small site with the hashing embedder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kiosk.brain import Brain, BrainParams
from kiosk.dialogue.gate import (
    FEATURES,
    ContextGate,
    GateCommittee,
    dumps,
    fit,
    fit_committee,
    load_gate,
)
from kiosk.dialogue.history import Exchange
from kiosk.retrieval.index import build_index
from tests.fakes import HashingEmbedder


def _row(**values: float) -> dict[str, float]:
    return {name: values.get(name, 0.0) for name in FEATURES}


def test_the_fitted_gate_says_alone_where_the_words_lean_elsewhere_and_why() -> None:
    rng = np.random.default_rng(3)
    rows, labels = [], []
    for _ in range(200):
        gap = float(rng.uniform(-0.2, 0.4))
        rows.append(_row(meaning_gap=gap, bare_best=float(rng.uniform(0.1, 0.7)),
                         deictic=float(rng.integers(0, 2))))
        labels.append(int(gap + float(rng.normal(0, 0.05)) > 0.15))
    gate = fit(rows, labels, l2=1.0, threshold=0.5)
    near, far = _row(meaning_gap=-0.1, bare_best=0.4), _row(meaning_gap=0.35, bare_best=0.4)
    assert gate.p_alone(near) < 0.1 < 0.9 < gate.p_alone(far)
    assert gate.alone(far) and not gate.alone(near)
    shares = gate.shares(far)
    assert shares[0][0] == "meaning_gap" and shares[0][1] > 0  # what decided comes first
    assert [abs(v) for _, v in shares] == sorted((abs(v) for _, v in shares), reverse=True)


def test_the_weights_file_round_trips_and_the_shipped_one_names_every_feature(
        tmp_path: Path) -> None:
    gate = ContextGate(tuple(0.1 * i for i in range(len(FEATURES))), -0.5,
                       tuple(0.2 for _ in FEATURES), tuple(1.5 for _ in FEATURES), 0.7)
    path = tmp_path / "gate.toml"
    path.write_text(dumps(gate, "fitted for the test\non two lines"), encoding="utf-8")
    assert load_gate(path) == gate
    assert load_gate(tmp_path / "none.toml") is None  # no file: the context always rides
    committee = GateCommittee((gate, replace(gate, threshold=0.9),
                               replace(gate, bias=0.3, threshold=0.6)))
    path.write_text(dumps(committee, "a committee"), encoding="utf-8")
    assert load_gate(path) == committee
    shipped = load_gate()
    assert isinstance(shipped, GateCommittee) and len(shipped.members) >= 3
    assert all(len(m.weights) == len(FEATURES) for m in shipped.members)


def test_a_committee_decides_by_the_majority_of_its_members() -> None:
    """Every L2 weight and threshold of the grid, fitted on the same follow-ups: a turn the
    members split on goes the majority's way; what it says is the members' mean."""
    rng = np.random.default_rng(5)
    rows, labels = [], []
    for _ in range(120):
        gap = float(rng.uniform(-0.2, 0.4))
        rows.append(_row(meaning_gap=gap, bare_best=float(rng.uniform(0.1, 0.7))))
        labels.append(int(gap + float(rng.normal(0, 0.05)) > 0.15))
    committee = fit_committee(rows, labels, (0.3, 3.0), (0.5, 0.7, 0.9))
    assert len(committee.members) == 6
    for x in (_row(meaning_gap=g, bare_best=0.4) for g in np.linspace(-0.2, 0.4, 25)):
        votes = sum(m.alone(x) for m in committee.members)
        assert committee.alone(x) == (votes >= 4)
        assert committee.p_alone(x) == pytest.approx(
            sum(m.p_alone(x) for m in committee.members) / 6)
    assert committee.shares(_row(meaning_gap=0.35, bare_best=0.4))[0][0] == "meaning_gap"


PAGES = {
    "keys.md": "# Security keys\nA security key is a small device you plug into a USB port. "
               "Press its button when you sign in.",
    "lost-key.md": "# Lost security key\nIf you lose your security key, sign in with a backup "
                   "method and remove the lost key from your account.",
    "partners.md": "# Partner agencies\nThe passport office, the tax office and the pension "
                   "office use this sign-in.",
}


def _brain(tmp_path: Path, gate: ContextGate | None) -> Brain:
    for name, text in PAGES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    emb = HashingEmbedder()
    return Brain(build_index(tmp_path, emb), emb, replace(BrainParams(), gate=gate))


def _after_keys() -> tuple[Exchange, ...]:
    return (Exchange("what is a security key", "A security key is a small device you plug "
                     "into a USB port.", "en", page_id="keys.md", page_title="Security keys"),)


# a gate that says "alone" when the bare search leads clearly (bare_lead standardized at 0)
LEAD_GATE = ContextGate(tuple(5.0 if n == "bare_lead" else 0.0 for n in FEATURES), 0.0,
                        tuple(0.0 for _ in FEATURES), tuple(0.1 for _ in FEATURES), 0.5)


def test_a_follow_up_the_gate_finds_alone_is_searched_as_a_question_alone(
        tmp_path: Path) -> None:
    """"which offices use it" after the security key: "it" reads as a follow-up, the
    context would pull the key page; the gate weighs the words' own search and lets them go
    alone, and the turn says what decided."""
    utterance = "which offices use it"
    riding = _brain(tmp_path, None).respond(_after_keys(), utterance, "keys.md", "en")
    assert riding.resolution.kind == "immediate" and riding.gate is None
    assert riding.ranking[0] == "keys.md"  # the context pulls the page before
    gated = _brain(tmp_path, LEAD_GATE).respond(_after_keys(), utterance, "keys.md", "en")
    assert gated.gate is not None and gated.gate.alone and gated.gate.p_alone is not None
    assert gated.resolution.kind == "independent" and not gated.resolution.context_from
    assert gated.ranking[0] == "partners.md"
    assert set(gated.gate.features) == set(FEATURES)
    assert gated.gate.features["on_screen"] == 1.0
    assert gated.gate.shares[0][0] == "bare_lead"


@pytest.mark.parametrize("utterance", [
    "tell me more about the button",  # a request for more detail: the whole exchange rides
    "what about the security key from earlier",  # a distant reference names its exchange
    "no, the passport office",  # a rejection turns the last question, not the topic
    "what does this page say about offices",  # "this": the page on screen
])
def test_the_gate_leaves_what_names_its_context_alone(tmp_path: Path, utterance: str) -> None:
    always = ContextGate(tuple(0.0 for _ in FEATURES), 30.0, tuple(0.0 for _ in FEATURES),
                         tuple(1.0 for _ in FEATURES), 0.5)  # p(alone) = 1 wherever it looks
    turn = _brain(tmp_path, always).respond(_after_keys(), utterance, "keys.md", "en")
    assert turn.gate is None
