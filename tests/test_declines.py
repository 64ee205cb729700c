"""Declines that help (issue 54), in both languages, on the demo site with the hashing
embedder: someone in danger is told whom to tell, an insult gets a calm line, a question no
page answers that is about health or safety says whom to tell instead of listing the site,
"English please" / 日本語で switches the conversation's language (replies, voice, hearing), and
"what is on this site" says what the site is and how it is organised."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kiosk.app import TurnRecord, VoiceLoop
from kiosk.audio.format import RATE_HZ, Samples
from kiosk.audio.recorded import RecordedStream
from kiosk.brain import Brain, BrainParams, language_asked
from kiosk.config import DEMO_SITE
from kiosk.dialogue.lexicon import load_lexicon
from kiosk.dialogue.resolver import SITE
from kiosk.retrieval.index import build_index
from kiosk.tts import Speech
from tests.fakes import EnergyVad, HashingEmbedder


@pytest.fixture(scope="module")
def brain() -> Brain:
    emb = HashingEmbedder()
    return Brain(build_index(DEMO_SITE, emb), emb, replace(BrainParams(), gate=None))


@pytest.mark.parametrize("lang, utterance", [
    ("en", "please call an ambulance, someone fainted by the stairs"),
    ("en", "there is a fire in the cafe"),
    ("ja", "人が倒れています"),
    ("ja", "火事です"),
])
def test_someone_in_danger_is_told_whom_to_tell(brain: Brain, lang: str,
                                                utterance: str) -> None:
    turn = brain.respond((), utterance, None, lang)
    assert turn.resolution.act == "emergency" and not turn.ranking
    assert turn.reply.text == load_lexicon(lang).replies["emergency"]
    assert ("staff" in turn.reply.text) if lang == "en" else ("スタッフ" in turn.reply.text)


@pytest.mark.parametrize("lang, utterance", [
    ("en", "where is the nearest emergency room"),
    ("ja", "近くの救急病院はどこ"),
])
def test_a_health_question_no_page_answers_says_whom_to_tell(brain: Brain, lang: str,
                                                              utterance: str) -> None:
    turn = brain.respond((), utterance, None, lang)
    assert turn.reply.page_id is None and turn.reply.repair
    assert turn.reply.text == load_lexicon(lang).replies["emergency"]


@pytest.mark.parametrize("lang, utterance", [("en", "you are useless"), ("en", "you suck"),
                                             ("ja", "ポンコツ"), ("ja", "役に立たないな")])
def test_an_insult_gets_a_calm_line_not_a_list_of_the_site(brain: Brain, lang: str,
                                                          utterance: str) -> None:
    turn = brain.respond((), utterance, None, lang)
    assert turn.resolution.act == "insult" and not turn.ranking
    assert turn.reply.text == load_lexicon(lang).replies["insult"]
    assert "{" not in turn.reply.text and "「" not in turn.reply.text  # no titles listed


def test_asking_for_the_other_language_switches_the_reply(brain: Brain) -> None:
    assert language_asked("English please", "ja") == ("language", "en")
    assert language_asked("英語でお願いします", "ja") == ("language", "en")
    assert language_asked("日本語で", "en") == ("language", "ja")
    assert language_asked("can you speak japanese", "en") == ("language", "ja")
    assert language_asked("English please", "en") == ("language", "en")  # said so, in English
    # a question that names a language is no request to speak it
    assert language_asked("is the audio guide in english", "en") is None
    assert language_asked("英語のパンフレットはありますか", "ja") is None
    turn = brain.respond((), "English please", None, "ja")
    assert turn.lang == "en" and turn.resolution.act == "language"
    assert turn.reply.text == load_lexicon("en").replies["language"]
    back = brain.respond((), "日本語で話して", None, "en")
    assert back.lang == "ja" and back.reply.text == load_lexicon("ja").replies["language"]


def test_asking_for_a_language_it_does_not_speak_says_which_it_does(brain: Brain) -> None:
    """"can we speak spanish" had been searched (the Spanish consent form was read out in
    Spanish); 中国語で likewise. The avatar says, in the conversation's language, which
    languages it speaks, and keeps that language. A question that only names a language
    is a question."""
    assert language_asked("can we speak spanish", "en") == ("other_language", "en")
    assert language_asked("do you speak french please", "en") == ("other_language", "en")
    assert language_asked("中国語で話せますか", "ja") == ("other_language", "ja")
    # read with English's phrases too, answered in the conversation's language
    assert language_asked("Spanish please", "ja") == ("other_language", "ja")
    assert language_asked("is the audio guide in spanish", "en") is None
    assert language_asked("中国語のパンフレットはありますか", "ja") is None
    assert language_asked("English please", "ja") == ("language", "en")  # one it speaks
    for utterance, lang in (("can we speak spanish", "en"), ("韓国語でお願い", "ja")):
        turn = brain.respond((), utterance, None, lang)
        assert turn.lang == lang and turn.resolution.act == "other_language"
        assert turn.reply.text == load_lexicon(lang).replies["other_language"]
        assert not turn.ranking and turn.reply.page_id is None


def test_what_time_is_it_is_told_by_the_clock(tmp_path: Path) -> None:
    """"what time is it" had been answered from whatever page says "time" ("You'll need to
    turn in the evidence at the same time as you file your claim"): the avatar has a clock.
    Only the whole question: "what time is it open" and 何時に開きますか ask the venue."""
    from datetime import datetime

    emb = HashingEmbedder()
    (tmp_path / "hours.md").write_text("# Hours\n\nThe museum opens at 9 am every day.\n",
                                       encoding="utf-8")
    brain = Brain(build_index(tmp_path, emb), emb, replace(BrainParams(), gate=None),
                  clock=lambda: datetime(2026, 12, 7, 14, 5))
    for utterance, lang, said in (("what time is it", "en", "It's 2:05 pm."),
                                  ("what's the time now", "en", "It's 2:05 pm."),
                                  ("今何時ですか", "ja", "今、14時5分です。")):
        turn = brain.respond((), utterance, None, lang)
        assert turn.resolution.act == "clock" and turn.reply.text == said
        assert not turn.ranking and turn.reply.page_id is None
    morning = Brain(brain.index, emb, brain.params, clock=lambda: datetime(2026, 12, 7, 0, 30))
    assert morning.respond((), "what time is it", None, "en").reply.text == "It's 12:30 am."
    for utterance, lang in (("what time is it open", "en"), ("何時に開きますか", "ja")):
        assert brain.respond((), utterance, None, lang).resolution.act != "clock"


class Voice:
    """Every reply is a short tone; the language it was asked to speak is kept."""

    def __init__(self, lang: str, said: list[str]) -> None:
        self.lang = lang
        self.said = said

    def synthesize(self, text: str, *, lead: bool = False) -> Iterator[Speech]:
        self.said.append(self.lang)
        yield Speech(text, (np.sin(np.arange(RATE_HZ // 2) * 0.05) * 500).astype(np.int16))


class JapaneseHearing:
    """Hears its script, told as Japanese unless asked to prefer a language."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)
        self.lang = "ja"
        self.preferred: list[str | None] = []

    def prefer(self, lang: str | None) -> None:
        self.preferred.append(lang)
        self.lang = lang or "ja"

    def start(self) -> None:
        pass

    def accept(self, samples: Samples) -> str:
        return ""

    def finish(self) -> str:
        return self.lines.pop(0) if self.lines else ""


def test_the_turn_loop_keeps_the_language_asked_for(brain: Brain) -> None:
    """The voice loop passes the language on: the turn after "English please" is answered in
    English with the English voice, and the recognizer is told to hear English."""
    tone: Samples = (np.sin(np.arange(RATE_HZ) * 0.3) * 9000).astype(np.int16)
    quiet = np.zeros(3 * RATE_HZ, dtype=np.int16)
    mic = np.concatenate([quiet[:RATE_HZ], tone, quiet, tone, quiet, quiet])
    said: list[str] = []
    hearing = JapaneseHearing(["English please", "where can I park my car"])
    turns: list[TurnRecord] = []
    loop = VoiceLoop(RecordedStream(mic, clock=lambda: 0.0), brain, EnergyVad(), hearing,
                     {"en": Voice("en", said), "ja": Voice("ja", said)}, on_turn=turns.append)
    try:
        asyncio.run(loop.run(asyncio.Event()))
    finally:
        loop.close()
    assert [t.lang for t in turns] == ["en", "en"]
    assert hearing.preferred == ["en"] and said[0] == "en" and set(said) == {"en"}
    assert "car park" in turns[1].reply.lower()


def test_what_is_on_this_site_says_what_it_is_and_its_sections(tmp_path: Path) -> None:
    """A flat site organised on its home page: its first sentence says what it is, its
    headings how it is organised (a heading repeated under each names none), not the first
    pages in alphabetical order."""
    (tmp_path / "index.md").write_text(
        "# The Garden Trust\n\nThe Garden Trust cares for three historic gardens by the river."
        "\n\n## Visit\n\nOpening times and tickets.\n\n### Pages\n\n- [Hours](hours.md)\n\n"
        "## Learn\n\nTalks and courses.\n\n### Pages\n\n- [Courses](courses.md)\n\n"
        "## Support us\n\nMembership and volunteering.\n", encoding="utf-8")
    for name, title in (("azaleas.md", "Azaleas"), ("bees.md", "Bees"), ("hours.md", "Hours"),
                        ("courses.md", "Courses")):
        (tmp_path / name).write_text(f"# {title}\n\nAbout {title.lower()} in the gardens.\n",
                                     encoding="utf-8")
    emb = HashingEmbedder()
    site = Brain(build_index(tmp_path, emb), emb, replace(BrainParams(), gate=None))
    turn = site.respond((), "what is on this site", None, "en")
    assert turn.reply.text == ('The Garden Trust cares for three historic gardens by the '
                               'river. It covers "Visit", "Learn" and "Support us".')
    # a menu, not a topic: what is asked next picks from it, it does not lean on it
    assert turn.reply.weak


def test_an_amount_no_page_states_is_declined(tmp_path: Path) -> None:
    """"How much is a book of stamps" on a site whose pages state no price: declined, however
    many words it shares with a page; on a site that states prices, a price is answered."""
    emb = HashingEmbedder()
    pages = {"account.md": "# Your account\n\nManage your account settings, your email and "
                           "the stamps of your book of visits.\n",
             "hours.md": "# Opening hours\n\nThe reading room is open on weekdays.\n"}
    for name, text in pages.items():
        (tmp_path / "plain" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "plain" / name).write_text(text, encoding="utf-8")
    plain = Brain(build_index(tmp_path / "plain", emb), emb, replace(BrainParams(), gate=None))
    stamps = plain.respond((), "how much is a book of stamps", None, "en")
    assert stamps.reply.page_id is None and stamps.reply.repair and not stamps.ranking
    (tmp_path / "plain" / "tickets.md").write_text(
        "# Tickets\n\nA day ticket costs $12 for adults and $6 for children.\n",
        encoding="utf-8")
    priced = Brain(build_index(tmp_path / "plain", emb), emb, replace(BrainParams(), gate=None))
    tickets = priced.respond((), "how much is a day ticket", None, "en")
    assert tickets.reply.page_id == "tickets.md" and "$12" in tickets.reply.text


def test_a_question_without_a_word_the_site_knows_is_still_judged_alone(tmp_path: Path) -> None:
    """暇なの / おなかすいた ("I'm bored", "I'm hungry"): no noun of the site, so no words of
    their own to search, which had let them skip the scope check and be answered from
    whatever page came first. Standing alone, the bare search is all they would be answered
    from, and it finds nothing: declined, with what the check saw."""
    emb = HashingEmbedder()
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "hours.md").write_text(
        "# 開館時間\n\n科学館は午前十時に開館します。月曜日は休館日です。\n", encoding="utf-8")
    (tmp_path / "site" / "cafe.md").write_text(
        "# カフェ\n\n一階のカフェでは軽食を販売しています。\n", encoding="utf-8")
    brain = Brain(build_index(tmp_path / "site", emb), emb, replace(BrainParams(), gate=None))
    for utterance in ("暇なの", "おなかすいた"):
        turn = brain.respond((), utterance, None, "ja")
        assert turn.analysis.strength == 0  # no word of its own
        assert turn.reply.page_id is None and turn.reply.repair and not turn.ranking
        assert turn.scope is not None and turn.scope.declined
        assert turn.scope.best_page is not None and turn.scope.tokens is not None
    asked = brain.respond((), "カフェの軽食は", None, "ja")
    assert asked.reply.page_id == "cafe.md" and asked.scope is not None
    assert not asked.scope.declined


def _gardens(root: Path, home: str) -> Brain:
    """A site of a home page (`home`), a hub page of walks, and a page per walk and talk."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "index.md").write_text(home, encoding="utf-8")
    (root / "walks.md").write_text(
        "---\ntitle: Walks\n---\n\n# Walks\n\nGuided walks through the gardens, every day.\n\n"
        "## [Rose walk](rose-walk.md)\n\nWhat: An hour among the old roses.\n\n"
        "## [Herb walk](herb-walk.md)\n\nWhat: Herbs of the kitchen garden, to smell and taste."
        "\n\n## [Pond walk](pond-walk.md)\n\nWhat: Frogs, dragonflies and water lilies.\n",
        encoding="utf-8")
    for name, title, text in (
            ("rose-walk.md", "Rose walk", "The rose walk starts at the gate at 10 am."),
            ("herb-walk.md", "Herb walk", "The herb walk starts by the glasshouse at 2 pm."),
            ("pond-walk.md", "Pond walk", "The pond walk starts at the boathouse at 4 pm."),
            ("pond-talk.md", "Pond talk", "A talk on the life of the pond, on Sundays."),
            ("bee-talk.md", "Bee talk", "A talk on the garden's bees, on Saturdays."),
            ("cafe.md", "Cafe", "The cafe serves lunch from 12 pm to 3 pm.\n\n"
             "## Related articles\n\n"
             "- [Rose walk](rose-walk.md)\n- [Herb walk](herb-walk.md)\n- [Pond walk]"
             "(pond-walk.md)\n- [Pond talk](pond-talk.md)\n")):
        (root / name).write_text(f"---\ntitle: {title}\n---\n\n{text}\n", encoding="utf-8")
    emb = HashingEmbedder()
    return Brain(build_index(root, emb), emb, replace(BrainParams(), gate=None))


def test_what_is_this_site_names_it_by_its_home_pages_own_heading(tmp_path: Path) -> None:
    """"18F Methods" on the page titled "Methods" is the site's name: a visitor asking what
    the site is hears it. A home page opening with a headline names nothing."""
    named = _gardens(tmp_path / "named", "---\ntitle: Gardens\n---\n\n# Riverside Gardens\n\n"
                     "Three historic gardens by the river, open all year.\n")
    said = named.respond((), "what is this website", None, "en").reply.text
    assert said.startswith("This is Riverside Gardens. Three historic gardens by the river")
    headline = _gardens(tmp_path / "headline", "---\ntitle: Home\n---\n\n# Welcome, come and "
                        "see the roses\n\nThree historic gardens by the river, open all year.\n")
    said = headline.respond((), "what is this website", None, "en").reply.text
    assert said.startswith("Three historic gardens by the river")


@pytest.mark.parametrize("lang, site_question, structure", [
    ("en", "what is this website", "how is it organized"),
    ("ja", "このサイトは何", "どういう構成になってるの"),
])
def test_how_the_site_is_organised_after_a_question_about_it_is_its_overview(
        tmp_path: Path, lang: str, site_question: str, structure: str) -> None:
    """"How is it organized" right after a question about the site asks for the site's
    sections, not for a page that holds the word; without that question before it, "it" is
    whatever was talked about."""
    site = _gardens(tmp_path, "# Gardens\n\nThree historic gardens by the river.\n\n## Visit"
                    "\n\nOpening times and tickets.\n\n## Learn\n\nTalks and courses.\n")
    first = site.respond((), site_question, None, lang)
    turn = site.respond((first.exchange(),), structure, None, lang)
    assert turn.resolution.kind == SITE and turn.resolution.query is None
    walk = site.respond((), "when does the rose walk start", None, "en")
    turn = site.respond((walk.exchange(),), "how is it organized", None, "en")
    assert turn.resolution.kind != SITE


def test_a_question_about_what_the_site_has_says_a_hub_pages_menu(tmp_path: Path) -> None:
    """"Which walks does this site have" answered from a page whose sections are the site's
    pages (a category page) says them by name; on a hub listing every page, "does this site
    have talks" says those whose titles hold the word. A page of its own text that ends in a
    list of related pages is no hub: its answer is said alone."""
    site = _gardens(tmp_path / "a", "# Gardens\n\nThree historic gardens by the river.\n")
    turn = site.respond((), "which guided walks does this site have", None, "en")
    assert turn.reply.page_id == "walks.md"
    assert turn.reply.text.endswith(
        'They include "Rose walk", "Herb walk" and "Pond walk".'), turn.reply.text
    turn = site.respond((), "does the cafe on this site serve lunch", None, "en")
    assert turn.reply.page_id == "cafe.md" and "They include" not in turn.reply.text
    hub = _gardens(tmp_path / "b", "# Gardens\n\nThree historic gardens by the river.\n\n"
                   "## [Walks](walks.md)\n\nGuided walks, every day.\n\n### Walks include\n\n"
                   "- [Rose walk](rose-walk.md)\n- [Herb walk](herb-walk.md)\n"
                   "- [Pond walk](pond-walk.md)\n\n## Talks\n\nOn weekends.\n\n"
                   "### Talks include\n\n- [Pond talk](pond-talk.md)\n- [Bee talk](bee-talk.md)\n")
    turn = hub.respond((), "which talks does this site have on weekends", None, "en")
    assert turn.reply.page_id == "index.md", turn.reply.page_id
    assert turn.reply.text.endswith('They include "Pond talk" and "Bee talk".'), turn.reply.text


@pytest.mark.parametrize("lang, pages, own, asked", [
    ("en", {"phone.md": "# Change your phone number\n\nOpen your account page and select "
                        "Edit next to your phone number. Enter the new number and confirm it.\n",
            "hours.md": "# Opening hours\n\nThe reading room is open on weekdays.\n"},
     "how do i change my phone number", "what is the phone number of the reading room"),
    ("ja", {"phone.md": "# 電話番号の変更\n\nアカウントのページで電話番号の横の編集を選びます。"
                        "新しい番号を入れて確かめてください。\n",
            "hours.md": "# 開館時間\n\n閲覧室は平日に開いています。\n"},
     "自分の電話番号を変えたい", "閲覧室の電話番号は"),
])
def test_a_thing_of_the_visitors_own_asks_for_no_shape(tmp_path: Path, lang: str,
                                                      pages: dict[str, str], own: str,
                                                      asked: str) -> None:
    """"how do I change my phone number" on a page that says how, with no number on it: the
    number is the visitor's own, so the question asks how, not for a number, and is answered.
    Asking the site for its number, where no page states one, is still declined."""
    emb = HashingEmbedder()
    for name, text in pages.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    site = Brain(build_index(tmp_path, emb), emb, replace(BrainParams(), gate=None))
    changed = site.respond((), own, None, lang)
    assert changed.reply.page_id == "phone.md" and not changed.reply.repair
    number = site.respond((), asked, None, lang)
    assert number.reply.page_id is None and number.reply.repair
