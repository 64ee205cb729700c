from __future__ import annotations

import re

import pytest

from kiosk.text import (
    KATAKANA_WHOLE_SHARE,
    bigrams,
    content_strength,
    content_terms,
    detect_lang,
    normalize,
    overlap,
    query_weights,
    sentences,
    site_nouns,
    spell_numbers,
    terms,
    unstopped,
)

_HIRAGANA = re.compile(r"^[\u3040-\u309f]+$")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("プラネタリウム の 料金 は いくら", "プラネタリウムの料金はいくら"),
        ("  Hello   World ", "hello world"),
        ("ＡＢＣ１２３", "abc123"),
        ("Wi-Fi は ある", "wi-fi はある"),
    ],
)
def test_normalize_folds_width_case_and_recognizer_spaces(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ten thirty", "10 30"),
        ("twenty five people", "25 people"),
        ("two hundred yen", "200 yen"),
        ("is there one for kids", "is there one for kids"),
        ("one hundred", "100"),
    ],
)
def test_spelled_numbers_become_digits(raw: str, expected: str) -> None:
    assert spell_numbers(raw) == expected


def test_terms_english_stems_and_drops_stopwords() -> None:
    assert terms("Tell me about the planetarium tickets") == ["planetarium", "ticket"]


@pytest.mark.parametrize(("a", "b"), [
    ("applied", "apply"), ("applying", "apply"), ("buried", "bury"), ("married", "marry"),
    ("messages", "message"), ("messaging", "message"), ("caring", "care"), ("hoping", "hope"),
    ("running", "run"), ("closing", "close"), ("dressed", "dressing"), ("used", "use"),
])
def test_inflections_of_a_word_share_its_term(a: str, b: str) -> None:
    assert terms(a) == terms(b)


@pytest.mark.parametrize(("a", "b"), [("caring", "car"), ("hoping", "hop"), ("hope", "hop")])
def test_different_words_keep_different_terms(a: str, b: str) -> None:
    assert terms(a) != terms(b)


def test_terms_japanese_bigrams_do_not_cross_script_changes() -> None:
    found = terms("プラネタリウムの料金", for_query=True)
    assert "ムの" not in found and "の料" not in found
    assert "料金" in found and "プラ" in found


def test_index_terms_keep_single_kanji_so_one_kanji_queries_match() -> None:
    assert "車" in terms("駐車場")
    assert "車" not in terms("駐車場", for_query=True)


def test_a_katakana_word_is_a_term_whole_beside_its_bigrams() -> None:
    found = terms("テキストボックスに入力")
    assert "テキストボックス" in found and "ボッ" in found
    weights = query_weights("ボットを作りたい")
    assert weights["ボット"] == pytest.approx(KATAKANA_WHOLE_SHARE)
    assert weights["ボッ"] + weights["ット"] == pytest.approx(1.0 - KATAKANA_WHOLE_SHARE)
    assert query_weights("ペンはある") == {"ペン": 1.0}  # two letters: the word is its 2-gram


def test_query_terms_drop_hiragana_function_words() -> None:
    assert terms("それはいくらですか", for_query=True) == []


_SITE = ("さくらのVPSでサーバーを作れます。おみやげはショップで売っています。"
         "お昼ごはんはカフェで食べられます。小さいものから大きいものまであります。")


def test_the_nouns_a_site_writes_in_hiragana() -> None:
    nouns = site_nouns([_SITE])
    assert {"さくら", "おみやげ", "ごはん"} <= nouns
    # alone, the さい of 小さい reads as a noun: whole runs are analysed; もの is no noun here
    assert not nouns & {"さい", "もの", "いくら"}
    assert site_nouns(["The cafe serves curry."]) == frozenset()


@pytest.mark.parametrize(
    ("text", "word"),
    [("さくらのほうは", "さくら"), ("おみやげはどこで買えますか", "おみやげ"),
     ("そのあとお昼ごはんはどこで食べられる", "ごはん")],
)
def test_a_noun_the_site_writes_in_hiragana_is_a_query_word(text: str, word: str) -> None:
    nouns = site_nouns([_SITE])
    grams = [word[i:i + 2] for i in range(len(word) - 1)]
    assert set(grams) <= set(query_weights(text, nouns))
    assert sum(query_weights(text, nouns)[g] for g in grams) == pytest.approx(1.0)
    assert content_strength(text, nouns) >= len(word) - 1
    # without the site's nouns: none
    assert not set(grams) & set(query_weights(text))
    assert content_strength(text) < content_strength(text, nouns)


def test_a_noun_counts_in_what_is_left_of_an_utterance_only_if_it_was_said() -> None:
    # without それ and どこ, それはどこで見つかったの leaves はで見つかったの:
    # はで (派手) was not said
    nouns = frozenset({"はで"})
    said = "それはどこで見つかったの"
    assert not any(_HIRAGANA.match(t) for t in query_weights(said, nouns))
    assert content_strength(said, nouns) == content_strength(said) < 2


@pytest.mark.parametrize(
    ("text", "lang"), [("このページは何", "ja"), ("what is this", "en"), ("YouTubeの配信", "ja")]
)
def test_detect_lang(text: str, lang: str) -> None:
    assert detect_lang(text) == lang


def test_the_time_deixis_is_no_word_of_the_topic_in_japanese() -> None:
    """今日の株価 asks about share prices, not about 今日: a site page on "今日の年月日" had
    answered it by that word alone."""
    assert terms("今日の株価はどうなってる", for_query=True) == ["株価"]
    assert "今日" not in query_weights("今日は寒いね") and "寒" in query_weights("今日は寒いね")
    assert "明日" not in terms("明日の天気", for_query=True)


def test_content_terms_remove_deixis_and_request_words() -> None:
    assert content_terms("can you explain that in more detail") == []
    assert content_terms("それを詳しく説明してくれる") == []
    assert content_terms("what time does the robot show start") == ["robot", "show", "start"]


@pytest.mark.parametrize(
    ("text", "at_least", "below"),
    [
        ("車はどこにとめられますか", 1.0, 2.0),  # a noun kanji before a particle counts
        ("だれが作ったの", 0.0, 1.0),  # a verb stem does not
        ("wait you're not explaining in detail", 0.0, 1.0),
        ("how much is the planetarium for children", 2.0, 99.0),
    ],
)
def test_content_strength(text: str, at_least: float, below: float) -> None:
    assert at_least <= content_strength(text) < below


def test_bigram_overlap_finds_the_clue() -> None:
    clue = bigrams("アバター")
    assert overlap(clue, bigrams("アバター案内係ってなに")) == 1.0
    assert overlap(clue, bigrams("プラネタリウムの料金")) == 0.0
    assert overlap(set(), bigrams("anything")) == 0.0


def test_sentences_split_both_languages() -> None:
    assert sentences("一つ目です。二つ目！\nFirst one. Second one?") == [
        "一つ目です。", "二つ目！", "First one.", "Second one?"]


@pytest.mark.parametrize(("text", "said"), [
    # a question quoted inside a sentence does not end it, in either script
    ("Pose the question \u201cWhy?\u201d at least five times. Then stop.",
     ["Pose the question \u201cWhy?\u201d at least five times.", "Then stop."]),
    ("「本当？」と聞いた。次は!?そう。", ["「本当？」と聞いた。", "次は!?", "そう。"]),
    # an abbreviation ends no sentence; a.m. / p.m. do not before a bracket or a number
    ("Monday through Friday, 8:00 a.m. to 10:00 p.m. (ET), and Saturday. Call us.",
     ["Monday through Friday, 8:00 a.m. to 10:00 p.m. (ET), and Saturday.", "Call us."]),
    ("When Bobby was cut from St. Xavier, he left. Ask Dr. Lee, e.g. The desk.",
     ["When Bobby was cut from St. Xavier, he left.", "Ask Dr. Lee, e.g. The desk."]),
    ("We close at 5 p.m. Tickets are sold until 4 p.m.",
     ["We close at 5 p.m.", "Tickets are sold until 4 p.m."]),
    # ... nor before a time zone
    ("Busiest from 10:30 a.m. to 1:30 p.m. ET, and closed on holidays. Call us at 9 a.m. PT.",
     ["Busiest from 10:30 a.m. to 1:30 p.m. ET, and closed on holidays.",
      "Call us at 9 a.m. PT."]),
])
def test_sentences_end_where_a_sentence_ends(text: str, said: list[str]) -> None:
    assert sentences(text) == said


def test_a_long_first_sentence_is_spoken_clause_first() -> None:
    from kiosk.text import spoken_pieces

    assert spoken_pieces("Parking costs 1,500 yen per day at most, or 300 yen per hour. "
                         "Show your ticket.") == [
        "Parking costs 1,500 yen per day at most,", "or 300 yen per hour.", "Show your ticket."]
    # short first sentences, clauses too short to stand, and numbers stay whole
    assert spoken_pieces("Hello! Ask me anything.") == ["Hello!", "Ask me anything."]
    assert spoken_pieces("At 11:30, 14:00 and 16:00 a humanoid robot walks and dances.") == [
        "At 11:30, 14:00 and 16:00 a humanoid robot walks and dances."]
    assert spoken_pieces("駐車場は正面入口の横にあり、120台まで停められます。") == [
        "駐車場は正面入口の横にあり、", "120台まで停められます。"]


def test_a_long_first_piece_begins_with_a_lead_phrase() -> None:
    from kiosk.dialogue.lexicon import load_lexicon
    from kiosk.text import lead_split, word_boundaries_before

    openers = load_lexicon("en").phrase_openers

    def split(text: str) -> tuple[str, str] | None:
        return lead_split(text, word_boundaries_before(text, openers), "en")

    assert split("The museum is open from 10:00 to 16:30 every day.") == (
        "The museum is open", "from 10:00 to 16:30 every day.")
    # the lead is long enough to stand: "It is" before "in" is not a phrase of its own
    assert split("It is in the basement next to the cloakroom, by the lifts.") == (
        "It is in the basement", "next to the cloakroom, by the lifts.")
    assert split("Tickets are 12 dollars.") is None  # short: said whole
    assert split("Visitors may photograph everything everywhere always.") is None
    assert split("The robot show is performed daily and") is None  # no rest worth a piece
    # Japanese boundaries come from the synthesizer's analysis: offsets are given
    assert lead_split("開館時間は午前10時から午後4時30分までです。", [5], "ja") == (
        "開館時間は", "午前10時から午後4時30分までです。")
    assert lead_split("入館料は大人1500円です。", [4], "ja") is None


def test_a_long_piece_is_said_in_parts_cut_where_speech_pauses() -> None:
    from kiosk.dialogue.lexicon import load_lexicon
    from kiosk.text import split_long, word_boundaries_before

    openers = load_lexicon("en").phrase_openers

    def parts(text: str, limit: int) -> list[str]:
        return split_long(text, limit, word_boundaries_before(text, openers))

    clause = ("The planetarium shows the winter sky at eleven, "
              "and the summer sky at two in the afternoon.")
    assert parts(clause, 60) == ["The planetarium shows the winter sky at eleven,",
                                 "and the summer sky at two in the afternoon."]
    # no comma within reach: before a word that opens a phrase ("from"), else between words
    assert parts("The museum is open every day of the week from ten o'clock sharp", 50) == [
        "The museum is open every day of the week", "from ten o'clock sharp"]
    assert parts("Visitors photograph everything everywhere always", 30) == [
        "Visitors photograph everything", "everywhere always"]
    long = " ".join(["word"] * 60)
    assert all(len(p) <= 40 for p in parts(long, 40)) and " ".join(parts(long, 40)) == long
    assert parts("Short.", 40) == ["Short."]
    dated = "You can apply if you married on or after May 16, 2003 and lived together."
    assert all("16, 2003" in p or "16" not in p for p in parts(dated, 50))  # a date stays
    assert " ".join(parts(dated, 50)) == dated
    assert parts("x" * 90, 40) == ["x" * 90]  # nowhere to cut: said whole


def test_pieces_longer_than_the_limit_end_in_a_phrase_pause() -> None:
    from kiosk.tts import PHRASE_SILENCE_MS, pieces_to_say

    text = ("Thank you. Tickets are sold at the desk by the entrance, and members show their "
            "card there.")
    whole = pieces_to_say(text, False, "en", lambda piece: [])
    assert [p for p, _ in whole] == ["Thank you.", "Tickets are sold at the desk by the "
                                     "entrance, and members show their card there."]
    cut = pieces_to_say(text, False, "en", lambda piece: [], max_chars=50)
    assert cut == [("Thank you.", None),
                   ("Tickets are sold at the desk by the entrance,", PHRASE_SILENCE_MS),
                   ("and members show their card there.", None)]


def test_word_overlap_matches_words_not_letters_inside_them() -> None:
    from kiosk.text import word_overlap

    assert word_overlap("draw", "Photography and Live Streaming") == 0.0
    assert word_overlap("grief counseling", "bereavement counselors help with grief") == 1.0
    assert word_overlap("blood test", "view your lab tests") == 0.5
    assert word_overlap("", "anything") == 0.0


def test_a_kanji_that_names_nothing_asked_is_no_query_word() -> None:
    """Whisper writes 他にはどんな商品があるの where a visitor types ほかには (hiragana, no query
    word): 他 ("other") as a word had found the page of the exchange before, which holds
    他 too, instead of the shop. The index keeps it (その他 is text)."""
    assert query_weights("他にはどんな商品があるの") == query_weights("ほかにはどんな商品があるの")
    assert query_weights("他にはどんな商品があるの") == {"商品": 1.0}
    assert terms("他の言語", for_query=True) == ["言語"]
    assert "他" in terms("その他の言語")


@pytest.mark.parametrize("heard, typed", [
    ("投稿をパブリックにできなくなったんだけど。", "投稿をパブリックにできなくなったんだけど"),
    ("I forgot my password. ", "I forgot my password"),
    ("help!", "help"),
    # a question mark is how it is asked; several sentences are a story, left whole
    ("Where is it?", "Where is it?"),
    ("It broke. What now.", "It broke. What now."),
    ("。", "。"),
])
def test_a_heard_utterance_loses_its_full_stop_as_typed(heard: str, typed: str) -> None:
    assert unstopped(heard) == typed
