"""The site-text trigram model that chooses among Whisper's hypotheses: pure, no engine."""

from __future__ import annotations

import math

from kiosk.asr.charlm import CharTrigrams, Hypothesis
from kiosk.asr.spelling import VenueSpelling

SITE = ["プラネタリウムの料金は大人500円です。", "中央駅からの行き方: 東口から徒歩5分。",
        "宇宙ギャラリーでは月の石を展示しています。"]


def test_text_like_the_site_is_likelier_than_a_homophone_it_never_writes() -> None:
    model = CharTrigrams(SITE)
    assert (model.log_prob("プラネタリウムの料金はいくら")
            > model.log_prob("プラネタリウムの両筋はいくら"))
    assert model.log_prob("中央駅からの行き方") > model.log_prob("中央駅からの駅方")


def test_marks_and_spaces_do_not_count_and_nothing_read_is_neutral() -> None:
    model = CharTrigrams(SITE)
    assert math.isclose(model.log_prob("料金は?"), model.log_prob("料金 は。"))
    assert len(model) > 0 and model.log_prob("") == 0.0
    empty = CharTrigrams([])
    assert len(empty) == 0 and empty.log_prob("料金") == 0.0


def test_the_choice_weighs_the_recognizer_score_against_the_site() -> None:
    model = CharTrigrams(SITE)
    heard = [Hypothesis("プラネタリウムの両筋はいくら。", -0.31),
             Hypothesis("プラネタリウムの料金はいくら。", -0.33)]
    assert model.choose(heard, 0.2) == 1
    assert model.choose(heard, 0.0) == 0  # no weight: the recognizer's own first
    # a hypothesis far down the recognizer's scores is not taken for its words alone
    assert model.choose([heard[0], Hypothesis(heard[1].text, -3.0)], 0.2) == 0


def test_the_venue_speller_asks_for_the_beam_only_with_a_model_of_the_site() -> None:
    with_model = VenueSpelling.from_texts(SITE, spell=False, weight=0.2)
    assert with_model.hypotheses == 5 and with_model.spellings == {}
    heard = [Hypothesis("中央駅からの駅方を教えて", -0.20),
             Hypothesis("中央駅からの行き方を教えて", -0.28)]
    assert with_model.choose(heard) == 1
    plain = VenueSpelling.from_texts(SITE, spell=False)
    assert plain.hypotheses == 1 and plain.choose(heard) == 0
