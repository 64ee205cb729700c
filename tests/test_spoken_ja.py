"""Japanese times, dates and ranges said as a person reads them aloud (kiosk/tts/spoken_ja.py),
and what Open JTalk then says."""

from __future__ import annotations

import pytest

from kiosk.tts.spoken_ja import numbers_said


@pytest.mark.parametrize("written, said", [
    ("営業時間は10:00〜17:00です。", "営業時間は10時から17時です。"),
    ("9:30に開場します。", "9時30分に開場します。"),
    # a range with から: "5〜10分" was ゴ, a pause, ジュップン
    ("5〜10分かかります。", "5から10分かかります。"),
    ("1～2営業日", "1から2営業日"),
    ("2023/11/05に公開", "2023年11月5日に公開"),
    ("2023.11.05 お知らせ", "2023年11月5日 お知らせ"),
    ("12/29〜1/3は休館", "12月29日から1月3日は休館"),
    ("12/29(月)は休館", "12月29日(月)は休館"),
    ("3×3のマス", "3かける3のマス"),
    ("受付は10:30〜、料金は3,000円〜です。", "受付は10時30分から、料金は3,000円からです。"),
    ("カフェは2F、駐車場はB1Fです。", "カフェは2階、駐車場は地下1階です。"),
    ("開館は１０：００〜１７：００", "開館は10時から17時"),  # full-width, as pages write
    # what is no time, date or range stays as written
    ("v2023.11.1で追加", None), ("比率は16:9です", None), ("1/3の人が", None),
    ("〜新機能の紹介〜", None), ("A4F規格とIPv4F", None),
])
def test_times_dates_and_ranges_are_said_as_read_aloud(written: str, said: str | None) -> None:
    assert numbers_said(written) == (written if said is None else said)


def test_open_jtalk_says_from_and_to_not_a_pause() -> None:
    import pyopenjtalk

    assert pyopenjtalk.g2p("5〜10分") == "g o pau j u cl p u N"  # "five, ten minutes"
    assert pyopenjtalk.g2p(numbers_said("5〜10分"), kana=True) == "ゴカラジュップン"
    heard = pyopenjtalk.g2p(numbers_said("10:00〜17:00"), kana=True)
    assert heard == "ジュージカラジューシチジ", heard
