"""What may be said aloud: a sentence as a voice can speak it, or None (a link, code, a label, a
heading or list item, a cited work)."""

from __future__ import annotations

import re

from kiosk.dialogue.lexicon import load_lexicon
from kiosk.text import SENTENCE_END_EN as _END_EN
from kiosk.text import SENTENCE_END_JA as _END_JA
from kiosk.text import lower_first

# A link is not said; an e-mail address or a handle (@syuilo@misskey.io) is: it is how to reach
# someone, as a telephone number is (reply F1 +0.004 / +0.008 on the real-site sets).
# Nor is a path ("/api/v1/scheduled_statuses": slashes and underscores read aloud); a
# pronunciation between slashes is ("Vue（発音は /vjuː/、…）").
URL = re.compile(r"\w+://|www\.|(?<!\S)/[\w.-]+/[\w.-]+")


_CODE_NAME = re.compile(r"\$[A-Za-z_]")  # $ref, $HOME: code; $127 is a price
# A run of letters and digits no voice can say: a hash, a key, a wallet's address (0xF112…).
_TOKEN = re.compile(r"(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{20,}")
# A comma right before the sentence's end: an object literal's line ("typeは'object',。"), no prose.
_CODE_COMMA = re.compile(r"[,，]\s*[。.]$")
# Japanese script: a Japanese page's sentence without any is a link's or a label's text ("App
# Store。" from "[App Store](…)。"), unless it is a labelled field ("Python：Misskey.py。").
_JA_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")
# A sentence ends with its mark, and perhaps a closing bracket or quote after it: a line that
# ends with a bracket alone is a list item ("Vascular disease (diseases that affect ...)") or a
# cited title (「…を探しているなら…『Misskey』へようこそ」), not a sentence.
# "Note: ...", "Tip: ...", "注意：...": a typographic label before a sentence, not words to say.
_LABEL = re.compile(r"^(?:note|tip|important|warning|caution|注意|ヒント|補足|メモ)\s*[:：]\s*",
                    re.I)


# "Time required: 1-2 weeks", "料金：500円": a field a page renders with its label.
_FIELD_EN = re.compile(r"^([A-Za-z][A-Za-z ]{0,30}?)\s*:\s+(\S.*)$")
_FIELD_JA = re.compile(r"^([^\s:：、。]{1,12})[:：]\s*(\S.*)$")


ASKING_LABELS = frozenset({"what", "who", "when", "where", "why", "how", "which"})


def _field_as_sentence(text: str, lang: str) -> str:
    """A labelled field said as a sentence: "Time required: 1-2 weeks" -> "Time required is
    1-2 weeks."; a label that is a question word ("What: ...") is dropped."""
    match = (_FIELD_JA if lang == "ja" else _FIELD_EN).match(text)
    if match is None or len(match.group(1).split()) > 4:
        return text
    label, value = match.group(1).strip(), match.group(2).strip()
    if (_END_JA if lang == "ja" else _END_EN).search(value) and label.lower() not in \
            ASKING_LABELS:
        return text  # a sentence with a lead-in, not a field
    if load_lexicon(lang).sounds_unfinished(label):
        # "You may qualify for: Dental services ..." is a sentence cut by a list, not a label.
        joined = f"{label}{value}" if lang == "ja" else f"{label} {lower_first(value)}"
        return joined if (_END_JA if lang == "ja" else _END_EN).search(joined) else joined + (
            "。" if lang == "ja" else ".")
    if lang == "ja":
        said = f"{label}{value}" if label.endswith("は") else f"{label}は{value}"
        return said if _END_JA.search(said) else said + "。"
    if label.lower() in ASKING_LABELS:
        said = value[:1].upper() + value[1:]
    else:
        said = f"{label} is {value}"
    return said if _END_EN.search(said) else said + "."


# A cited work: its quoted title, then only names, a year or a source ("\"User-centered design
# at 18F\" Chris Cairns, Michelle Hertzfeld, Nick Bristow."): a reference list's line.
_CITATION = re.compile(r"^[\"“][^\"“”]{3,}[\"”]\s*"
                       r"(?:(?:[A-Z][\w.'’-]*|\d{4}|and|et al\.?|[,&();:—–-])\s*)*\.?$")


# A menu path in prose ("設定 > ミュートとブロックから", "Preferences > Appearance"): where to
# tap, said as the path it is; any other ">" is code.
_MENU_STEP = re.compile(r"(?<=[^\W\d_]) [>›] (?=[^\W\d_])")
# ... which Japanese writes without spaces too ("設定>Webhook で"): a word's letters on both
# sides, one of them Japanese
_MENU_STEP_JA = re.compile(r"(?<=[^\W\d_])\s*[>›＞]\s*(?=[^\W\d_])")
_JA_LETTER = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# A size or a grid: "10×10" is read as ten-ten (or "1010"); said "10 by 10", 10かける10.
_TIMES = re.compile(r"(?<=\d)\s*[×✕]\s*(?=\d)")
# What a listener cannot take in by ear: a file name ("config.yml", "index.html"), a run of
# symbols (a regular expression, "^[a-z]+"), and a pointer at something only a reader sees
# (the figure below, 次の図, a screenshot).
_FILE_NAME = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]+\.(?:md|mdx|html?|js|mjs|ts|tsx|jsx|"
                        r"py|rb|go|rs|java|json|ya?ml|toml|ini|conf|cfg|env|sh|bat|ps1|sql|csv|txt|log|lock|png|jpe?g|svg|"
                        r"gif|webp|css|scss|vue|exe|dll|so|zip|tar|gz)(?![A-Za-z0-9])", re.I)
_SYMBOL_RUN = re.compile(r"[\^\[\]\\*~#@&|+=$/]{2,}|\[\^|\\[a-z]\b")
_UNSEEN = re.compile(r"\b(?:(?:the |this )?(?:figure|image|screenshot|diagram|picture|"
                     r"illustration|table|chart) (?:below|above)|(?:below|above) (?:figure|"
                     r"image|screenshot|diagram|picture|illustration|chart)|see (?:the )?"
                     r"(?:figure|screenshot|image|diagram)s?\b)|(?:次|下|上|以下)の(?:図|画像|"
                     r"スクリーンショット|表|イラスト|写真)|図[0-9０-９]+|スクリーンショット", re.I)


def say_name(name: str, dot: str) -> str | None:
    """A bare name as it can be said (a library's "Misskey.py" with its dot said as a word:
    "Misskey dot py"), or None when it holds what no listener can take in: a link, code
    characters, a run of symbols."""
    name = _FILE_NAME.sub(lambda m: m.group(0).replace(".", dot), name)
    if (URL.search(name) or any(ch in name for ch in "{}<>=|`") or _SYMBOL_RUN.search(name)):
        return None
    return name


def speakable(sentence: str, lang: str) -> str | None:
    """The sentence as it can be spoken, or None when it is not prose: an address, a link or a
    label (no sentence end), a heading or list item, an introduction to a list (ends with a
    colon), code, a file name, a run of symbols, or a pointer at a figure the listener cannot
    see. A labelled field is said as a sentence, a size (10×10) as it is said."""
    text = _LABEL.sub("", sentence.strip())
    if not text or URL.search(text) or text.endswith((":", "：")) or _CITATION.match(text):
        return None
    text = _field_as_sentence(text, lang)
    if text.endswith((":", "：")):
        return None
    if lang == "ja":
        text = _MENU_STEP_JA.sub(
            lambda m: "の" if _JA_LETTER.search(text[max(m.start() - 1, 0):m.end() + 1])
            else m.group(0), text)
    text = _MENU_STEP.sub("の" if lang == "ja" else ", ", text)
    text = _TIMES.sub("かける" if lang == "ja" else " by ", text)
    if (any(ch in text for ch in "{}<>=|`") or _CODE_NAME.search(text)
            or _CODE_COMMA.search(text) or _TOKEN.search(text) or _FILE_NAME.search(text)
            or _SYMBOL_RUN.search(text) or _UNSEEN.search(text)):
        return None
    if lang == "ja":
        if not _END_JA.search(text) or len(text) < 8:
            return None
        if not _JA_SCRIPT.search(text) and not _FIELD_JA.match(text):
            return None
    elif not _END_EN.search(text) or len(text.split()) < 4:
        return None
    if text.rstrip("\"”’)）」』").endswith(("?", "？")):
        return None  # a page's question is a heading or a list of them, never the answer
    return text
