"""The article's method as `kiosk eval` measures it: its word lists and rules, as written."""

from __future__ import annotations

from kiosk.dialogue.history import Exchange
from kiosk.dialogue.lexicon import load_lexicon
from kiosk.dialogue.resolver import ACT, DISTANT, IMMEDIATE, INDEPENDENT, PAGE, SITE
from kiosk.dialogue.seed import seed_decide

EN = (
    Exchange("are there articles about streaming on youtube",
             "Live streaming to YouTube needs permission.", "en", page_id="en/stream.md"),
    Exchange("what is the avatar guide", "The avatar is the character on the screen.", "en",
             page_id="en/avatar.md"),
    Exchange("where is the cafe", "The cafe is on the ground floor.", "en",
             page_id="en/cafe.md"),
)
JA = (
    Exchange("YouTubeで配信するときの記事はあるかな", "ライブ配信には許可が必要です。", "ja"),
    Exchange("アバター案内係ってなに", "アバターは画面に映る案内係です。", "ja"),
    Exchange("カフェはどこ", "カフェは1階です。", "ja"),
)


def test_immediate_adds_the_whole_previous_exchange() -> None:
    d = seed_decide("can you explain that in more detail", EN, load_lexicon("en"))
    assert d.kind == IMMEDIATE and d.context_from == 2 and d.query is not None
    assert [s.text for s in d.query.segments] == [
        "can you explain that in more detail", "where is the cafe",
        "The cafe is on the ground floor."]
    assert all(s.weight == 1.0 for s in d.query.segments)
    d = seed_decide("それを詳しく説明して", JA, load_lexicon("ja"))
    assert d.kind == IMMEDIATE and d.context_from == 2


def test_distant_adds_the_one_exchange_of_best_2gram_overlap() -> None:
    d = seed_decide("what about the avatar discussion earlier", EN, load_lexicon("en"))
    assert d.kind == DISTANT and d.context_from == 1
    d = seed_decide("さっきのアバターのはなし", JA, load_lexicon("ja"))
    assert d.kind == DISTANT and d.context_from == 1


def test_interrogatives_and_situations_add_nothing() -> None:
    en = load_lexicon("en")
    d = seed_decide("why is silent streaming necessary", EN, en)
    assert d.kind == INDEPENDENT and d.query is not None and len(d.query.segments) == 1
    assert seed_decide("what is on this page", EN, en) == seed_decide(
        "what is on this page", (), en)
    assert seed_decide("what is on this page", EN, en).kind == PAGE
    site = seed_decide("what other articles are on this site", EN, en)
    assert site.kind == SITE and site.query is not None and len(site.query.segments) == 1
    assert seed_decide("hello", EN, en).kind == ACT


def test_its_narrow_lists_miss_what_the_resolver_catches() -> None:
    """Measured limits of the method (seed-method-measured.md): 'from before' is no distant
    word for it, so the reference goes unresolved."""
    d = seed_decide("the avatar one from before", EN, load_lexicon("en"))
    assert d.kind == INDEPENDENT
