"""Japanese text as the voice is to say it: times, dates and ranges the way a person reads
them aloud.

Open JTalk reads what a page writes for the eye symbol by symbol: "10:00〜17:00" is
ジュー：ゼロゼロ〜ジューナナ：ゼロゼロ, "5〜10分" ゴ, a pause, ジュップン ("five, ten
minutes"; the wave dash is only a pause), "2023/11/05" ニセンニジューサン／ジューイチ／ゼロゴー.
Here a clock time is said as 10時 / 9時30分, a date as 2023年11月5日 (a month and day beside a
weekday or in a range: 12月29日), a range of numbers with から (and "10:30〜" as 10時30分から),
a floor as 2階 / 地下1階 (2F, B1F), and 3×3 as 3かける3. Only the
speech changes; the reply's text stays as the page wrote it. Pure.
"""

from __future__ import annotations

import re

from kiosk.tts.readings import HALF_WIDTH

_WAVE = "〜～~"
_CLOCK = re.compile(r"(?<![\d:：])([01]?\d|2[0-3])[:：]([0-5]\d)(?![\d:：])")
_FULL_DATE = re.compile(r"(?<![A-Za-z\d/.-])((?:19|20)\d\d)([/.-])(1[0-2]|0?[1-9])\2"
                        r"(3[01]|[12]\d|0?[1-9])(?![\d/.-])")
# a month and day, where it can only be one: beside a weekday, or in a range of two
_DAY = r"(1[0-2]|0?[1-9])/(3[01]|[12]\d|0?[1-9])"
_DAY_WEEKDAY = re.compile(rf"(?<![\d/]){_DAY}(?=\s?[（(][月火水木金土日])")
_DAY_RANGE = re.compile(rf"(?<![\d/]){_DAY}\s?([{_WAVE}])\s?{_DAY}(?![\d/])")
_RANGE = re.compile(rf"(?<=[\d時分日月年円])\s?[{_WAVE}]\s?(?=\d)")
_TIMES = re.compile(r"(?<=\d)\s?[×xX]\s?(?=\d)")
# a floor as a venue writes it: 2F, B1F (地下1階)
_FLOOR = re.compile(r"(?<![A-Za-z\d])(B?)(\d{1,2})F(?![A-Za-z\d])")
# "10:30〜", "3,000円〜": from then on, from that much
_FROM = re.compile(r"(?<=[\d時分日月年円])\s?[〜～](?!\s?\d)")


def _clock(match: re.Match[str]) -> str:
    hour, minute = int(match.group(1)), int(match.group(2))
    return f"{hour}時" + (f"{minute}分" if minute else "")


def _month_day(month: str, day: str) -> str:
    return f"{int(month)}月{int(day)}日"


def numbers_said(text: str) -> str:
    """The text as the Japanese voice is to say it."""
    text = text.translate(HALF_WIDTH)  # (１０：００ as 10:00)
    text = _FULL_DATE.sub(lambda m: f"{m.group(1)}年{_month_day(m.group(3), m.group(4))}", text)
    text = _DAY_RANGE.sub(lambda m: f"{_month_day(m.group(1), m.group(2))}から"
                          f"{_month_day(m.group(4), m.group(5))}", text)
    text = _DAY_WEEKDAY.sub(lambda m: _month_day(m.group(1), m.group(2)), text)
    text = _CLOCK.sub(_clock, text)
    text = _RANGE.sub("から", text)
    text = _FROM.sub("から", text)
    text = _FLOOR.sub(lambda m: ("地下" if m.group(1) else "") + f"{m.group(2)}階", text)
    return _TIMES.sub("かける", text)
