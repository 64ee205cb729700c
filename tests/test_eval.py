from __future__ import annotations

import json
from pathlib import Path

import pytest

from kiosk.brain import Brain
from kiosk.errors import KioskError
from kiosk.eval import (
    Dialogue,
    Turn,
    evaluate,
    format_misses,
    format_table,
    load_dialogues,
    reply_f1,
    reply_overlap,
    score_turn,
)
from kiosk.retrieval.index import build_index
from tests.fakes import HashingEmbedder

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def brain() -> Brain:
    emb = HashingEmbedder()
    return Brain(build_index(FIXTURES / "site", emb), emb)


def test_report_shape_and_strategies(brain: Brain) -> None:
    report = evaluate(brain, load_dialogues(FIXTURES / "dialogues.jsonl"))
    strategies = report["strategies"]
    assert list(strategies) == ["raw", "page_lexical", "prev_user", "prev_exchange", "window3",
                                "seed", "resolved", "oracle"]
    reply_keys = {"reply_f1", "reply_f1_turns", "reply_f1_page_right", "reply_precision",
                  "reply_recall", "false_refusals",
                  "offtopic_turns", "offtopic_false_answers", "reference_repairs",
                  "reference_repairs_met_with_repair", "key_hit", "key_turns",
                  "key_hit_by_kind", "unspeakable", "answered_replies", "unspeakable_replies"}
    for name, s in strategies.items():
        assert set(s) == {"top1", "mrr", "turns", "by_kind", "page_top1", "page_mrr",
                          "page_turns"} | (reply_keys if name == "resolved" else set())
        assert s["turns"] == 6
        assert s["page_turns"] == 5  # the greeting expects no page
        assert 0.0 <= s["top1"] <= s["mrr"] <= 1.0
        for kind in s["by_kind"].values():
            assert 0.0 <= kind["top1"] <= kind["mrr"] <= 1.0
    json.dumps(report)  # serializable as --json prints it
    assert len(report["turns"]) == 6
    assert "resolved" in format_table(report)


def test_resolved_gets_acts_screen_and_site_right_where_raw_cannot(brain: Brain) -> None:
    report = evaluate(brain, load_dialogues(FIXTURES / "dialogues.jsonl"))
    resolved = report["strategies"]["resolved"]["by_kind"]
    raw = report["strategies"]["raw"]["by_kind"]
    assert resolved["act"]["top1"] == 1.0 and raw["act"]["top1"] == 0.0
    assert resolved["situational"]["top1"] == 1.0
    assert resolved["site"]["top1"] == 1.0
    assert resolved["immediate"]["top1"] == 1.0


def test_scoring_rules() -> None:
    from kiosk.eval import Turn

    page = Turn("q", None, ("a.md", "b.md"), "independent", None, None, None)
    assert score_turn(page, ["b.md", "c.md"], None) == (1.0, 1.0)
    assert score_turn(page, ["c.md", "a.md"], None) == (0.0, 0.5)
    assert score_turn(page, [], None) == (0.0, 0.0)
    act = Turn("hi", None, None, "act", "greeting", None, None)
    assert score_turn(act, [], "greeting") == (1.0, 1.0)
    assert score_turn(act, [], "thanks") == (0.0, 0.0)
    assert score_turn(act, ["a.md"], "greeting") == (0.0, 0.0)


def test_bad_dialogue_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "x", "turns": [{"user": "hi"}]}\n{"broken": true}\n',
                    encoding="utf-8")
    with pytest.raises(KioskError, match=r"d.jsonl:2"):
        load_dialogues(path)


def test_oracle_ref_adds_the_exchange_referred_to(brain: Brain, tmp_path: Path) -> None:
    """`ref` names the earlier turn; oracle_ref searches the utterance plus that exchange."""
    path = tmp_path / "d.jsonl"
    turns = [
        {"user": "when is the penguin parade", "screen": None, "expect": "en/penguins.md",
         "reply": "The penguin parade starts at two."},
        {"user": "how much are tickets for children", "screen": None,
         "expect": "en/tickets.md"},
        {"user": "is it worth it", "screen": None, "expect": "en/penguins.md",
         "kind": "distant", "ref": 0},
    ]
    path.write_text(json.dumps({"id": "r", "lang": "en", "turns": turns}) + "\n",
                    encoding="utf-8")
    report = evaluate(brain, load_dialogues(path))
    assert "oracle_ref" in report["strategies"]
    last = report["turns"][2]
    assert last["oracle_ref"]["top"] == "en/penguins.md"
    assert last["raw"]["top"] != "en/penguins.md"  # the bare words alone do not find it


def test_bad_ref_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "x", "turns": [{"user": "hi", "ref": 3}]}\n', encoding="utf-8")
    with pytest.raises(KioskError, match="ref 3"):
        load_dialogues(path)


def test_by_turn_lists_the_misses(brain: Brain) -> None:
    report = evaluate(brain, load_dialogues(FIXTURES / "dialogues.jsonl"))
    raw_misses = format_misses(report, "raw")
    assert "f1#0 [act] hello" in raw_misses  # raw searches a greeting
    assert "f1#4 [site] what other pages are on this site" in raw_misses
    assert "f1#0" not in format_misses(report, "resolved")


def test_by_turn_says_what_the_scope_check_saw(brain: Brain, tmp_path: Path) -> None:
    """An off-topic question answered from a page, or a page question declined: --by-turn
    shows the bare search's evidence and the question's length beside the verdict."""
    path = tmp_path / "off.jsonl"
    path.write_text(json.dumps({"id": "off", "lang": "en", "turns": [
        {"user": "who won the football game", "screen": None, "expect": None,
         "kind": "offtopic"}]}) + "\n")
    report = evaluate(brain, load_dialogues(path))
    scope = report["turns"][0]["resolved"]["scope"]
    assert scope["declined"] and scope["tokens"] > 0 and scope["best_page"] is not None
    report["turns"][0]["resolved"]["rr"] = 0.0  # listed as a miss
    assert "scope: declined (best_page " in format_misses(report)


def test_reply_overlap_tells_a_reply_that_says_too_much_from_one_that_misses() -> None:
    said, answer = "cafe ground floor near entrance hall", "cafe ground floor"
    long_p, long_r = reply_overlap("en", said, answer)
    short_p, short_r = reply_overlap("en", answer, said)
    assert long_r == 1.0 and long_p == 0.5
    assert short_p == 1.0 and short_r == 0.5
    assert reply_overlap("ja", "カフェは1階です", "駐車場は地下にあります") == (0.0, 0.0)


def test_reply_f1_words_for_english_and_2grams_for_japanese() -> None:
    assert reply_f1("en", "The cafe is on the ground floor.", "the cafe is on the ground floor") \
        == 1.0
    assert reply_f1("en", "Open daily.", "The shop sells postcards.") == 0.0
    half = reply_f1("en", "cafe ground floor", "cafe ground floor near the entrance hall")
    assert abs(half - 0.6) < 1e-9  # precision 1, recall 3/7
    assert reply_f1("ja", "カフェは1階です。", "カフェは1階にあります") > 0.5
    assert reply_f1("ja", "カフェは1階です。", "駐車場は地下にあります") == 0.0


def test_offtopic_answers_and_refusals_are_counted(brain: Brain, tmp_path: Path) -> None:
    """Off-topic turns (no page, no act) answered from a page are false answers; page turns
    answered without a page are refusals, unless the reference apologises too (a question
    cut off mid-phrase is to be asked again); reply F1 skips apologies in the reference."""
    path = tmp_path / "d.jsonl"
    turns = [
        {"user": "when is the penguin parade", "screen": None, "expect": "en/penguins.md",
         "reply": "The penguin parade starts at two."},
        {"user": "sorry what", "screen": None, "expect": "en/penguins.md",
         "reply": "Sorry, I didn't catch that."},
        {"user": "and when is the", "screen": None, "expect": "en/penguins.md",
         "reply": "Sorry, I didn't catch that."},
        {"user": "tell me a joke about the weather", "screen": None, "expect": None,
         "kind": "offtopic"},
    ]
    path.write_text(json.dumps({"id": "o", "lang": "en", "turns": turns}) + "\n",
                    encoding="utf-8")
    r = evaluate(brain, load_dialogues(path))["strategies"]["resolved"]
    assert r["offtopic_turns"] == 1 and r["offtopic_false_answers"] in (0.0, 1.0)
    assert r["reply_f1_turns"] == 1  # the apology is no reference
    assert 0.0 <= r["false_refusals"] <= 1.0
    # the cut-off question is met with an apology, as the reference does: no refusal
    assert r["reference_repairs"] == 2 and r["reference_repairs_met_with_repair"] >= 0.5
    assert r["false_refusals"] == 0.0


def test_a_key_is_said_when_every_group_has_one_alternative_in_the_reply() -> None:
    from kiosk.eval import key_hit

    key = (("90 minutes", "ninety minutes", "1.5 hours"), ("guided",))
    assert key_hit("en", "The Guided tour takes 90 minutes.", key)
    assert key_hit("en", "A guided walk of ninety  minutes.".replace("  ", " "), key)
    assert not key_hit("en", "The tour takes long enough to see the highlights.", key)
    assert not key_hit("en", "It takes 90 minutes.", key)  # one group missing
    # Japanese: whitespace gone, NFKC (full-width digits), as the bench README defines
    assert key_hit("ja", "ツアーは ９０分 かかります。", (("90分", "九十分"),))


@pytest.mark.parametrize("reply, kinds", [
    ("The museum opens at 10:00 and closes at 17:00.", []),
    ("Call 1-800-827-1000 (TTY: 711) or email help@login.gov.", []),
    ("It costs $20, about 50% of the fee.", []),
    ("ミュートは「設定」の「ミュート」から設定できます。", []),
    ('Set {"theme": "dark"} in the settings.', ["code"]),
    ("See https://venue.example/hours for the times.", ["url"]),
    ("Open index.html and run setup.sh first.", ["file"]),
    ("The grid is 10×10 squares.", ["symbols"]),
    ("Match ^[a-z]+ in the name field.", ["symbols"]),
    ("To apply, do the following:", ["dangling"]),
    ("設定方法は以下のとおり。", ["dangling"]),
])
def test_unspeakable_names_what_a_listener_could_not_take_in(reply: str,
                                                               kinds: list[str]) -> None:
    from kiosk.eval import unspeakable

    assert unspeakable(reply) == kinds


def test_all_sets_in_one_table_with_the_worst_venue(tmp_path: Path) -> None:
    """`kiosk eval --all`: every folder with a site and dialogues is a set (with its off-topic
    questions), the demo comes too, and the worst venue row takes each column's worst."""
    import shutil

    from kiosk.evalsets import find_sets, format_summary, summary

    bench = tmp_path / "bench"
    for name in ("alpha-en", "beta-en", "cast-like"):
        shutil.copytree(FIXTURES / "site", bench / name / "site")
        shutil.copy(FIXTURES / "dialogues.jsonl", bench / name / "dialogues.jsonl")
    (bench / "alpha-en" / "offtopic.jsonl").write_text(json.dumps(
        {"id": "off", "lang": "en", "turns": [{"user": "who won the football game",
                                               "screen": None, "expect": None,
                                               "kind": "offtopic"}]}) + "\n")
    (bench / "notes").mkdir()  # no site: not a set
    sets = find_sets(bench)
    assert [s.name for s in sets] == ["alpha-en", "beta-en", "cast-like", "demo-en", "demo-ja"]
    assert len(sets[0].dialogues) == 2 and not sets[2].venue and sets[0].venue
    with pytest.raises(KioskError, match="no set named gamma"):
        find_sets(bench, ["gamma"])
    emb = HashingEmbedder()
    brain = Brain(build_index(FIXTURES / "site", emb), emb)
    reports = {s.name: {**evaluate(brain, s.load()), "venue": s.venue} for s in sets[:3]}
    table = summary(reports)
    assert reports["alpha-en"]["strategies"]["resolved"]["offtopic_turns"] == 1
    assert set(table["rows"]) == {"alpha-en", "beta-en", "cast-like"}
    worst = table["worst"]["resolved"]
    assert worst["set"] in ("alpha-en", "beta-en")  # a venue, never CAsT
    assert worst["value"] == min(table["rows"][n]["resolved"] for n in ("alpha-en", "beta-en"))
    text = format_summary({"summary": table})
    assert "worst venue" in text and "alpha-en" in text
    with pytest.raises(KioskError, match="no dialogue sets"):
        find_sets(tmp_path / "nowhere")


def test_key_facts_written_for_a_set_land_on_their_own_turns(tmp_path: Path) -> None:
    """Keys kept beside a read-only set (kiosk/bench/keys) join the turns they name; a line
    for another utterance, or for a turn that does not exist, is an error naming the line's
    turn, never a key on the wrong turn; a turn's own key wins."""
    from kiosk.evalsets import add_keys

    dialogue = Dialogue("d1", "en", (
        Turn("hi", None, None, "act", "greeting", None, None),
        Turn("when do you open", None, ("hours.md",), "independent", None, None, None),
        Turn("and on sundays", None, ("hours.md",), "immediate", None, None, None,
             key=(("noon",),)),
    ))
    keys = tmp_path / "keys.jsonl"
    lines = [{"id": "d1", "turn": 1, "user": "when do you open", "key": [["9", "nine"]]},
             {"id": "d1", "turn": 2, "user": "and on sundays", "key": [["closed"]]}]
    keys.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    (keyed,) = add_keys([dialogue], keys)
    assert [t.key for t in keyed.turns] == [None, (("9", "nine"),), (("noon",),)]
    keys.write_text(json.dumps({**lines[0], "user": "where is the cafe"}) + "\n")
    with pytest.raises(KioskError, match="d1 turn 1 is for 'where is the cafe'"):
        add_keys([dialogue], keys)
    keys.write_text(json.dumps({**lines[0], "turn": 7}) + "\n")
    with pytest.raises(KioskError, match="no such turn for d1 turn 7"):
        add_keys([dialogue], keys)
