"""Tables said as sentences: each row with its header, only where both are words."""

from __future__ import annotations

from pathlib import Path

from kiosk.retrieval.site import load_page
from kiosk.retrieval.tables import html_table_sentences, markdown_table_lines, row_sentence


def test_a_header_that_leads_in_is_said_with_each_value() -> None:
    said = row_sentence(["If you have 1 dependent and…", "Your MAPR amount is:"],
                        ["You qualify for Housebound benefits", "$20,731"])
    assert said == ("If you have 1 dependent and you qualify for Housebound benefits, "
                    "your MAPR amount is $20,731.")


def test_a_header_that_names_a_column_is_said_as_what_the_value_is() -> None:
    said = row_sentence(["Status", "Maximum Burial Allowance"],
                        ["If the Veteran died before September 11, 2001", "$1,500"])
    assert said == ("If the Veteran died before September 11, 2001, "
                    "the maximum Burial Allowance is $1,500.")
    assert row_sentence(["色", "状態", "説明"], ["🟡黄", "アクティブ", "退席中の状態"]) == \
        "色は黄、状態はアクティブ、説明は退席中の状態。"


def test_a_grid_of_marks_or_a_header_with_gaps_stays_as_it_is() -> None:
    assert row_sentence(["", "Public", "Home"], ["Followers", "✔", "✔"]) is None
    assert row_sentence(["Timeline", "Public", "Home"], ["Followers", "✔", ""]) is None
    assert row_sentence(["Year", "Rate"], ["2018", "$9,078"]) is None  # figures alone
    lines = ["| a | b |", "| --- | --- |", "| x | ✔ |"]
    assert markdown_table_lines(lines, str) == lines


def test_pipe_tables_in_code_stay_code() -> None:
    lines = ["```", "| Name | Use |", "| --- | --- |", "| grep | search text |", "```"]
    assert markdown_table_lines(lines, str) == lines


def test_an_html_table_needs_a_header_row() -> None:
    table = ("<table><tr><th>Room</th><th>Floor</th></tr>"
             "<tr><td>The cafe</td><td>ground</td></tr></table>")
    assert html_table_sentences(table) == ["The room is the cafe, the floor is ground."]
    assert html_table_sentences(table.replace("th>", "td>")) is None


def test_a_table_whose_cells_hold_lists_is_not_said_as_sentences() -> None:
    """A service blueprint: a step's cell lists its touchpoints; one sentence per row ran them
    together ("..., website Newspaper Radio Ad Address search, parking Lot Building")."""
    table = ("<table><tr><th>Layer</th><th>Order</th><th>Eat</th></tr>"
             "<tr><th>Frontstage</th><td><ul><li>Website</li><li>Radio Ad</li></ul></td>"
             "<td><ul><li>Parking Lot</li><li>Lobby</li></ul></td></tr></table>")
    assert html_table_sentences(table) is None
    one = table.replace("<li>Radio Ad</li>", "").replace("<li>Lobby</li>", "")
    assert html_table_sentences(one) == [
        "The layer is frontstage, the order is website, the eat is parking Lot."]


def test_a_page_says_its_table_rows(tmp_path: Path) -> None:
    (tmp_path / "rates.md").write_text(
        "# Rates\n\n| If you have no dependents and… | Your rate is: |\n| --- | --- |\n"
        "| You qualify for Housebound benefits | $16,540 |\n\nRates change each year.\n",
        encoding="utf-8")
    (tmp_path / "status.html").write_text(
        "<html><body><main><h1>Status</h1><table><tr><th>色</th><th>状態</th></tr>"
        "<tr><td>🟢緑</td><td>オンライン</td></tr></table></main></body></html>",
        encoding="utf-8")
    md = load_page(tmp_path / "rates.md", tmp_path).sections[0].text.splitlines()
    assert md == ["If you have no dependents and you qualify for Housebound benefits, "
                  "your rate is $16,540.", "Rates change each year."]
    page = load_page(tmp_path / "status.html", tmp_path)
    assert "色は緑、状態はオンライン。" in page.sections[-1].text
