"""How the brain weighs the pages a follow-up points at: the page on screen, and the pages an
anchor page links to. A small site and the hashing embedder: the real ranking code runs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kiosk.brain import Brain, BrainParams
from kiosk.dialogue.history import Exchange
from kiosk.dialogue.resolver import ResolverParams
from kiosk.retrieval.index import build_index
from tests.fakes import HashingEmbedder

PAGES = {
    "apply.md": "# How to apply\nApply online or by mail with form 10-10EZ. "
                "[What happens after you apply](/after-you-apply/)",
    "after-you-apply.md": "# After you apply\nWe review your application. "
                          "It can take a week or so to hear from us.",
    "renewal.md": "# Renewing a card\nA renewal can take a long time: about a week. "
                  "The new card takes another week to arrive.",
    "parking.md": "# Parking\nThe car park has 120 spaces and charges by the hour.",
}


def _brain(tmp_path: Path, *, anchor_link_share: float = 0.5,
           seen_floor: float = 0.5, anchor_floor: float = 0.5,
           topic_power: float = ResolverParams().topic_power) -> Brain:
    for name, text in PAGES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    # (no context gate: its weights are fitted on the real encoder's meaning, which the
    # hashing embedder does not have; tests/test_gate.py tests it)
    params = BrainParams(gate=None,
                         resolver=replace(ResolverParams(), anchor_link_share=anchor_link_share,
                                          seen_floor=seen_floor, anchor_floor=anchor_floor,
                                          topic_power=topic_power))
    return Brain(build_index(tmp_path, HashingEmbedder()), HashingEmbedder(), params)


def _after_applying() -> tuple[Exchange, ...]:
    return (Exchange("how do i apply", "Apply online or by mail with form 10-10EZ.", "en",
                     page_id="apply.md", page_title="How to apply"),)


def test_a_follow_up_reaches_the_page_its_anchor_links_to(tmp_path: Path) -> None:
    """'how long does that take' after the apply page: the answer is on the page the apply
    page links to, not on another page whose words fit the question better. (The topic's own
    pull, `topic_power`, is left out: it alone favours the linked page here too.)"""
    utterance = "how long does that take"
    linked = _brain(tmp_path, topic_power=0.0).respond(_after_applying(), utterance, None, "en")
    assert linked.resolution.kind == "immediate"
    assert linked.ranking[0] == "after-you-apply.md"
    unlinked = _brain(tmp_path, anchor_link_share=0.0, topic_power=0.0).respond(
        _after_applying(), utterance, None, "en")
    assert unlinked.ranking[0] != "after-you-apply.md"


def test_the_page_on_screen_keeps_part_of_its_bonus_without_the_words(tmp_path: Path) -> None:
    """'can i do that online' while the renewal page is on screen: the page lacks the word,
    yet the visitor is looking at it, so it keeps part of its bonus (seen_floor); the page
    of the last answer, not on screen, keeps its own floor (anchor_floor)."""
    brain = _brain(tmp_path)
    turn = brain.respond(_after_applying(), "can i do that online", "renewal.md", "en")
    seen = {a.page_id: a.seen for a in turn.resolution.anchors}
    assert seen == {"apply.md": False, "renewal.md": True}
    floor = _brain(tmp_path, seen_floor=0.0).respond(
        _after_applying(), "can i do that online", "renewal.md", "en")
    score = {h.page_id: h.score for h in turn.hits}
    floor_score = {h.page_id: h.score for h in floor.hits}
    assert score["renewal.md"] > floor_score["renewal.md"]
    assert score["apply.md"] == floor_score["apply.md"]


def test_the_page_pointed_at_keeps_part_of_its_bonus_without_the_words(tmp_path: Path) -> None:
    """'can i pay for that by card' after the apply page, nothing on screen: the page holds
    none of "pay" or "card", yet the follow-up points at it, so it keeps part of its bonus."""
    turn = _brain(tmp_path).respond(_after_applying(), "can i pay for that by card", None, "en")
    bare = _brain(tmp_path, anchor_floor=0.0).respond(
        _after_applying(), "can i pay for that by card", None, "en")
    assert turn.resolution.kind == "immediate"
    score = {h.page_id: h.score for h in turn.hits}
    bare_score = {h.page_id: h.score for h in bare.hits}
    assert score["apply.md"] > bare_score["apply.md"]


def test_a_follow_up_stays_on_the_topic_it_points_at(tmp_path: Path) -> None:
    """'do i have to go into an office for that' after grief counseling: another service's page
    that holds "go into an office" fits the follow-up's own words better than the counseling
    page does, but not the topic "that" points at; the counseling page stays first."""
    pages = {
        "counseling.md": "# Bereavement counseling\nParents and spouses of a Servicemember who "
                         "died while serving may get free bereavement counseling. We provide "
                         "counseling at community Vet Centers, or in your home.",
        "certificates.md": "# Memorial certificates\nA certificate honors the memory of a "
                           "Veteran. Do you have to go into an office? Go into any regional "
                           "benefit office to request one.",
    }
    for name, text in pages.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    index = build_index(tmp_path, HashingEmbedder())
    history = (Exchange("is there grief counseling for parents",
                        "Parents of a Servicemember who died while serving may get free "
                        "bereavement counseling.", "en",
                        page_id="counseling.md", page_title="Bereavement counseling"),)
    utterance = "do i have to go into an office for that"

    def first(topic_power: float) -> str:
        params = BrainParams(gate=None,  # (as in _brain)
                             resolver=replace(ResolverParams(), topic_power=topic_power))
        turn = Brain(index, HashingEmbedder(), params).respond(history, utterance, None, "en")
        assert turn.resolution.kind == "immediate"
        return turn.ranking[0]

    assert first(ResolverParams().topic_power) == "counseling.md"
    assert first(0.0) == "certificates.md"
