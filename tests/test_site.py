from __future__ import annotations

from pathlib import Path

import pytest

from kiosk.answer.speakable import speakable
from kiosk.errors import SiteError
from kiosk.retrieval import site as site_mod
from kiosk.retrieval.html import parse_html
from kiosk.retrieval.markdown import parse_markdown
from kiosk.retrieval.sections import Page
from kiosk.retrieval.site import chunk_page, link_anchors, load_page, load_site, resolve_link


def test_markdown_front_matter_title_and_template_tags_are_not_text() -> None:
    title, sections = parse_markdown(
        "---\ntitle: \"Opening Hours\"\nlayout: page\n---\n"
        "# Heading One\nOpen {{ site.hours }} daily. {% include note.html %}\n\n"
        "## Closed\n- Mondays\n- [Holidays](holidays.md)\n\n```sql\nSELECT 1;\n```\n")
    assert title == "Opening Hours"
    text = "\n".join(s.text for s in sections)
    assert "layout" not in text and "site.hours" not in text and "include" not in text
    assert "Holidays" in text and "holidays.md" not in text
    assert [s.heading for s in sections] == ["Heading One", "Closed"]
    assert sections[1].code == "SELECT 1;" and "SELECT" not in sections[1].text


def test_a_line_that_is_one_link_is_searchable_and_marked_unsaid() -> None:
    """"[Find a medical center near you](/find-locations/)." is where to click, not an answer:
    its words stay in the text (a search finds the page by them), the section names it
    unsaid; a telephone link and a link inside a sentence are said."""
    _, sections = parse_markdown(
        "# Care\nTalk to your care team first.\n"
        "[Find a medical center near you](/find-locations/).\n"
        '<p><a href="/facilities/">Find your facility’s phone number</a>.</p>\n'
        "[Call 1-800-827-1000](tel:18008271000).\n"
        "See [the handbook](/handbook/) for your benefits.\n")
    text = sections[0].text
    assert "Find a medical center near you." in text
    assert sections[0].unsaid == ("Find a medical center near you.",
                                  "Find your facility’s phone number.")


def test_markup_inside_a_sentence_is_not_its_text() -> None:
    """18F's UX guide: a link whose words hold a bracketed note ("[GSA.gov]") had stayed raw
    markdown, URL and all, so the sentence that defines the PRA was never said; _emphasis_
    by underscores was read out as "_Tell me about ..._". A list item that is such a link
    alone is still only where to click."""
    _, sections = parse_markdown(
        "# Legal\n[The Paperwork Reduction Act [Digital.gov]](https://pra.digital.gov/) (PRA) "
        "is a law governing how federal agencies collect information.\n"
        "Example interview question: _Tell me about the last time you helped a patron._ "
        "Keep the snake_case_name. Open Settings &gt; Account.\n"
        "- [Annual report [PDF]](report.pdf)\n")
    text = sections[0].text
    assert "The Paperwork Reduction Act (PRA) is a law governing" in text
    assert "http" not in text and "Digital.gov" not in text
    assert "question: Tell me about the last time you helped a patron. Keep" in text
    assert "snake_case_name" in text
    assert "Open Settings > Account." in text  # an entity in prose is its character
    assert sections[0].unsaid == ("Annual report",)


def test_an_html_block_or_a_list_item_that_is_one_link_is_marked_unsaid() -> None:
    _, sections = parse_html(
        '<main><h1>Care</h1><p>Talk to your team.</p><p><a href="/x">Find a medical center '
        'near you</a>.</p><p>Call <a href="tel:18008271000">1-800-827-1000</a>.</p>'
        '<p>See <a href="/h">the handbook</a> for more.</p>'
        '<ul><li><a href="/kj">KJ method</a></li><li><a href="/lc">Lean coffee</a></li></ul>'
        "</main>")
    assert sections[0].unsaid == ("Find a medical center near you.", "KJ method",
                                  "Lean coffee")
    _, sections = parse_markdown("# Methods\nMethods include:\n- [KJ method](/kj/)\n"
                                 "- [Lean coffee](/lc/)\n- Interviews with users\n")
    assert sections[0].unsaid == ("KJ method", "Lean coffee")


def test_markdown_heading_attributes_escapes_and_code_spans_are_not_said_as_markup() -> None:
    """Seen on real documentation sites: "# Accessibility {#accessibility}" was a title said
    with its anchor, "\\#1" kept its backslash, and "`<textarea>` 内の補間は…" lost the element
    it is about to the tag stripper."""
    title, sections = parse_markdown(
        "# アクセシビリティー {#accessibility}\n基本的には \\#1 と同じ問題です。\n"
        "## Links {#links .small}\n`<textarea>` 内の補間は機能しません。\n"
        "Type \\*stars\\* and `v-model`, not <b>bold</b>.\n")
    assert title == "アクセシビリティー"
    assert [s.heading for s in sections] == ["アクセシビリティー", "Links"]
    assert sections[0].text == "基本的には #1 と同じ問題です。"
    assert sections[1].text == ("textarea 内の補間は機能しません。\n"
                                "Type *stars* and v-model, not bold.")


def test_a_paragraph_wrapped_by_hand_is_one_paragraph() -> None:
    """A source wrapped at 80 columns cuts sentences at its line ends: "If eligibility cannot
    be proven, the ticket can be converted" / "into a standard or business ticket." was said as
    "into a standard or business ticket.". Short lines (an address) end where they end."""
    _, sections = parse_markdown(
        "# Tickets\n"
        "Tickets may be subject to proof of eligibility. If eligibility cannot be proven,\n"
        "the ticket can be converted into a standard or business ticket.\n\n"
        "- Bring the application form to a funeral director or a regional office near\n"
        "  you, or to a post office.\n"
        "- Call ahead.\n\n"
        "Memorial Products Service (41B)\nDepartment of Veterans Affairs\n5109 Russell Road\n\n"
        "サーバーによっては、広告収入により運営費を賄っていることがあります。また、\n"
        "アドブロッカーは広告と関係のない機能を誤ってブロックすることがあります。\n\n"
        "For the details of refunds and how to ask for one, see the page about our\n"
        "[refund policy](/refunds/).\n\n"
        # wrapped wider than most: its next line starts in lower case
        "The Vysehrad station next to the venue on Line C of the Prague underground railway "
        "network, also provides convenient\n"
        "access by public transport from the city's airport.\n\n"
        "The Vysehrad station next to the venue on Line C of the Prague underground railway "
        "network is open every day\nVisitors can also walk.\n")
    assert sections[0].text.split("\n") == [
        "Tickets may be subject to proof of eligibility. If eligibility cannot be proven, "
        "the ticket can be converted into a standard or business ticket.",
        "Bring the application form to a funeral director or a regional office near you, "
        "or to a post office.",
        "Call ahead.",
        "Memorial Products Service (41B)", "Department of Veterans Affairs",
        "5109 Russell Road",
        "サーバーによっては、広告収入により運営費を賄っていることがあります。また、"
        "アドブロッカーは広告と関係のない機能を誤ってブロックすることがあります。",
        "For the details of refunds and how to ask for one, see the page about our "
        "refund policy.",
        "The Vysehrad station next to the venue on Line C of the Prague underground railway "
        "network, also provides convenient access by public transport from the city's airport.",
        "The Vysehrad station next to the venue on Line C of the Prague underground railway "
        "network is open every day", "Visitors can also walk.",
    ]
    assert sections[0].unsaid == ()


def test_markdown_title_falls_back_to_first_heading() -> None:
    assert parse_markdown("intro\n# The Title\nbody")[0] == "The Title"


def test_html_main_text_only_with_a_real_parser() -> None:
    title, sections = parse_html(
        "<html><head><title>Tickets</title><script>var x = '<p>no</p>';</script></head><body>"
        "<nav>Home | About</nav><main><h1>Admission</h1><p>Adults 1,200 yen.<br>Kids free."
        "<h2>Discounts</h2><p>Seniors &amp; students pay less.</main><footer>(c)</footer>")
    assert title == "Tickets"
    text = "\n".join(s.text for s in sections)
    assert "Home" not in text and "(c)" not in text and "var x" not in text
    assert "Seniors & students pay less." in text
    assert [s.heading for s in sections] == ["Admission", "Discounts"]


def test_html_without_main_keeps_body_and_uses_h1_when_no_title() -> None:
    title, sections = parse_html("<body><h1>Cafe</h1><p>Curry rice<p>Ice cream</body>")
    assert title == "Cafe"
    assert sections[0].text.splitlines() == ["Curry rice", "Ice cream"]


def test_page_ids_are_relative_with_forward_slashes(tmp_path: Path) -> None:
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "a-page.md").write_text("hello there", encoding="utf-8")
    pages, problems = load_site(tmp_path)
    assert [p.page_id for p in pages] == ["en/a-page.md"]
    assert pages[0].title == "a page"  # file stem when nothing else names it
    assert problems == []


def test_empty_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SiteError, match=r"no \.md or \.html pages"):
        load_site(tmp_path)


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SiteError, match="does not exist"):
        load_site(tmp_path / "nope")


def test_undecodable_page_is_reported_by_name_and_the_rest_load(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# Good\nfine text", encoding="utf-8")
    (tmp_path / "bad.md").write_bytes(b"# Bad\n\xff\xfe\x00broken")
    pages, problems = load_site(tmp_path)
    assert [p.page_id for p in pages] == ["good.md"]
    assert len(problems) == 1 and problems[0].path.endswith("bad.md")
    assert "UTF-8" in problems[0].message


def test_duplicate_ids_after_unicode_normalization_are_reported(tmp_path: Path) -> None:
    nfc, nfd = "caf\u00e9.md", "cafe\u0301.md"
    (tmp_path / nfc).write_text("one", encoding="utf-8")
    (tmp_path / nfd).write_text("two", encoding="utf-8")
    if len(list(tmp_path.iterdir())) < 2:
        pytest.skip("this filesystem folds the two names into one")
    pages, problems = load_site(tmp_path)
    assert len(pages) == 1
    assert any("duplicate page id" in p.message for p in problems)


def test_giant_page_is_cut_and_still_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(site_mod, "MAX_PAGE_CHARS", 1000)
    (tmp_path / "big.md").write_text("# Big\n" + "word. " * 5000, encoding="utf-8")
    page = load_page(tmp_path / "big.md", tmp_path)
    assert sum(len(s.text) for s in page.sections) <= 1000
    assert "big.md" in caplog.text


def test_chunks_follow_headings_and_length() -> None:
    body = "\n".join(f"Sentence number {i} is here." for i in range(100))
    _, sections = parse_markdown(f"# A\nshort\n# B\n{body}")
    page = Page("p.md", "P", "en", tuple(sections), "h")
    chunks = chunk_page(page)
    assert chunks[0].heading == "A" and chunks[0].text == "short"
    assert all(c.heading == "B" for c in chunks[1:]) and len(chunks) > 3
    assert all(len(c.text) <= site_mod.CHUNK_CHARS["en"] + 40 for c in chunks)


def test_page_without_text_still_has_one_chunk() -> None:
    page = Page("p.md", "Only Title", "en", (), "h")
    assert [c.text for c in chunk_page(page)] == ["Only Title"]


def test_front_matter_prose_is_text_but_link_cards_are_not() -> None:
    """A static site renders its `description` and its landing blocks (title + description);
    cards that link elsewhere describe other pages and stay out."""
    title, sections = parse_markdown(
        "---\ntitle: Dental Care\ndescription: Find out if you qualify for dental care.\n"
        "relatedlinks:\n  - heading: More\n    links:\n      - url: /eligibility/\n"
        "        title: Eligibility\n        description: Not sure if you qualify?\n"
        "features:\n  open:\n    title: Open\n    description: Anyone can run a server.\n"
        "---\n# Dental Care\nVA places you into a benefits class.\n")
    assert title == "Dental Care"
    texts = [s.text for s in sections]
    assert texts[0] == "Find out if you qualify for dental care."
    assert ("Open", "Anyone can run a server.") in [(s.heading, s.text) for s in sections]
    assert not any("Not sure" in t for t in texts)
    assert sections[-1].heading == "Dental Care"


def test_front_matter_fields_a_layout_renders_are_text() -> None:
    """A method card's layout renders its "what", "why" and "timeRequired" fields: a field
    that is a sentence is a section under the field's name, a short value with a number is
    said with its label; the generator's fields (layout, permalink, a date, a category) and a
    label that is no sentence ("Get Records") are not text."""
    title, sections = parse_markdown(
        "---\ntitle: KJ method\nlayout: card\npermalink: /discover/kj-method/\n"
        "category: Discover\nspoke: Get Records\nlastupdate: 2018-10-6\n"
        "description: A facilitated exercise in which participants vote.\n"
        "what: A facilitated exercise in which participants vote.\n"
        "why: To reach a consensus on priorities with a group of people.\n"
        "timeRequired: 1\u20132 hours\n---\n## How to do it\nGather four participants.\n")
    assert title == "KJ method"
    assert [(s.heading, s.text) for s in sections] == [
        ("", "A facilitated exercise in which participants vote."),
        ("Why", "To reach a consensus on priorities with a group of people."),
        ("Time required", "Time required: 1\u20132 hours"),
        ("How to do it", "Gather four participants.")]


def test_a_description_written_without_its_end_is_said_as_a_sentence() -> None:
    """A card's description is shown as a paragraph under its title, often written without a
    full stop ("A format for running a meeting without a predefined agenda"): it is a
    sentence, so that "we need to run a meeting without an agenda" can be answered with it. A
    label of a few words, a description the page's own heading repeats, and the description
    of a page of names (its label) are left as they are."""
    _title, sections = parse_markdown(
        "---\ntitle: Lean coffee\ndescription: A format for running a meeting without a "
        "predefined agenda\n---\n## How to do it\nVote on the topics.\n")
    assert sections[0].text == "A format for running a meeting without a predefined agenda."
    _title, sections = parse_markdown(
        "---\ntitle: Personas\ndescription: Misskeyの使い方をまとめたページ\n---\n本文です。\n")
    assert sections[0].text == "Misskeyの使い方をまとめたページ。"
    _title, sections = parse_markdown(
        "---\ndescription: Our team\n---\n## Members\nWe are four.\n")
    assert sections[0].text == "Our team"  # a label
    _title, sections = parse_markdown(
        "---\ndescription: 「Misskey」の商標登録が認められました\n---\n"
        "# NEWS: 「Misskey」の商標登録が認められました\n\n2023年7月12日に登録されました！\n")
    assert sections[0].text == "「Misskey」の商標登録が認められました"
    _title, sections = parse_markdown(
        "---\ndescription: Libraries for the API by language\n---\n## Python\n- MiPA\n"
        "- MiPAC\n## Go\n- go-misskey\n")
    assert sections[0].text == "Libraries for the API by language"


def test_a_landing_pages_components_written_in_front_matter_are_its_text() -> None:
    """Login.gov's "Who uses Login.gov?" keeps its body in front matter (`component: col1: |-
    ## Our partners ...`): "who else uses login dot gov" found a page whose partners were never
    read. Markdown in a component's field is text; a widget's one-line message and a link
    card are not."""
    _title, sections = parse_markdown(
        "---\ntitle: Who uses it?\ncomponent:\n  col1: |-\n    ## Our partners\n\n"
        "    Our partners offer services such as:\n\n    * Medicare\n\n    * Veterans "
        "benefits\nwidgets:\n  - root: status\n    loadingMessage: Checking your application "
        "status.\nrelated:\n  - url: /x/\n    text: |-\n      ## Elsewhere\n      * A link\n"
        "---\nBody text.\n")
    assert [(s.heading, s.text) for s in sections] == [
        ("Our partners", "Our partners offer services such as:\nMedicare\nVeterans benefits"),
        ("", "Body text.")]


def test_an_autolink_to_a_sites_home_is_said_by_its_name() -> None:
    """"Enter your email address at <https://secure.login.gov/>." was said "... at ." and
    "where do I check the right time" never heard time.gov. An address with a path stays
    one, and its sentence is not said (it was "Start at  now.")."""
    _title, sections = parse_markdown(
        "# A\nCheck the time at <https://time.gov>.\nSign in at <https://secure.login.gov/>."
        "\nStart at <https://secure.login.gov/sign_up/enter_email> now.\n")
    assert sections[0].text.splitlines() == [
        "Check the time at time.gov.", "Sign in at secure.login.gov.",
        "Start at https://secure.login.gov/sign_up/enter_email now."]
    assert speakable(sections[0].text.splitlines()[2], "en") is None


def test_a_length_of_time_with_what_it_covers_is_said_with_its_label() -> None:
    """A multivariate test's card: "timeRequired: 2–5 days of effort, 1–4 weeks elapsed
    through the testing period", too long for a short value, was never said, and "how long
    does one of those run" heard "Conduct the test for long enough". A date and its words
    stay unsaid."""
    _title, sections = parse_markdown(
        "---\ntitle: Multivariate testing\ntimeRequired: 2\u20135 days of effort, 1\u20134 "
        "weeks elapsed through the testing period\nplainlanguage: 11-02-16 certified in "
        "compliance with the Plain Writing Act\n---\nBody text.\n")
    assert [(s.heading, s.text) for s in sections] == [
        ("Time required", "Time required: 2\u20135 days of effort, 1\u20134 weeks elapsed "
                          "through the testing period"), ("", "Body text.")]


def test_a_spans_attribute_list_is_not_text() -> None:
    """Kramdown's "{:class=...}" after a link made "... a page like time.gov{:class=
    "usa-link--external"}." unspeakable (braces); the rendered page shows none of it."""
    _title, sections = parse_markdown(
        "# A\nCheck it on a page like [time.gov](https://time.gov){:class=\"usa-link\"}.\n"
        "{: .number-list}\n")
    assert sections[0].text == "Check it on a page like time.gov."


def test_a_task_lists_boxes_are_not_text() -> None:
    """A checklist's items ("- [ ] Remind your team ...") were said with their box: "[ ]
    Give the participant your full attention"."""
    _title, sections = parse_markdown(
        "# Checklist\n- [ ] Remind your team of the purpose.\n- [x] Test the recording.\n")
    assert sections[0].text == "Remind your team of the purpose.\nTest the recording."


def test_comments_styles_and_scripts_are_not_text_but_code_examples_stay_code() -> None:
    """A page's HTML comment, style sheet or script is never shown (18F's service blueprint
    said "@page { margin: 1in; }"); inside a code block the same markup is the example."""
    _title, sections = parse_markdown(
        "# A\n<!--\nA note to the editors.\n-->\nBody text.\n<style media=\"print\">\n"
        "@page {\n  margin: 1in;\n}\n</style>\n<script>\nvar x = 1;\n</script>\n"
        "```html\n<script setup>\nconst a = 1\n</script>\n<!-- kept -->\n```\n"
        "After the code.\n")
    assert [s.text for s in sections] == ["Body text.\nAfter the code."]
    assert sections[0].code == "<script setup>\nconst a = 1\n</script>\n<!-- kept -->"


def test_a_page_without_a_title_is_named_by_the_field_its_layout_shows() -> None:
    """Misskey Hub's contact FAQ: each entry names itself in "question:", no title, no
    heading; the page was known by its file name ("2.delete-account")."""
    title, _ = parse_markdown("---\nquestion: アカウントを削除したい\n---\n"
                              "お問い合わせ先をお間違えになられています。\n")
    assert title == "アカウントを削除したい"
    title, _ = parse_markdown("---\nquestion: Q\ntitle: Delete an account\n---\nBody.\n")
    assert title == "Delete an account"  # a title, where there is one, names the page
    # the field that names the page is no section of it as well (an English question ending
    # in "?" had become the title and a section headed "Question")
    title, sections = parse_markdown("---\nquestion: How do I delete my account for good?\n"
                                     "---\nGo to Settings and choose Delete.\n")
    assert title == "How do I delete my account for good?"
    assert [(s.heading, s.text) for s in sections] == [("", "Go to Settings and choose Delete.")]


def test_front_matter_that_is_not_yaml_is_only_skipped() -> None:
    title, sections = parse_markdown("---\ntitle: A\ndescription: [unclosed\n---\n# A\nBody.\n")
    assert title == "A" and [s.text for s in sections] == ["Body."]


@pytest.mark.parametrize("body", [b"\x00" * 400, bytes(range(1, 32)) * 20 + b"Welcome."])
def test_a_page_that_is_not_text_is_skipped_by_name(tmp_path: Path, body: bytes) -> None:
    (tmp_path / "good.md").write_text("# Cafe\nThe cafe serves curry.", encoding="utf-8")
    (tmp_path / "junk.md").write_bytes(body)
    pages, problems = load_site(tmp_path)
    assert [p.page_id for p in pages] == ["good.md"]
    assert len(problems) == 1 and "junk.md" in problems[0].path
    assert "not text" in problems[0].message and "remove it" in problems[0].message


def test_a_file_given_as_the_site_folder_is_named_as_a_file(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A\nB.", encoding="utf-8")
    with pytest.raises(SiteError, match="is a file, not a folder"):
        load_site(page)


def test_an_unreadable_sub_folder_is_reported_not_dropped(tmp_path: Path) -> None:
    """A sub-folder the service's user cannot read (copied in as another user, mode 700):
    its pages are missing, and the load says which folder and how to fix it. Run without the
    capabilities that let root read anything, so the permission check is the kernel's own."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "hours.md").write_text("# Hours\n\nWe open at nine every day.\n")
    closed = tmp_path / "staff"
    closed.mkdir()
    (closed / "parking.md").write_text("# Parking\n\nThe car park is behind the shop.\n")
    closed.chmod(0)
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to drop root's read-anything capability"
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    script = ("import json, sys\nfrom pathlib import Path\n"
              "from kiosk.retrieval.site import load_site\n"
              "pages, problems = load_site(Path(sys.argv[1]))\n"
              "print(json.dumps([[p.page_id for p in pages], [[q.path, q.message] "
              "for q in problems]]))\n")
    try:
        done = subprocess.run([*prefix, sys.executable, "-c", script, str(tmp_path)],
                              capture_output=True, text=True, check=True)
    finally:
        closed.chmod(0o755)
    pages, problems = json.loads(done.stdout)
    assert pages == ["open/hours.md"]
    assert problems == [[str(closed), problems[0][1]]]
    assert "cannot be read" in problems[0][1] and "chmod" in problems[0][1]


@pytest.mark.parametrize(("target", "page"), [
    ("/health-care/after-you-apply/", "health-care/after-you-apply.md"),  # served as a folder
    ("./libraries", "docs/api/libraries.md"),
    ("./streaming/index.md", "docs/api/streaming/index.md"),
    ("endpoints.html", "docs/api/endpoints.md"),  # published .html of a .md page
    ("../faq.md#accounts", "docs/faq.md"),
    ("/docs/api/?lang=ja", "docs/api/index.md"),
    ("https://example.org/docs/faq", None),  # another site
    ("tel:+18008271000", None),
    ("/find-locations/", None),  # not in the folder
])
def test_links_resolve_to_the_pages_they_lead_to(target: str, page: str | None) -> None:
    ids = frozenset({"health-care/after-you-apply.md", "docs/api/libraries.md",
                     "docs/api/streaming/index.md", "docs/api/endpoints.md", "docs/faq.md",
                     "docs/api/index.md"})
    from_page = "health-care/how-to-apply.md" if target.startswith("/health") else \
        "docs/api/index.md"
    assert resolve_link(target, from_page, ids) == page


def test_a_page_keeps_the_site_pages_it_links_to(tmp_path: Path) -> None:
    (tmp_path / "apply.md").write_text(
        "# Apply\nApply online. [What happens next](/after-you-apply/), "
        "[our office](https://example.org/office) and <a href=\"fees.html\">fees</a>.",
        encoding="utf-8")
    (tmp_path / "after-you-apply.md").write_text("# After you apply\nWe decide in 30 days.",
                                                 encoding="utf-8")
    (tmp_path / "fees.md").write_text("# Fees\nIt is free.", encoding="utf-8")
    pages = {p.page_id: p for p in load_site(tmp_path)[0]}
    assert pages["apply.md"].links == ("after-you-apply.md", "fees.md")
    assert pages["fees.md"].links == ()
    # each with the words it is said with, as the page's text gives them (another site's
    # link leads to no page)
    assert pages["apply.md"].anchors == (("What happens next", "after-you-apply.md"),
                                         ("fees", "fees.md"))


@pytest.mark.parametrize(("source", "anchors"), [
    ("See [the **guide**](guide.md) and ![a map](map.png).", [("the guide", "guide.md")]),
    ("<p>Read <a class=\"x\" href=\"/fees/\">our <b>fees</b></a>.</p>", [("our fees", "/fees/")]),
    ("作成方法は[こちらのドキュメント](../advanced/create-plugin.md)を参照してください。",
     [("こちらのドキュメント", "../advanced/create-plugin.md")]),
    # a bracketed note in a link's words is where the link goes, not a word of it
    ("[The Paperwork Reduction Act [Digital.gov]](https://pra.digital.gov/) (PRA) is a law.",
     [("The Paperwork Reduction Act", "https://pra.digital.gov/")]),
])
def test_a_links_words_are_kept_with_its_target(source: str,
                                                anchors: list[tuple[str, str]]) -> None:
    assert link_anchors(source) == anchors


def test_a_line_most_pages_repeat_is_the_sites_frame_and_left_out(tmp_path: Path) -> None:
    """An HTML site's "Was this page helpful?" outside any <footer> would match questions on
    every page alike; a line a few pages share (two exhibits' opening hours) is content."""
    frame = "<p>Was this page helpful? Tell us at the front desk.</p>"
    topics = ["dinosaurs", "planets", "volcanoes", "robots", "fossils", "rockets"]
    for i, topic in enumerate(topics):
        shared = "<p>Open daily from 10:00 to 17:00.</p>" if i < 2 else ""
        (tmp_path / f"{topic}.html").write_text(
            f"<html><title>{topic}</title><main><p>All about {topic}.</p>{shared}{frame}"
            "</main></html>", encoding="utf-8")
    pages, _ = load_site(tmp_path)
    texts = [s.text for p in pages for s in p.sections]
    assert not any("helpful" in t for t in texts)
    assert sum("Open daily" in t for t in texts) == 2
    assert all(any(f"All about {p.title}" in s.text for s in p.sections) for p in pages)
    # below FRAME_MIN_PAGES pages nothing is judged a frame
    few, _ = load_site(_copy_some(tmp_path, tmp_path.parent / "few", 4))
    assert all(any("helpful" in s.text for s in p.sections) for p in few)


def _copy_some(src: Path, dst: Path, count: int) -> Path:
    dst.mkdir()
    for path in sorted(src.glob("*.html"))[:count]:
        (dst / path.name).write_bytes(path.read_bytes())
    return dst


def test_an_mdx_page_is_a_page_and_its_module_lines_are_not_text(tmp_path: Path) -> None:
    """Docusaurus-style sites write .mdx: imports and exports are code, components' tags are
    markup, the prose between them is the page."""
    (tmp_path / "tickets.mdx").write_text(
        "---\ntitle: Tickets\n---\nimport Tabs from '@theme/Tabs';\nimport './custom.css';\n\n"
        "# Tickets\n\n<Tabs>\n<TabItem value=\"adult\">\n\nAdults pay 1,200 yen.\n\n</TabItem>\n"
        "</Tabs>\n\nexport const meta = {audience: 'all'};\n", encoding="utf-8")
    (tmp_path / "index.md").write_text("# Museum\nSee [tickets](tickets.mdx).", encoding="utf-8")
    pages, problems = load_site(tmp_path)
    assert not problems
    tickets = next(p for p in pages if p.page_id == "tickets.mdx")
    text = "\n".join(s.text for s in tickets.sections)
    assert text == "Adults pay 1,200 yen."
    assert next(p for p in pages if p.page_id == "index.md").links == ("tickets.mdx",)


def test_a_setext_heading_is_a_heading() -> None:
    """Misskey Hub's install guides underline their headings ("ユーザーの作成" / "-----"): the
    line was prose before, said as a list's item after "以下のコマンドで…", and the section
    under it had no heading to be found by; "=====" names the page as "#" does."""
    title, sections = parse_markdown(
        "Misskeyを手動で構築する\n=======\n\nこの記事では手動で構築します。\n\n"
        "ユーザーの作成\n-------\nユーザーを作ります。\n\n- an item\n---\nAfter a rule.\n")
    assert title == "Misskeyを手動で構築する"
    assert [(s.heading, s.text) for s in sections] == [
        ("Misskeyを手動で構築する", "この記事では手動で構築します。"),
        # a list item's line before "---" is no heading: the rule is a thematic break
        ("ユーザーの作成", "ユーザーを作ります。\nan item\nAfter a rule.")]


def test_a_box_is_a_titled_part_of_its_section() -> None:
    """`::: warning` opens a box the rendered page titles "Warning" (注意 on a Japanese page),
    `::: details More` and Docusaurus `:::tip[Handy]` carry their own titles, nested boxes
    too; `:::` closes the box. A GitHub alert ends with its quote, a MkDocs admonition with
    its indented lines. The box's lines stay in their section (searched with it) and its
    chunk names its sentences with the box's title; markup is no text."""
    _, sections = parse_markdown(
        "# Cache\nOpen the settings.\n::: warning\nNot the browser's cache. Really.\n:::\n"
        "It reloads.\n:::tip[Handy]\nOutside.\n::: details More about it\nInside.\n:::\n"
        "Outside again.\n:::\n## Next\nDone.\n")
    assert [s.heading for s in sections] == ["Cache", "Next"]
    assert sections[0].text.splitlines() == [
        "Open the settings.", "Not the browser's cache. Really.", "It reloads.", "Outside.",
        "Inside.", "Outside again."]
    assert sections[0].boxed == (("Not the browser's cache. Really.", "Warning"),
                                 ("Outside.", "Handy"), ("Inside.", "More about it"),
                                 ("Outside again.", "Handy"))
    assert sections[1].boxed == ()
    chunk = chunk_page(Page("p", "Cache", "en", tuple(sections), "h"))[0]
    assert chunk.boxed[:2] == (("Not the browser's cache.", "Warning"), ("Really.", "Warning"))
    _, ja = parse_markdown("# キャッシュ\n設定を開きます。\n::: warning\n"
                           "ブラウザのキャッシュではありません。\n:::\n"
                           "::: custom\n独自の囲み。\n:::\n")
    assert ja[0].boxed == (("ブラウザのキャッシュではありません。", "注意"),)
    assert "::" not in ja[0].text and "独自の囲み。" in ja[0].text
    _, alerts = parse_markdown(
        "# Cache\nOpen it.\n> [!WARNING]\n> Not the browser's.\n\nAfter.\n"
        '!!! tip "Handy"\n    Inside.\n\n    Still inside.\n## Next\nDone.\n')
    assert alerts[0].text.splitlines() == [
        "Open it.", "Not the browser's.", "After.", "Inside.", "Still inside."]
    assert alerts[0].boxed == (("Not the browser's.", "Warning"), ("Inside.", "Handy"),
                               ("Still inside.", "Handy"))
    assert [s.heading for s in alerts] == ["Cache", "Next"]


def test_a_box_a_site_generator_rendered_is_a_titled_part_of_its_section() -> None:
    """The HTML of those boxes: VitePress's `custom-block` (its title only names the kind, so
    it is said in the theme's words, 注意 on a Japanese page), Docusaurus's admonition (the
    icon is no text), MkDocs, a GitHub alert, a `<details>` box with its summary, a Bootstrap
    alert that names only its kind, a USWDS alert (its h4 heads a section, as a heading does
    anywhere). The title is no line of the page; the box's lines stay in their section; a
    box without a kind or title is text, and so is a plain `<details>` (a FAQ's accordion:
    the question is a line, searched with its answer)."""
    _, vitepress = parse_html(
        '<main><h1>Cache</h1><p>Open the settings.</p><div class="warning custom-block">'
        '<p class="custom-block-title">WARNING</p><p>Not the browser\'s cache.</p></div>'
        "<p>It reloads.</p></main>")
    assert [(s.heading, s.text.splitlines(), s.boxed) for s in vitepress] == [
        ("Cache", ["Open the settings.", "Not the browser's cache.", "It reloads."],
         (("Not the browser's cache.", "Warning"),))]
    _, docusaurus = parse_html(
        '<article><h2>Install</h2><p>Run it.</p><div class="theme-admonition '
        'theme-admonition-tip admonition_xJq3 alert alert--success"><div class='
        '"admonitionHeading_Gvgb"><span class="admonitionIcon_Rf37"><svg><path d="M1"/></svg>'
        '</span>Handy</div><div class="admonitionContent_BuS1"><p>Use npm.</p><p>Or pnpm.</p>'
        "</div></div><p>Done.</p></article>")
    assert docusaurus[0].text.splitlines() == ["Run it.", "Use npm.", "Or pnpm.", "Done."]
    assert docusaurus[0].boxed == (("Use npm.", "Handy"), ("Or pnpm.", "Handy"))
    _, others = parse_html(
        '<h2>Keeping</h2><div class="admonition note"><p class="admonition-title">Read this</p>'
        '<p>Keep it.</p></div><div class="markdown-alert markdown-alert-important"><p class='
        '"markdown-alert-title"><svg></svg>Important</p><p>Back up first.</p></div>'
        '<details class="details custom-block"><summary>More about it</summary><p>Inside.</p>'
        '</details><div class="alert alert-danger" role="alert">Do not unplug it.</div>'
        '<div class="usa-alert usa-alert-warning"><div class="usa-alert-body"><h4 class='
        '"usa-alert-heading">Need help now?</h4><p>Call us.</p></div></div>'
        '<div class="callout">Plain words.</div><details><summary>Can I bring my dog?</summary>'
        "<p>Yes, on a leash.</p></details><p>After.</p>")
    assert [s.heading for s in others] == ["Keeping", "Need help now?"]
    assert others[0].boxed == (
        ("Keep it.", "Read this"), ("Back up first.", "Important"), ("Inside.", "More about it"),
        ("Do not unplug it.", "Danger"))
    assert others[1].boxed == (("Call us.", "Warning"),)
    assert others[1].text.splitlines() == [
        "Call us.", "Plain words.", "Can I bring my dog?", "Yes, on a leash.", "After."]
    _, ja = parse_html(
        '<main><h1>キャッシュ</h1><p>設定を開きます。</p><div class="warning custom-block">'
        '<p class="custom-block-title">WARNING</p><p>ブラウザのキャッシュではありません。</p>'
        "</div></main>")
    assert ja[0].boxed == (("ブラウザのキャッシュではありません。", "注意"),)
    assert "WARNING" not in ja[0].text


def test_a_front_matter_field_a_template_tag_shows_is_text_where_it_stands() -> None:
    """A Jekyll page keeps a list in its front matter and shows it with a tag (`{% include
    icon-list.html items=page.bring_list %}`): the items are the page's words under the heading
    the tag stands under, not metadata. A field that steers the generator (`page.lang`) is
    never text, and Kramdown's attribute lists (`{: .number-list}`) are styling."""
    title, sections = parse_markdown(
        "---\ntitle: Visiting the archive\nlang: en\nbring_list:\n"
        "  - __A photo ID.__ A passport or a driver's license.\n"
        "  - Your reader's card number.\n"
        "intro: Researchers may visit the reading room on weekdays from 9:30.\n"
        "cards:\n  - title: Hours\n    url: /hours/\n"
        "---\n\n{{ page.intro }}\n\n"
        "## What do I bring?\n\n"
        "{% include components/icon-list.html items=page.bring_list size='md' %}\n\n"
        "## Steps\n\n{: .number-list}\n\n1. Sign the visitors' book.\n\n"
        "2. Leave bags in a locker. {{ page.lang }}\n\n"
        "{% for card in page.cards %}{{ card.title }}{% endfor %}\n")
    assert title == "Visiting the archive"
    by_heading = {s.heading: s.text for s in sections}
    assert by_heading[""] == "Researchers may visit the reading room on weekdays from 9:30."
    assert by_heading["What do I bring?"].splitlines() == [
        "A photo ID. A passport or a driver's license.", "Your reader's card number."]
    steps = by_heading["Steps"]
    assert steps.splitlines() == ["Sign the visitors' book.", "Leave bags in a locker."]
    text = "\n".join(s.text for s in sections)
    assert "{:" not in text and "Hours" not in text  # a link card describes another page
    assert text.count("Researchers may visit") == 1  # shown in place, not also as a field


def test_a_picture_alone_on_its_line_is_searched_but_not_said() -> None:
    """A picture's alt text says what a reader sees: a search finds it, a reply leaves it
    out ("Illustration of a passport ..." said aloud describes nothing the listener sees). A
    picture inside a sentence keeps its words there."""
    _, sections = parse_markdown(
        "# Passports\n\n![Illustration of a passport with a green checkmark. ](/p.png \"x\")\n\n"
        "We now accept passports. Look for the ![green](/g.png) mark.\n")
    assert sections[0].text.splitlines() == [
        "Illustration of a passport with a green checkmark.",
        "We now accept passports. Look for the green mark."]
    assert sections[0].unsaid == ("Illustration of a passport with a green checkmark.",)
