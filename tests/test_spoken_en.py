"""English numbers said as a person reads them aloud (kiosk/tts/spoken_en.py), and what piper's
phonemizer then makes of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kiosk.dialogue.lexicon import load_lexicon
from kiosk.tts.spoken_en import said_in_english

SAY_AS = load_lexicon("en").say_as


@pytest.mark.parametrize("written, said", [
    # a range: "to", not a silent dash ("thirty sixty") or "dash"; short units in full
    ("Time required is 30–60 mins.", "Time required is 30 to 60 minutes."),
    ("Take 1-2 mins to write.", "Take 1 to 2 minutes to write."),
    ("We grew 5–10% in 2021–2023.", "We grew 5 to 10% in 2021 to 2023."),
    # a telephone number in its groups, digit by digit, 800 and a round 1000 as numbers
    ("Call 1-800-827-1000.", "Call 1, 800, 8 2 7, 1000."),
    ("Call (844) 875-6446 now.", "Call 8 4 4, 8 7 5, 6 4 4 6 now."),
    ("Dial 1-877-222-VETS.", "Dial 1, 8 7 7, 2 2 2, VETS."),
    # ... spelled partly in words: the words as words, a group of both as one
    ("Call 1-877-4AID-VET or 1-855-VA-WOMEN.",
     "Call 1, 8 7 7, 4 AID, VET or 1, 8 5 5, V A, WOMEN."),
    # a service number called, dialled or texted: as it is dialled
    ("Call 911. TTY: 711.", "Call 9 1 1. TTY: 7 1 1."),
    ("Our TTY number for people with hearing impairments is 711.",
     "Our TTY number for people with hearing impairments is 7 1 1."),
    ("We called 311 people in 911 cases. Call 9112.", None),
    # money in dollars and cents, after the amount
    ("It costs $9,078 a year or $12.50 a month.",
     "It costs 9,078 dollars a year or 12 dollars and 50 cents a month."),
    ("Only $1.", "Only 1 dollar."),
    ("Up to $5,000, or $2.", "Up to 5,000 dollars, or 2 dollars."),
    ("We pay a $300 burial allowance.", "We pay a 300 dollar burial allowance."),
    # a clock time as a time, a 24-hour one with p.m.
    ("Open 8:00 a.m. to 8:00 p.m. (ET).", "Open 8 a.m. to 8 p.m. Eastern Time."),
    ("Open 9:00–17:00.", "Open 9 o'clock to 5 p.m."),
    ("At 10:05 am and 15:30.", "At 10 oh 5 a.m. and 3 30 p.m."),
    ("At 18F, the 18F team wrote the 18F Methods.", None),  # an agency, not a floor
    # what the language says otherwise ([speech] say_as), as whole words only
    ("We answer 24/7, red vs. blue.", "We answer twenty-four seven, red versus blue."),
    ("An ETA of 2 days.", "An ETA of 2 days."),
    # what is no range, number or time stays as written
    ("VA Form 21-4138 and form 10-10EZ, ages 6-12, version 1.5.", None),
    ("Steps 3 and 4 of 1:2 scale.", None),
    ("A $5M grant, opened 2021-12-01, SSN 123-45-6789.", None),
])
def test_numbers_are_said_as_a_person_reads_them(written: str, said: str | None) -> None:
    assert said_in_english(written, SAY_AS) == (written if said is None else said)


@pytest.mark.slow
def test_piper_hears_no_dash_and_keeps_the_pages_text(models_dir: Path) -> None:
    from kiosk.models import load_manifest
    from kiosk.tts.piper import PiperSynthesizer

    tts = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"], models_dir,
                                         deterministic=True)
    text = "Call 1-800-827-1000, 8:00 a.m. to 8:00 p.m."
    heard = tts.phonemes_of(text)
    # as written, espeak says "one dash eight hundred dash ...", "eight zero zero a m"
    assert "dˈæʃ" not in heard and "zˈiəɹoʊ" not in heard, heard
    assert "ˈeɪt tˈuː sˈɛvən" in heard  # 827 digit by digit
    assert [p.text for p in tts.synthesize(text)] == [text]  # the caption: the page's text
