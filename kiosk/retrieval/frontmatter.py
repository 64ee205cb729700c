"""Front matter (YAML between --- lines): the title it gives a page, and the fields a layout
renders as prose (a description, a method card's "why"); the rest steers the generator."""

from __future__ import annotations

import datetime
import re

import yaml

from kiosk.retrieval.html import html_to_text
from kiosk.retrieval.sections import Section

# Where front matter names its page: the title, or for a page without one what its layout
# shows as such (an FAQ entry's "question: アカウントを削除したい", Hugo's "linkTitle").
_TITLE_FIELDS = ("title", "display_title", "linktitle", "heading", "question")


def _first_field(block: str, keys: tuple[str, ...]) -> str:
    """The value of the first of these top-level fields that the front matter gives, read
    line by line (no YAML parse: a page's block is parsed once, for its other fields)."""
    found: dict[str, str] = {}
    for line in block.splitlines():
        key, colon, value = line.partition(":")
        key = key.strip().lower()
        if colon and key in keys and key not in found and line[:1] not in " \t":
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            found[key] = value.strip()
    return next((found[k] for k in keys if found.get(k)), "")


def front_matter_title(block: str) -> str:
    return _first_field(block, _TITLE_FIELDS)


# Front-matter fields that date a post (a blog's, a news page's), first found first.
_DATE_FIELDS = ("date", "published", "pubdate", "publishdate", "created")
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


def _day(text: str) -> str:
    """YYYY-MM-DD if the text starts with a real day ("2021-13-45" is none), else ""."""
    match = _ISO_DATE.match(text)
    if match is None:
        return ""
    try:
        return datetime.date(*(int(part) for part in match.groups())).isoformat()
    except ValueError:
        return ""


def front_matter_date(block: str) -> str:
    """The day a post was published, YYYY-MM-DD, from its front matter ("" if none)."""
    return next((day for key in _DATE_FIELDS if (day := _day(_first_field(block, (key,))))),
                "")


def file_date(name: str) -> str:
    """The day a post's file name starts with ("2021-09-11-hello.md"), "" if none."""
    return _day(name)


# Front-matter fields that a static site renders as the page's own prose.
_TEXT_FIELDS = ("description", "summary", "excerpt", "lead", "intro", "subtitle", "tagline")
# A front-matter item with one of these is a link to another page (a card, a related link):
# its words describe that page, not this one.
_LINK_FIELDS = ("url", "href", "link", "links", "path", "to")


def front_matter_fields(block: str) -> dict[str, object]:
    """The front matter's fields ({} when it is not a YAML mapping)."""
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError:
        return {}
    return {str(k): v for k, v in data.items()} if isinstance(data, dict) else {}


# A template tag that shows a field of the page's own front matter where it stands: Liquid's
# `{{ page.intro }}`, `{% include icon-list.html items=page.bring_list %}`, `{% for x in
# page.steps %}` (Jekyll), Hugo's `.Params.intro`.
_FIELD_IN_TAG = re.compile(r"\b(?:page|Params)\.([A-Za-z_][\w-]*)")


def fields_shown(source: str, tag: re.Pattern[str], fields: dict[str, object]
                 ) -> tuple[str, set[str]]:
    """The body with each template tag that shows a front-matter field replaced by that field's
    text (a list as list items, each on its line), and the fields so shown. Fields that steer
    the generator are never text."""
    shown: set[str] = set()

    def lines(value: object) -> list[str]:
        if isinstance(value, str):
            return [value.strip()]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return [str(value)]
        if isinstance(value, list):
            out: list[str] = []
            for item in value:
                if isinstance(item, dict) and any(k in item for k in _LINK_FIELDS):
                    continue  # a link card describes another page
                said = [v for v in (item.values() if isinstance(item, dict) else [item])
                        if isinstance(v, str | int | float) and not isinstance(v, bool)]
                if said:
                    out.append("- " + " ".join(str(v).strip() for v in said))
            return out
        return []

    def replace(match: re.Match[str]) -> str:
        for key in _FIELD_IN_TAG.findall(match.group()):
            if key.lower() in _GENERATOR_FIELDS or key not in fields:
                continue
            said = lines(fields[key])
            if said:
                shown.add(key)
                return "\n\n" + "\n".join(said) + "\n\n"
        return " "

    return tag.sub(replace, source), shown


def front_matter_sections(block: str, shown: frozenset[str] = frozenset()) -> list[Section]:
    """The prose a page's front matter renders: its top-level description, and blocks with a
    title and a description (a landing page's feature list); link cards are left out, and so
    are the fields the body shows where it places them (`shown`)."""
    data = {k: v for k, v in front_matter_fields(block).items() if k not in shown}
    if not data:
        return []
    sections: list[Section] = []
    top = [html_to_text(value) for k in _TEXT_FIELDS if isinstance(value := data.get(k), str)]
    if any(top):
        sections.append(Section("", "\n".join(t for t in top if t)))

    def walk(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if any(k in node for k in _LINK_FIELDS):
                return
            text = node.get("description")
            if isinstance(text, str) and isinstance(node.get("title"), str):
                sections.append(Section(html_to_text(node["title"]), html_to_text(text)))
            for value in node.values():
                walk(value)

    for key, value in data.items():
        if key not in _TEXT_FIELDS:
            walk(value)
    said = {s.text for s in sections}
    for key, value in data.items():
        field = _rendered_field(str(key), value)
        if field is not None and field.text not in said:
            sections.append(field)
            said.add(field.text)
    return [s for s in sections if s.text]


# Prose a sentence end would finish: four words, or nine characters of Japanese script.
_UNFINISHED_EN = re.compile(r"^(?:\S+\s+){3,}[\w)’'\"”]+$")
_UNFINISHED_JA = re.compile(r"^.*[\u3040-\u30ff\u4e00-\u9fff].{8,}$", re.S)
# A line that ends as a sentence does (perhaps inside a closing bracket or quote).
SENTENCE_ENDS = re.compile(r"[.!?。！？][\"”’)）」』]*$", re.M)


def finished(text: str, headings: list[str]) -> str:
    """A description as the layout shows it, a paragraph under the title: a sentence, even
    when written without its end ("A format for running a meeting without a predefined
    agenda"), so that it can be said. A label or a name (under four words) stays as it is,
    and so does a description the page's title or a heading repeats (a post's "NEWS: 「Misskey」の
    商標登録が認められました"): the visitor sees it there, it says nothing more."""
    text = text.strip()
    if (not text or "\n" in text or SENTENCE_ENDS.search(text)
            or any(text in h for h in headings)):
        return text
    if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text):
        return text + "。" if _UNFINISHED_JA.match(text) else text
    return text + "." if _UNFINISHED_EN.match(text) else text


# A Markdown block's start in a field's text: a heading or a list item.
_MARKDOWN_BLOCK = re.compile(r"(?m)^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s)")


def front_matter_prose(block: str, shown: frozenset[str] = frozenset()) -> list[str]:
    """The texts a landing page keeps in the fields of its front matter's components and a
    layout renders as its body (Login.gov's "Who uses Login.gov?": `component: col1: |- ##
    Our partners ...`): each string nested in a field that is no link card, written as
    Markdown (lines with a heading or a list), in page order. Fields of the top level are
    the description's and `_rendered_field`'s."""
    data = {k: v for k, v in front_matter_fields(block).items() if k not in shown}
    out: list[str] = []

    def prose(text: str) -> bool:
        # (a one-line string is a widget's message as often as text: "Checking your
        # application status.")
        text = text.strip()
        return "\n" in text and bool(_MARKDOWN_BLOCK.search(text))

    def walk(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if any(k in node for k in _LINK_FIELDS) or isinstance(node.get("description"), str):
                return  # a link card, or a titled block front_matter_sections says
            for key, value in node.items():
                if str(key).lower() in _GENERATOR_FIELDS or str(key).lower() in _TITLE_FIELDS:
                    continue
                if isinstance(value, str):
                    if prose(value):
                        out.append(value.strip())
                else:
                    walk(value)

    for key, value in data.items():
        if key.lower() not in _GENERATOR_FIELDS and not isinstance(value, str):
            walk(value)
    return out


# A page's own front-matter field a layout renders under its name (18F's method cards: "what",
# "why", "timeRequired"): a sentence, or a short value with a number ("1–2 hours"). Fields
# that steer the generator are never said, whatever their value.
_GENERATOR_FIELDS = frozenset({
    "title", "layout", "template", "permalink", "slug", "id", "type", "lang", "language",
    "locale", "date", "lastmod", "lastupdate", "updated", "published", "draft", "weight",
    "order", "image", "thumbnail", "icon", "cover", "banner", "hero", "author", "authors",
    "tags", "categories", "category", "keywords", "version", "collection", "hub", "spoke",
    "children", "parent", "body_class", "outline", "display_title", "heading", "aliases",
    "redirect_from", "redirect_to", "canonical", "sitemap", "toc", "sidebar", "nav", "menu"})
_SENTENCE_VALUE = re.compile(r"^(?:\S+\s+){3,}\S*[.!?]\s*$|"
                             r"^.*[\u3040-\u30ff\u4e00-\u9fff].{9,}[。！？]\s*$", re.S)
_SHORT_VALUE = re.compile(r"^(?=.*\d)(?=.*[^\W\d_])[^/@<>{}]{1,40}$")
# ... or a length of time with what it covers ("2–5 days of effort, 1–4 weeks elapsed
# through the testing period"): the layout shows it whole
_TIME_VALUE = re.compile(r"^\d+(?:\s?[–-]\s?\d+)?\s+(?:minutes?|hours?|days?|weeks?|months?|"
                         r"years?)\b[^/@<>{}]{0,100}$", re.I)


def _field_label(key: str) -> str:
    """"timeRequired" / "time_required" -> "Time required"."""
    words = re.sub(r"(?<=[a-z])(?=[A-Z])|[_-]+", " ", key).split()
    return " ".join(words).capitalize()


def _rendered_field(key: str, value: object) -> Section | None:
    # (a field that names the page is its title, not a section: an FAQ entry's "question")
    if not isinstance(value, str) or key.lower() in _GENERATOR_FIELDS \
            or key.lower() in _TEXT_FIELDS or key.lower() in _TITLE_FIELDS \
            or not re.fullmatch(r"[A-Za-z][\w-]*", key):
        return None
    text = html_to_text(value).strip()
    label = _field_label(key)
    if _SENTENCE_VALUE.search(text):
        return Section(label, text)
    if (_SHORT_VALUE.match(text) or _TIME_VALUE.match(text)) and "\n" not in text:
        return Section(label, f"{label}: {text}")
    return None
