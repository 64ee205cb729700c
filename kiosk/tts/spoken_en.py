"""English text as the voice is to say it: numbers the way a person reads them aloud.

piper's phonemizer (espeak-ng) reads what a page writes for the eye word by word: "30–60
mins" is "thirty sixty mins", "1-2 mins" "one dash two", "1-800-827-1000" "one dash eight
hundred dash eight hundred twenty seven dash one thousand", "call 911" "call nine hundred
eleven", "$12.50" "dollar twelve point five zero", "8:00 a.m." "eight zero zero a m". Here a
telephone number is said in its groups, digit by digit (an 800 and a 1000 as such: "one,
eight hundred, eight two seven, one thousand"; its words as words: 1-877-4AID-VET), a service
number called as dialled ("nine one one"), an amount of money in dollars and cents, a clock
time as a time ("eight a.m.", "three p.m.", "eleven o'clock"), a range of numbers with "to",
and the short units after a number in full.
(Not a floor written 2F: "at 18F" on a real site is an agency.)
Words the language says otherwise than it writes (`[speech] say_as`: "24/7", "(ET)") are
replaced. Only the speech changes; the reply's text stays as the page wrote it. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_UNITS = {"min": "minutes", "mins": "minutes", "hr": "hours", "hrs": "hours",
          "sec": "seconds", "secs": "seconds", "wk": "weeks", "wks": "weeks",
          "yr": "years", "yrs": "years"}
_UNIT_WORDS = (r"(?:minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?|years?|yrs?|"
               r"seconds?|secs?|percent|%)")

# A telephone number: an optional country code, then groups of digits (or letters, as in
# 1-877-222-VETS) joined by hyphens, dots or spaces, or an area code in brackets.
_PHONE = re.compile(
    r"(?<![\w$.-])(?:(?P<country>1)[-. ])?(?:\((?P<area>\d{3})\)\s?|(?P<area2>\d{3})[-.])"
    r"(?P<rest>[0-9A-Z]{3}[-. ][0-9A-Z]{4})(?![\w-])")
# ... or spelled partly in words (1-877-4AID-VET, 1-855-VA-WOMEN): after the area code, groups
# of digits and capitals holding seven in all, one letter at least.
_VANITY = re.compile(
    r"(?<![\w$.-])(?:(?P<country>1)[-. ])?(?P<area>\d{3})[-.]"
    r"(?P<rest>(?:[0-9A-Z]+-){1,3}[0-9A-Z]+)(?![\w-])")
# A three-digit service number dialled (911, TTY: 711, 988): said digit by digit, as the
# number is dialled, when it is called, dialled or texted; "nine hundred eleven" else.
_SERVICE = re.compile(r"\b(?P<cue>(?:call|dial|text|tty)\b[^\d.!?]{0,60}?)"
                      r"(?<![\d$,.])(?P<code>[2-9]11|988)(?![\d%]|[,.]\d)", re.I)
_MONEY = re.compile(r"\$(?P<whole>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<cents>\d{2}))?(?![\w,.]\d|\w)")
_CLOCK = re.compile(r"\b(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)\b"
                    r"(?:\s?(?P<ampm>[ap])\.?\s?m\b\.?)?", re.I)
_RANGE = re.compile(r"(?<![\d.,-])(\d[\d,.]*)\s?[–—]\s?(?=\$?\d)")
_HYPHEN_RANGE = re.compile(rf"(?<![\w.-])(\d+)-(\d+)(?=\s?{_UNIT_WORDS}\b|\s?%)")
_UNIT = re.compile(r"(?<=\d)\s?\b(" + "|".join(_UNITS) + r")\b")


def _digits(group: str) -> str:
    """A group of a telephone number as said: 800 and a round 1000 as numbers, the rest
    digit by digit (letters as they are: VETS)."""
    if not group.isdigit() or group == "800" or (len(group) == 4 and group.endswith("000")):
        return group
    return " ".join(group)


def _phone(match: re.Match[str]) -> str:
    groups = [match.group("country"), match.group("area") or match.group("area2"),
              *re.split(r"[-. ]+", match.group("rest"))]
    return ", ".join(_digits(g) for g in groups if g)


def _vanity(match: re.Match[str]) -> str:
    rest = match.group("rest")
    letters = re.sub(r"[^0-9A-Z]", "", rest)
    if len(letters) != 7 or letters.isdigit():
        return match.group(0)
    # (a group of digits and letters, 4AID, is a number and a word, said as one group)
    # (two letters are letters: VA, MY)
    groups = [" ".join(" ".join(g) if g.isalpha() and len(g) <= 2 else _digits(g)
                       for g in re.findall(r"\d+|[A-Z]+", part)) for part in rest.split("-")]
    return ", ".join(g for g in [match.group("country"), _digits(match.group("area")), *groups]
                     if g)


def _service(match: re.Match[str]) -> str:
    return match.group("cue") + " ".join(match.group("code"))


def _money(match: re.Match[str]) -> str:
    whole, cents = match.group("whole"), match.group("cents")
    if re.search(r"\ban?\s$", match.string[:match.start()], re.I) and not cents:
        return f"{whole} dollar"  # "a $300 allowance": a three hundred dollar allowance
    said = f"{whole} dollar" + ("" if whole == "1" else "s")
    if cents and cents != "00":
        said += f" and {int(cents)} cent" + ("" if cents == "01" else "s")
    return said


def _clock(match: re.Match[str]) -> str:
    hour, minute, ampm = int(match.group("h")), match.group("m"), match.group("ampm")
    if ampm is None and hour > 12:
        hour, ampm = hour - 12, "p"  # 17:00: five p.m.
    said = str(hour)
    if minute != "00":
        said += f" {'oh ' + minute[1] if minute.startswith('0') else minute}"
    if ampm is not None:
        return f"{said} {ampm.lower()}.m."
    return said if minute != "00" else f"{said} o'clock"


def said_in_english(text: str, say_as: Mapping[str, str] = {}) -> str:
    """The text as the English voice is to say it."""
    for written, said in say_as.items():
        text = re.sub(rf"(?<![\w/-]){re.escape(written)}(?![\w/-])", said, text)
    text = _PHONE.sub(_phone, text)
    text = _VANITY.sub(_vanity, text)
    text = _SERVICE.sub(_service, text)
    text = _MONEY.sub(_money, text)
    text = _RANGE.sub(r"\1 to ", text)
    text = _HYPHEN_RANGE.sub(r"\1 to \2", text)
    text = _CLOCK.sub(_clock, text)
    text = _UNIT.sub(lambda m: " " + _UNITS[m.group(1)], text)
    return re.sub(r"(?<=\.m\.)\.", "", text)  # "5 p.m." at a sentence's end: one stop


def kinds_of(text: str, say_as: Mapping[str, str] = {}) -> list[str]:
    """What `said_in_english` says otherwise in the text, by kind (for the bench)."""
    found = {"phone": _PHONE, "service": _SERVICE, "money": _MONEY, "range": _RANGE,
             "clock": _CLOCK, "unit": _UNIT}
    kinds = [kind for kind, pattern in found.items() if pattern.search(text)]
    if any(_vanity(m) != m.group(0) for m in _VANITY.finditer(text)):
        kinds.append("vanity")
    if "range" not in kinds and _HYPHEN_RANGE.search(text):
        kinds.append("range")
    if said_in_english(text, say_as) != said_in_english(text):
        kinds.append("say_as")
    return kinds
