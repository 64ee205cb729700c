"""Shapes of answers a question asks for (a clock time for "what time", an amount for "how much"),
and the words an answer to it tends to hold."""

from __future__ import annotations

import re

from kiosk.dialogue.lexicon import Lexicon
from kiosk.dialogue.resolver import clean
from kiosk.text import terms

# Shapes of answers a lexicon cue can name in angle brackets: "what time" = ["<time>", ...].
SHAPES = {
    "<time>": re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:a\.?m\.?|p\.?m\.?)(?!\w)|\d{1,2}時",
                         re.I),
    "<money>": re.compile(r"[$€£¥]\s?\d|\d\s?(?:円|yen\b|dollars?\b)", re.I),
    # a telephone number (grouped digits: 1-800-827-1000, (03) 1234-5678) or an e-mail address
    "<phone>": re.compile(r"(?<![\w-])(?:\+?\d{1,3}[-. ])?(?:\(\d{2,4}\)\s?|\d{2,4}[-. ])"
                          r"\d{3,4}[-. ]\d{3,4}(?![\d-])|[\w.+-]+@[\w-]+\.\w+"),
    # a postal address: a street number and a street, a PO box, a postcode
    "<address>": re.compile(
        r"\b\d{1,6}\s+(?:[A-Z][a-z]+\s){1,3}(?:Road|Rd|Street|St|Avenue|Ave|Boulevard|Blvd|"
        r"Drive|Dr|Lane|Ln|Way|Place|Pl|Court|Ct|Parkway|Pkwy)\b|\bP\.?\s?O\.?\s?Box\b|"
        r"\b[A-Z]{2}\s\d{5}(?:-\d{4})?\b|〒\s?\d{3}-\d{4}|\d+丁目|番地"),
    # a calendar date or year
    "<date>": re.compile(
        r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
        r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+\d{1,2}\b|"
        r"\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b(?:19|20)\d\d\b|\d{1,2}月\d{1,2}日|\d{4}年"),
    # a day of the calendar, not a year alone: what "when is the conference" asks for
    "<day>": re.compile(
        r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
        r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+\d{1,2}(?:st|nd|rd|th)?"
        r"\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:January|February|March|April|May|June|July|August|"
        r"September|October|November|December)\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\d{1,2}月\d{1,2}日"),
    # a length of time
    "<duration>": re.compile(
        r"\b\d+(?:\s?(?:-|–|to)\s?\d+)?\s?(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|"
        r"years?)\b|"
        r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|a few|several)\s(?:minutes?|"
        r"hours?|days?|weeks?|months?|years?)\b|\d+\s?(?:分間?|時間|日間|週間|か月|ヶ月|カ月|年間)",
        re.I),
}


def cue_terms(text: str, lex: Lexicon) -> set[str]:
    """Words an answer to this kind of question tends to contain ("how much" -> yen, cost),
    and shapes (a clock time, an amount of money). Not for a thing the visitor owns: "how do I
    change my phone number" asks how, not for a number."""
    cues: set[str] = set()
    for phrase, words in lex.answer_cues.items():
        if lex.find(text, (phrase,)) and not lex.owned(text, phrase):
            for word in words:
                cues.update([word] if word in SHAPES else (terms(word) or [word]))
    return cues


def shapes_of(sentence: str) -> set[str]:
    return {name for name, shape in SHAPES.items() if shape.search(sentence)}


def asked_shapes(utterance: str, lex: Lexicon) -> tuple[set[str], set[str]]:
    """The shapes an answer to this question holds (an amount for "how much", a clock time
    for "what time") and the words it tends to hold; no shapes: it asks for none."""
    cues = cue_terms(clean(utterance), lex)
    return cues & SHAPES.keys(), cues - SHAPES.keys()
