"""Citation parsing (legaltext/citations.py): the canonical "<act label> ст. <n>" form, known and unknown acts."""

from __future__ import annotations

import pytest

from legaltext.citations import find_citations

LABELS = {"КЗпП": "322-08", "Закон «Про відпустки»": "504/96-ВР", "ЦК": "435-15"}

CITATIONS = [
    pytest.param("Відпустка триває 24 дні (КЗпП ст. 75).", [("КЗпП ст. 75", "322-08", "75")], id="abbreviation"),
    pytest.param("Див. Закон «Про відпустки» ст. 6.", [("Закон «Про відпустки» ст. 6", "504/96-ВР", "6")],
                 id="zakon-pro-label"),
    pytest.param("Спрощений режим (КЗпП ст. 49-5).", [("КЗпП ст. 49-5", "322-08", "49-5")], id="hyphenated-article"),
    pytest.param("Право на працю (КЗпП ст. 2-1).", [("КЗпП ст. 2-1", "322-08", "2-1")], id="article-2-1"),
    pytest.param("Податкова знижка (ПКУ ст. 167).", [("ПКУ ст. 167", None, "167")], id="unknown-act-label"),
    pytest.param("Див. КЗпП ст.36", [("КЗпП ст. 36", "322-08", "36")], id="no-space-canonicalised"),
    pytest.param("Згідно з ЦК ст. 15 та КЗпП ст. 75.", [("ЦК ст. 15", "435-15", "15"), ("КЗпП ст. 75", "322-08", "75")],
                 id="two-in-order"),
    pytest.param("У питанні немає жодного посилання.", [], id="none"),
]


@pytest.mark.parametrize(("text", "expected"), CITATIONS)
def test_citations_are_found_with_their_act(text: str, expected: list[tuple[str, str | None, str]]) -> None:
    # when
    found = find_citations(text, LABELS)
    # then
    assert [(c.article_ref, c.act_nreg, c.article) for c in found] == expected


@pytest.mark.parametrize(
    ("text", "span"),
    [
        pytest.param("Відпустка триває 24 дні (КЗпП ст. 75).", "КЗпП ст. 75", id="abbreviation"),
        pytest.param("Див. Закон «Про відпустки» ст. 6.", "Закон «Про відпустки» ст. 6", id="zakon-pro-label"),
        pytest.param("Податкова знижка (ПКУ ст. 167).", "ПКУ ст. 167", id="unknown-act"),
        pytest.param("Див. КЗпП ст.36, далі текст", "КЗпП ст.36", id="no-space"),
    ],
)
def test_start_and_end_cover_exactly_the_citation_text(text: str, span: str) -> None:
    # when
    (found,) = find_citations(text, LABELS)
    # then
    assert text[found.start:found.end] == span


def test_the_longest_label_ending_before_the_article_wins() -> None:
    # given two labels where one is a suffix of the other
    labels = {"ПК": "2755-17", "ЦПК": "1618-15"}
    # when
    (found,) = find_citations("Строк апеляції (ЦПК ст. 354).", labels)
    # then
    assert (found.label, found.act_nreg) == ("ЦПК", "1618-15")


def test_a_quoted_law_title_that_is_not_in_the_labels_is_still_seen_as_a_citation_of_an_unknown_act():
    found = find_citations("Див. Закон «Про оплату праці» ст. 3.", {"КЗпП": "322-08"})

    assert [(c.label, c.article, c.act_nreg) for c in found] == [("Закон «Про оплату праці»", "3", None)]
