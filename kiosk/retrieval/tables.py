"""A table's rows as the sentences they stand for, so that a reply can say one: each data row
with its header's cells ("If you have 1 dependent and..." | "Your MAPR amount is:" over "You
qualify for Housebound benefits" | "$20,731" -> "If you have 1 dependent and you qualify for
Housebound benefits, your MAPR amount is $20,731."). Only tables whose header and rows are
all words: a grid of check marks, or a header with empty cells, stays as its cells. Pure."""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable
from html.parser import HTMLParser

from kiosk.text import SENTENCE_END_EN, SENTENCE_END_JA, lower_first

_HTML_TABLE = re.compile(r"<table\b.*?</table\s*>", re.S | re.I)
# A header cell that leads into its value ("If you have 1 dependent and...", "Your MAPR
# amount is:") is said with it; a name ("Status", 色) is said as "the status is ...".
_LEAD_IN_END = re.compile(r"(?:[:：…]|\.\.\.|\band|\bor|\bis|\bare)\s*$", re.I)
_TRAILING = re.compile(r"[\s:：…]+$|\.\.\.$")
CLAUSE_WORDS = 3  # an English cell of this many words says something of its own


def _clean(cell: str) -> str:
    """Symbols (check marks, coloured dots) are not words."""
    text = "".join(ch for ch in cell if unicodedata.category(ch) != "So")
    return " ".join(text.split())


def _is_japanese(text: str) -> bool:
    """Any Japanese in the row: its labels take は (名前はtext), however much of it is code
    (not `detect_lang`, whose share of letters reads "名前 visibility public home" as English)."""
    return any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" for ch in text)


def row_sentence(header: list[str], row: list[str]) -> str | None:
    """The row said with its header, or None when either is not all words."""
    header, row = [_clean(h) for h in header], [_clean(c) for c in row]
    if len(header) != len(row) or len(row) < 2 or not all(header) or not all(row):
        return None
    if not any(any(ch.isalpha() for ch in c) for c in row):
        return None  # numbers alone: a grid of figures wants its labels, not sentences
    ja = _is_japanese(" ".join(header + row))
    parts: list[str] = []
    for i, (head, cell) in enumerate(zip(header, row, strict=True)):
        lead_in = bool(_LEAD_IN_END.search(head))
        head = _TRAILING.sub("", head).strip()
        last = i == len(row) - 1
        if not last:
            cell = cell.rstrip("。." if ja else ".")
        if ja:
            joined = head + cell if head.endswith(("は", "が")) or lead_in else f"{head}は{cell}"
        elif lead_in:
            joined = f"{head} {lower_first(cell)}"
        elif len(cell.split()) >= CLAUSE_WORDS:
            joined = cell  # "If the Veteran died before 2001": its header only names it
        else:
            joined = f"the {lower_first(head)} is {lower_first(cell)}"
        parts.append(joined if ja or not parts else lower_first(joined))
    said = ("、" if ja else ", ").join(parts)
    if not ja:
        said = said[:1].upper() + said[1:]
    if not (SENTENCE_END_JA if ja else SENTENCE_END_EN).search(said):
        said += "。" if ja else "."
    return said


_FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_table_lines(lines: list[str], cell_text: Callable[[str], str]) -> list[str]:
    """The lines with every pipe table whose rows can be said replaced by its sentences, one a
    line (not inside a code fence); `cell_text` renders a cell's inline markdown."""
    out: list[str] = []
    i = 0
    fenced = False
    while i < len(lines):
        if _FENCE.match(lines[i]):
            fenced = not fenced
        elif (not fenced and i + 1 < len(lines) and "|" in lines[i]
                and _is_rule(lines[i + 1])):
            j = i + 2
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                j += 1
            header = [cell_text(c) for c in _cells(lines[i])]
            said = [row_sentence(header, [cell_text(c) for c in _cells(line)])
                    for line in lines[i + 2:j]]
            if said and all(s is not None for s in said):
                out.extend(s for s in said if s is not None)
                i = j
                continue
        out.append(lines[i])
        i += 1
    return out


def _is_rule(line: str) -> bool:
    cells = _cells(line)
    return bool(cells) and all(re.fullmatch(r"\s*:?-{3,}:?\s*", c) for c in cells)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


class _TableRows(HTMLParser):
    """Rows of one <table>: each a list of (cell text, is a header cell)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[tuple[str, bool]]] = []
        self._cell: list[str] | None = None
        self._header = False
        self.listing = False  # a cell holds a list
        self._items = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._end_cell()
            if not self.rows:
                self.rows.append([])
            self._cell, self._header, self._items = [], tag == "th", 0
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")
        elif tag == "li" and self._cell is not None:
            self._items += 1
            self.listing = self.listing or self._items > 1
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th", "tr"):
            self._end_cell()

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def _end_cell(self) -> None:
        if self._cell is not None and self.rows:
            self.rows[-1].append((" ".join("".join(self._cell).split()), self._header))
        self._cell = None


def html_table_sentences(table: str) -> list[str] | None:
    """The sentences of one <table> whose first row is its header (all <th>), or None. A cell
    that holds a list has many values, not one to say in a sentence (18F's service blueprint:
    "Website, Newspaper, Radio Ad" under a step)."""
    parser = _TableRows()
    parser.feed(table)
    parser.close()
    rows = [r for r in parser.rows if r]
    if len(rows) < 2 or not all(is_head for _, is_head in rows[0]) or parser.listing:
        return None
    header = [text for text, _ in rows[0]]
    said = [row_sentence(header, [text for text, _ in row]) for row in rows[1:]]
    if not all(s is not None for s in said):
        return None
    return [s for s in said if s is not None]


def html_tables_said(source: str, *, as_markdown: bool) -> str:
    """The source with each <table> that can be said replaced by its sentences: as lines in
    a markdown page, as paragraphs in an HTML page."""
    def said(match: re.Match[str]) -> str:
        sentences = html_table_sentences(match.group(0))
        if sentences is None:
            return match.group(0)
        if as_markdown:
            return "\n" + "\n".join(sentences) + "\n"
        return "".join(f"<p>{html.escape(s)}</p>" for s in sentences)
    return _HTML_TABLE.sub(said, source)
