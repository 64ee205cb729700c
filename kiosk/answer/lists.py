"""A list on a page said as the sentence it is: its lead-in and items joined, or each item with
the words that lead into it."""

from __future__ import annotations

import re

from kiosk.answer.params import DEFAULT_PARAMS, AnswerParams
from kiosk.answer.shapes import SHAPES
from kiosk.answer.speakable import URL, speakable
from kiosk.dialogue.lexicon import Lexicon, load_lexicon
from kiosk.dialogue.resolver import clean
from kiosk.text import SENTENCE_END_EN as _END_EN
from kiosk.text import SENTENCE_END_JA as _END_JA
from kiosk.text import lower_first, opens_with, sentences


def _item(line: str, lang: str, params: AnswerParams) -> bool:
    """A list item that is no sentence of its own: short, no sentence end (a closing quote
    or bracket is no end: "The playing of “Taps”")."""
    bare = line.rstrip("”’\"」』)）")
    if (not bare or (_END_JA if lang == "ja" else _END_EN).search(bare) or URL.search(line)
            or bare.endswith((":", "："))):  # the lead-in of another list
        return False
    size = len(line) / 2.5 if lang == "ja" else len(line.split())
    return size <= params.list_item_words


_EXAMPLES = ("like", "including")  # a list of examples after these may be said in part
# A list item that pairs a label with its value: "Monday: Tutorials", 月曜日：ワークショップ.
_LABELLED = re.compile(r"^[^:：]{1,60}[:：]\s*\S")
_CONJUNCTION_END = re.compile(r"[,;]?\s+(and|or)$", re.I)


def _join_items(items: list[str], lang: str, lead: str, more: str = "") -> str:
    """The items said as the end of their lead-in's sentence; `more`: the list goes on past
    them, said with these words (no "and" before the last item then)."""
    items = [i.strip().rstrip("、,;；") for i in items]
    if lang == "ja":
        return "、".join(items) + more
    if (not more and lead.split()[-1].lower() in ("to", "at")
            and any(ch.isdigit() for ch in "".join(items))):
        return ", ".join(items)  # the lines of an address ("Send the form to:"), no "and"
    # an item may carry the list's own conjunction ("..., and" / "..., or")
    said = [_CONJUNCTION_END.search(i) for i in items]
    joiner = next((m.group(1).lower() for m in said if m is not None), "and")
    # (a label keeps its capital: "Monday: Tutorials" is a name, not the sentence's word)
    items = [_CONJUNCTION_END.sub("", i) for i in items]
    items = [i if _LABELLED.match(i) else lower_first(i) for i in items]
    if more:
        return ", ".join(items) + more
    if len(items) == 1:
        return items[0]
    if len(items) == 2:
        return f"{items[0]} {joiner} {items[1]}"
    return ", ".join(items[:-1]) + f", {joiner} {items[-1]}"


def lists_as_sentences(lines: list[str], lang: str,
                       params: AnswerParams = DEFAULT_PARAMS) -> list[str]:
    """A sentence a page cuts into a list ("People attending a military funeral may:" and
    two items, "Military funeral honors include:" and four) is said as the one sentence it is:
    the lead-in, the items joined, an end. Only a lead-in that sounds unfinished ("may",
    "include", "を") leads such a sentence: "Related pages:" and a list of links stays out,
    as list introductions and bare items are not said."""
    return [text for text, _, _ in list_sentences(lines, lang, params)]


# What a text `list_sentences` gives out is: one of a long list's items, each said as a
# sentence of its own, or a finished sentence of the lead-in before them ("At least one of
# these must be true." of "At least one of these must be true. You're:"); or neither.
ITEM, LEAD = "item", "lead"


def list_sentences(lines: list[str], lang: str, params: AnswerParams, headed: bool = False
                   ) -> list[tuple[str, int, str]]:
    """`lists_as_sentences`, each line out with the position of the first line it says and
    what it is of a list (`ITEM`, `LEAD` or ""); `headed`: the first line is the section's
    heading, leading into the list under it ("We do not accept:"), said with its items
    whatever its last word."""
    lex = load_lexicon(lang)
    out: list[tuple[str, int, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        lead = line[:-1].rstrip() if line.endswith((":", "：")) else ""
        # a finished sentence that points at the list after it ("Try the following
        # settings.") leads into it as a colon does: alone it says nothing
        ahead = not lead and _points_ahead(line, lang, lex)
        if ahead:
            k = i + 1
            while k < len(lines) and _item(lines[k].strip(), lang, params):
                k += 1
            # (labelled items are each said as a sentence of their own: "1,000円以上は…")
            ahead = not all(_LABELLED.match(x.strip()) for x in lines[i + 1:k])
            lead = line[:-1].rstrip() if ahead else ""
        # a colon inside is a table's header row ("If you're ... and: Your MAPR amount is:")
        if lead and ":" not in lead and "：" not in lead:
            j = i + 1
            # (an item of any length that the one before goes on into, "..., or", is one)
            while j < len(lines) and (_item(lines[j].strip(), lang, params) or (
                    j > i + 1 and _CONJUNCTION_END.search(lines[j - 1].strip())
                    and not lines[j].strip().endswith((":", "："))
                    and not URL.search(lines[j]))):
                j += 1
            # the lead-in stops unfinished ("... may:"), or the items carry the sentence's own
            # "and"/"or" ("Both of these must be true:" / "You're the parent, and" / ...):
            # the latter keeps its colon, a pause before the items
            unfinished = _leads_in(lead, lang, lex)
            # examples ("..., like:") may be said in part; a list of conditions may not
            some = lang != "ja" and lead.lower().split()[-1] in _EXAMPLES
            unfinished = unfinished or some
            # ... or every item pairs a label with its value, as a timetable does ("Monday &
            # Tuesday (14 & 15 July): Tutorials & Workshops"): the answer is in the items
            lead_heading = headed and i == 0
            joined = unfinished or ahead or lead_heading or any(
                _CONJUNCTION_END.search(x.strip()) for x in lines[i + 1:j - 1]) or (
                j - i - 1 >= params.list_items_min
                and all(_LABELLED.match(x.strip()) for x in lines[i + 1:j]))
            # ... or its one item is how to reach someone ("please contact the sponsoring
            # team:" / "sponsoring@europython.eu"): the answer is the address
            reach = j == i + 2 and bool(SHAPES["<phone>"].search(lines[i + 1]))
            # a finished sentence pointing at a list too long to say whole says the list's
            # first items and that it goes on (`[answer] more_items`): alone it says nothing
            partial = (ahead or lead_heading) and bool(lex.more_items)
            count = j - i - 1
            if ((joined and count >= params.list_items_min
                    and (partial or count <= params.list_items_max)) or reach):
                colon = "" if unfinished else ("：" if lang == "ja" else ":")
                # items said at the least
                fewest = params.list_items_min if some or partial else j - i - 1
                said = ""
                for end in range(j, i + fewest, -1):
                    items = _join_items([x.strip() for x in lines[i + 1:end]], lang, lead,
                                        lex.more_items if end < j and partial else "")
                    candidate = (f"{lead}{colon}{items}" if lang == "ja"
                                 else f"{lead}{colon} {items}") + ("。" if lang == "ja" else ".")
                    if len(candidate) <= params.max_reply_chars(lang):  # one reply at most
                        # (items no voice can say, a wallet's address, leave the lines as
                        # they are)
                        said = candidate if speakable(candidate, lang) else ""
                        break
                if said:
                    out.append((said, i, ""))
                    i = j
                    continue
            each = _items_with_lead(lead, lines[i + 1:j], lang, lex, params)
            if each is not None:
                # too many items to say as one sentence: each is a sentence of its own with
                # the words that lead into it ("You:" ... "Served at Camp Lejeune ..." ->
                # "You served at Camp Lejeune ..."), so a question about one can hear it
                before, each_item = each
                out.extend((text, i, LEAD) for text in before)
                out.extend((text, i + 1 + k, ITEM) for k, text in enumerate(each_item))
                i = j
                continue
        out.append((_finished_clause(line, lang, lex), i, ""))
        i += 1
    return out


# A clause a list item states is this long at the least (a name or a label is shorter).
_CLAUSE_WORDS = 6


def _finished_clause(line: str, lang: str, lex: Lexicon) -> str:
    """A line with no sentence end that states something, a clause (`[answer] clause_words`:
    "You do not need to pay for TTP again when you create an account"), with its end: a
    bulleted note is said as the sentence it is; one of a list no reply could say whole
    ("The Servicemember died while on active duty, or") without the "or" that joined it. A
    question, a name, a label stay as they are."""
    said = _CONJUNCTION_END.sub("", line).rstrip(",; ")
    words = said.lower().split()
    if (len(words) < _CLAUSE_WORDS or _END_EN.search(said.rstrip("”’\")）"))
            or said.endswith((":", "：")) or URL.search(said)
            or opens_with(words, lex.interrogatives)
            or not set(words) & set(lex.clause_words)):
        return line
    return said + "."


def _points_ahead(line: str, lang: str, lex: Lexicon) -> bool:
    """The line's last sentence is finished and points at what follows it (`[answer] ahead`)."""
    if not line.endswith((".", "。")):
        return False
    last = sentences(line)
    return bool(last) and bool(lex.find(clean(last[-1]), lex.ahead))


def _leads_in(lead: str, lang: str, lex: Lexicon) -> bool:
    """A list's lead-in that its items finish: it stops unfinished ("... may"), or is one
    English word ("You:" and what you must be)."""
    return lex.sounds_unfinished(lead) or (lang != "ja" and len(lead.split()) < 2)


def _items_with_lead(lead: str, items: list[str], lang: str, lex: Lexicon,
                     params: AnswerParams) -> tuple[list[str], list[str]] | None:
    """A long list's items, each said with the unfinished end of its lead-in, and the lead's
    own finished sentences before them; None when the lead-in does not lead into its items."""
    parts = sentences(lead)
    if not parts or len(items) < params.list_items_min or not _leads_in(parts[-1], lang, lex):
        return None
    tail = parts[-1]
    end = "。" if lang == "ja" else "."
    said: list[str] = []
    for item in items:
        item = _CONJUNCTION_END.sub("", item.strip().rstrip("、,;；.。"))
        said.append(f"{tail}{item}{end}" if lang == "ja" else f"{tail} {lower_first(item)}{end}")
    return parts[:-1], said
