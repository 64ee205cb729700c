"""Markdown (.md / .mdx) -> title and titled sections of plain text: headings, lists, tables, boxes
(`::: warning`, `> [!NOTE]`, `!!! tip`), links said by their words, code left out."""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from functools import cache

from kiosk.retrieval.frontmatter import (
    SENTENCE_ENDS,
    fields_shown,
    finished,
    front_matter_date,
    front_matter_fields,
    front_matter_prose,
    front_matter_sections,
    front_matter_title,
)
from kiosk.retrieval.html import html_to_text
from kiosk.retrieval.sections import TEMPLATE_TAG, Section, box_title
from kiosk.retrieval.tables import html_tables_said, markdown_table_lines
from kiosk.text import detect_lang

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)


# MDX's module lines (import Tabs from '@theme/Tabs'; export const x = ...) are code.
_MODULE_LINE = re.compile(r"^(?:import\s.*\bfrom\s+['\"][^'\"]+['\"]|import\s+['\"][^'\"]+['\"]"
                          r"|export\s+(?:const|let|var|default|function)\b.*);?\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
# A line that is only a picture: its alt text says what the reader sees ("Illustration of a
# passport with a green checkmark"), found by a search but not said to a listener
_IMAGE_LINE = re.compile(r"^\s*(?:<p>)?\s*!\[[^\]]*\]\([^)]*\)\s*(?:</p>)?\s*$")


# (a link's text may hold one bracketed note, "[The Paperwork Reduction Act [Digital.gov]](…)",
# "[Annual report [PDF]](…)": the site's mark of where the link goes, not words of the text)
LINK_WORDS = r"(?:[^\[\]]|\[[^\[\]]*\])"


_LINK = re.compile(rf"\[({LINK_WORDS}*)\]\([^)]*\)")


LINK_NOTE = re.compile(r"\s*\[[^\[\]]*\]")


_REF_LINK = re.compile(r"\[([^\]]*)\]\[[^\]]*\]")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")
# _emphasis_ by single underscores, at word boundaries (never inside snake_case)
_UNDERSCORED = re.compile(r"(?<![\w\\])_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)")
# A heading's attribute block (Pandoc, kramdown, Hugo, VitePress: "## Links {#links}"): markup.
# A setext heading's underline: the paragraph line above it is a heading ("Setup" / "-----"
# level 2, "=====" level 1); Misskey Hub's install guides are written so.
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_HEADING_ATTRS = re.compile(r"\s*\{\s*[#.][^{}]*\}\s*$")
# Kramdown's attribute lists, `{: .number-list}` on a line of its own or after a block: styling
# for the generator, no words of the page.
_BLOCK_ATTRS = re.compile(r"[ \t]*\{:[^{}\n]*\}[ \t]*$", re.M)
# ... and a span's, right after a link or an emphasis ("[time.gov](https://time.gov){:class=
# "usa-link--external"}."): the rendered page shows neither
_SPAN_ATTRS = re.compile(r"(?<=[)\]*_])\{:[^{}\n]*\}")
# A backslash before ASCII punctuation is CommonMark's escape: the character as itself, kept
# out of the markup's way (a private-use stand-in) until the markup is gone.
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_STAND_IN = re.compile("[\ue000-\ue07f]")
# A code span: literal text, whatever it holds ("`<textarea>` 内の補間" names the element).
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_TAG_IN_CODE = re.compile(r"</?([A-Za-z][\w-]*)[^<>]*?/?>")
_AUTOLINK = re.compile(r"<https?://(?:www\.)?([\w.-]+\.[a-z]{2,})(/[^>\s]*)?>", re.I)
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")  # a task's box too
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
# A container (markdown-it / VitePress / VuePress `::: warning`, Docusaurus `:::tip[Title]`,
# MyST `:::{note}`) opens a box with its kind or its own title on top, and `:::` closes it:
# the box is a titled part of the page, under that title ("the warning here" finds it;
# `container_titles`).
_CONTAINER = re.compile(r"^\s*:{3,}\s*(?:\{?(?P<kind>[A-Za-z][\w-]*)\}?(?P<title>.*))?$")
# The same box as a GitHub alert ("> [!WARNING]", to the quote's end) and as a MkDocs
# admonition ('!!! warning "Title"', '??? note': its indented lines).
_ALERT = re.compile(r"^\s*>\s*\[!(?P<kind>[A-Za-z]+)\]\s*$")
_ADMONITION = re.compile(
    r'^(?:!!!|\?\?\?\+?)\s*(?P<kind>[A-Za-z][\w-]*)(?:\s+"(?P<title>[^"]*)")?\s*$')


# A line that is one link and its full stop ("[Find a medical center near you](/find-locations/).",
# "<a href=…>Find your facility's phone number</a>."): where to click next on a screen, not
# an answer to say. A telephone or mail link is how to reach someone: said.
_LINK_LINE = re.compile(
    rf"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:<p>)?\s*(?:\[{LINK_WORDS}+\]\((?P<md_to>[^)]*)\)|"
    r"<a\s[^>]*?href\s*=\s*[\"'](?P<a_to>[^\"']*)[\"'][^>]*>[^<]+</a>)"
    r"\s*[.。]?\s*(?:<br\s*/?>|</p>)*\s*$", re.I)


def _is_link_line(line: str) -> bool:
    match = _LINK_LINE.match(line)
    if match is None:
        return False
    target = (match.group("md_to") or match.group("a_to") or "").strip().lower()
    return not target.startswith(("tel:", "mailto:"))


def _code_span(match: re.Match[str]) -> str:
    """A code span's text, an HTML element in it said by its name ("`<textarea>`" ->
    "textarea"): the tag stripper after this would drop it, and the sentence around it with
    it would name nothing."""
    return _TAG_IN_CODE.sub(lambda m: m.group(1), match.group(2).strip())


def inline_markdown(line: str) -> str:
    line = _ESCAPED.sub(lambda m: chr(0xE000 + ord(m.group(1))), line)
    line = _CODE_SPAN.sub(_code_span, line)
    line = _IMAGE.sub(lambda m: m.group(1), line)
    line = _LINK.sub(lambda m: LINK_NOTE.sub("", m.group(1)), line)
    line = _REF_LINK.sub(lambda m: m.group(1), line)
    # an autolink to a site's home is said by its name ("visit <https://time.gov/>": "visit
    # time.gov"); one with a path stays the address it is, which no sentence is said with
    # (it was left out: "Enter your email address at  to begin.")
    line = _AUTOLINK.sub(
        lambda m: m.group(1) if (m.group(2) or "/") == "/" else m.group(0)[1:-1], line)
    if "<" in line and ">" in line:
        line = html_to_text(line)
    elif "&" in line:
        line = html.unescape(line)  # an entity in markdown prose ("Settings &gt; Account")
    line = _UNDERSCORED.sub(lambda m: m.group(1), line)
    line = _EMPHASIS.sub("", line)
    line = _LIST_MARK.sub("", line)
    if line.lstrip().startswith(">"):
        line = line.lstrip()[1:]
    if "|" in line:
        line = " ".join(cell.strip() for cell in line.strip().strip("|").split("|"))
    return _STAND_IN.sub(lambda m: chr(ord(m.group(0)) - 0xE000), line).strip()


_CJK_CHAR = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff01-\uff60]")
# A source line that starts a block of its own (an item, a quote, a table row, HTML or JSX):
# never the rest of the line before it.
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|>|\||<|:{3,}|#)")
# How a line that ends its sentence ends: a full stop (perhaps inside a closing bracket or
# quote), a colon or a semicolon.
_LINE_ENDS = re.compile(r"(?:[.!?。！？:：;；]|[.!?。！？][)\"”’」』）]*)$")


# A source wrapped by hand cuts its paragraphs at a column, 72-80 as a rule: a line that
# reaches that far without ending its sentence goes on in the next line. A shorter line ends
# where the author meant (an address, a label and its value: "5109 Russell Road"); a longer
# one is a paragraph of its own.
_WRAP_WIDTHS = (60, 100)


def _width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def _wraps(raw_line: str, said: str, *, wider: bool = False) -> bool:
    """Whether a paragraph's source line was cut by the author's wrap mid-sentence, so that
    the next source line goes on with it: it is as wide as a wrapped line is (`wider`: or
    wider still), has no end mark and no hard break (two spaces, a backslash), and is no
    line of HTML or JSX."""
    low, high = _WRAP_WIDTHS
    if not low <= _width(raw_line.rstrip()) <= (10**6 if wider else high):
        return False
    if raw_line.endswith(("  ", "\\")) or raw_line.lstrip().startswith(("<", "|")):
        return False
    return bool(said) and not _LINE_ENDS.search(said)


def _joined(before: str, after: str) -> str:
    """Two source lines of one paragraph as one: a space between words, none between two
    Japanese characters (a wrapped Japanese sentence has no space)."""
    if _CJK_CHAR.match(before[-1:]) and _CJK_CHAR.match(after[:1]):
        return before + after
    return f"{before} {after}"


# What a page holds but never shows: a comment, a style sheet, a script (outside code blocks,
# where `<script setup>` is an example to read).
_HIDDEN = re.compile(r"<!--.*?-->|<(style|script|template)\b[^>]*>.*?</\1\s*>", re.S | re.I)


def _hidden_out(source: str) -> str:
    blocks: list[list[str]] = [[]]
    in_fence = False
    for line in source.split("\n"):
        if _FENCE.match(line):
            if not in_fence:
                blocks.append([])
            blocks[-1].append(line)
            if in_fence:
                blocks.append([])
            in_fence = not in_fence
            continue
        blocks[-1].append(line)
    # blocks alternate: prose, fenced code, prose, ...
    return "\n".join(_HIDDEN.sub("", "\n".join(b)) if i % 2 == 0 else "\n".join(b)
                     for i, b in enumerate(blocks))


def _container_title(kind: str, title: str, lang: Callable[[], str]) -> str:
    """What a container's box says on top: its own title (`::: details More`, `:::tip[Hint]`)
    or its kind in the page's language (`::: warning` -> Warning / 注意)."""
    own = title.strip().removeprefix("[").removesuffix("]").strip()
    if own:
        return inline_markdown(own)
    return box_title(kind.lower(), "", lang)


def _box_ends(line: str, within: str) -> bool:
    """Whether this line is past a box whose lines start with `within`: an alert's quote ends
    at a line out of it, a blank one too; an admonition's indented lines at an unindented
    line of text. A container ("") ends only at its `:::`."""
    if within == ">":
        return not line.lstrip().startswith(">")
    if within:
        return bool(line.strip()) and not line.startswith((within, "\t"))
    return False


def markdown_date(source: str) -> str:
    """The day a Markdown post was published, from its front matter (`front_matter_date`)."""
    match = _FRONT_MATTER.match(source)
    return front_matter_date(match.group(1)) if match else ""


def parse_markdown(source: str, lang: str | None = None) -> tuple[str, list[Section]]:
    """A Markdown page's title and sections; `lang`: the page's language (by its text if not
    given), for what a container's box says on top."""
    page_source = source
    page_lang = cache(lambda: lang or detect_lang(page_source))
    title = ""
    rendered: list[Section] = []
    match = _FRONT_MATTER.match(source)
    shown: set[str] = set()
    if match:
        title = front_matter_title(match.group(1))
        source, shown = fields_shown(source[match.end():], TEMPLATE_TAG,
                                     front_matter_fields(match.group(1)))
        rendered = front_matter_sections(match.group(1), frozenset(shown))
        for text in front_matter_prose(match.group(1), frozenset(shown)):
            rendered += parse_markdown(text, lang)[1]
    source = _SPAN_ATTRS.sub("", _BLOCK_ATTRS.sub("", TEMPLATE_TAG.sub(" ", _hidden_out(source))))
    source = html_tables_said(source, as_markdown=True)
    sections: list[Section] = []
    heading = ""
    prose: list[str] = []
    code: list[str] = []
    links: list[str] = []
    in_fence = False
    # the open boxes, innermost last: what each says on top and what its lines start with
    # ("" for a container, which `:::` closes); the prose lines in a box, by position
    boxes: list[tuple[str, str]] = []
    boxed: dict[int, str] = {}

    def flush() -> None:
        text = "\n".join(p for p in prose if p)
        if text or code:
            sections.append(Section(heading, text, "\n".join(code), tuple(links), tuple(
                (prose[at], title) for at, title in boxed.items()
                if at < len(prose) and prose[at])))
        boxed.clear()

    # whether the last line of prose goes on in the next source line (a paragraph wrapped
    # in the source: "the ticket can be converted" / "into a standard ticket.")
    open_line = open_wide = False
    paragraph = False  # the line before was a paragraph's (a setext underline may follow)
    for raw_line in markdown_table_lines(source.splitlines(), inline_markdown):
        after_paragraph, paragraph = paragraph, False
        while boxes and not in_fence and _box_ends(raw_line, boxes[-1][1]):
            boxes.pop()
            open_line = open_wide = paragraph = after_paragraph = False
        setext = _SETEXT.match(raw_line)
        if setext and after_paragraph and prose:
            named = prose.pop()
            if links and links[-1] == named:
                links.pop()
            flush()
            prose, code, links = [], [], []
            open_line = open_wide = False
            heading = named
            if not title and setext.group(1).startswith("="):
                title = heading
            continue
        if _FENCE.match(raw_line):
            in_fence = not in_fence
            open_line = open_wide = False
            continue
        if in_fence:
            code.append(raw_line)
            continue
        head = _HEADING.match(raw_line)
        if head:
            flush()
            prose, code, links = [], [], []
            open_line = open_wide = False
            heading = inline_markdown(_HEADING_ATTRS.sub("", head.group(2)))
            if not title and len(head.group(1)) == 1:
                title = heading
            continue
        box = (_CONTAINER.match(raw_line) or _ALERT.match(raw_line)
               or _ADMONITION.match(raw_line))
        if box is not None:
            open_line = open_wide = False
            if box["kind"]:
                titled = _container_title(box["kind"], box.groupdict().get("title") or "",
                                          page_lang)
                boxes.append((titled or (boxes[-1][0] if boxes else ""),
                              "" if box.re is _CONTAINER else ">" if box.re is _ALERT
                              else "    "))
            elif boxes and not boxes[-1][1]:  # `:::` closes the innermost container
                boxes.pop()
            continue
        if (_TABLE_RULE.match(raw_line) or _MODULE_LINE.match(raw_line)
                or raw_line.lstrip().startswith(":::")):  # markup of a box of no kind
            open_line = open_wide = False
            continue
        link_line = _is_link_line(raw_line) or bool(_IMAGE_LINE.match(raw_line))
        # a trailing backslash is a hard line break
        line = inline_markdown(raw_line.rstrip().removesuffix("\\"))
        # (a line wrapped wider than most goes on where the next one starts in lower case:
        # "..., also provides convenient" / "access by public transport from ...")
        going_on = open_line or (open_wide and line[:1].islower() and line[:1].isascii())
        if line and going_on and not _BLOCK_START.match(raw_line):
            # (a link the wrap put at a line's start is in the sentence, not a line to click)
            prose[-1] = _joined(prose[-1], line)
            link_line = False
        elif line:
            prose.append(line)
            if link_line:
                links.append(line)
            if boxes and boxes[-1][0]:
                boxed[len(prose) - 1] = boxes[-1][0]
        paragraph = bool(line) and not _BLOCK_START.match(raw_line)
        open_line = bool(line) and not link_line and _wraps(raw_line, prose[-1] if prose else "")
        open_wide = bool(line) and not link_line and _wraps(raw_line, prose[-1] if prose else "",
                                                            wider=True)
    flush()
    if not title:
        for section in sections:
            if section.heading:
                title = section.heading
                break
    if rendered and not rendered[0].heading and any(
            SENTENCE_ENDS.search(s.text) for s in sections):
        # (the description: what the layout shows under the title; a page of names, a list
        # of libraries by language, is said by its names: its description is its label)
        said = finished(rendered[0].text, [title, *(s.heading for s in sections)])
        rendered[0] = replace(rendered[0], text=said)
    return title, rendered + sections
