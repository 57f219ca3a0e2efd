"""U11 verify and U12 deliver (pipeline/stages/verify.py, pipeline/stages/deliver.py): a citation must name
an article from the assembled evidence; the ones that do not are never delivered."""

from __future__ import annotations

import pytest

from legaltext.citations import find_citations
from pipeline.contracts import AssembledPrompt, Citation, CoverageGap, Draft, LawSourceRef, SupportLevel
from pipeline.coverage import WEAK_SUPPORT_NOTE
from pipeline.stages.deliver import REMOVED, deliver
from pipeline.stages.verify import verify

LABELS = {"КЗпП": "322-08", "Закон «Про відпустки»": "504/96-ВР", "ЦК": "435-15"}
EVIDENCE = ("КЗпП ст. 75", "Закон «Про відпустки» ст. 6")
PROMPT = AssembledPrompt(meta={"mode": "law"}, budget={"law_chars": 0},
                         law_source_refs=[LawSourceRef(article_ref=ref, r2_key=f"k{i}", score=0.9)
                                        for i, ref in enumerate(EVIDENCE)])
GAP = CoverageGap(reason="ACT_FOUND_IN_CATALOG_NOT_INDEXED", acts=[{"nreg": "504/96-ВР", "title": "Про відпустки"}])


def draft(text: str) -> Draft:
    cites = [Citation(article_ref=c.article_ref, act_nreg=c.act_nreg, article=c.article)
             for c in find_citations(text, LABELS)]
    return Draft(text=text, citations=cites, provider="offline", model="offline-extractive-1", attempt=1)


VERIFY_CASES = [
    pytest.param("Відпустка — 24 дні (КЗпП ст. 75; Закон «Про відпустки» ст. 6).", None, "complete",
                 {"КЗпП ст. 75": "supported", "Закон «Про відпустки» ст. 6": "supported"}, id="only-evidence-cited"),
    pytest.param("Відпустка — 24 дні (КЗпП ст. 75), звільнення (КЗпП ст. 36).", None, "retry_write",
                 {"КЗпП ст. 75": "supported", "КЗпП ст. 36": "not_in_evidence"}, id="article-not-in-evidence"),
    pytest.param("Податкова знижка (ПКУ ст. 167), відпустка (КЗпП ст. 75).", None, "retry_write",
                 {"ПКУ ст. 167": "unknown_act", "КЗпП ст. 75": "supported"}, id="unknown-act"),
    pytest.param("Відпустка (Закон «Про відпустки» ст. 6).", GAP, "retry_write",
                 {"Закон «Про відпустки» ст. 6": "not_in_evidence"}, id="act-in-coverage-gap"),
    pytest.param("Відпустка триває 24 дні.", None, "retry_write", {}, id="cites-nothing-although-evidence-exists"),
]


@pytest.mark.parametrize(("text", "gap", "verdict", "statuses"), VERIFY_CASES)
def test_verify_checks_every_citation_against_the_evidence(text: str, gap: CoverageGap | None, verdict: str,
                                                           statuses: dict[str, str]) -> None:
    # when
    result = verify(draft(text), PROMPT, LABELS, gap)
    # then
    assert result.verdict == verdict
    assert {c.article_ref: c.status for c in result.citations} == statuses


def test_verify_notes_a_draft_that_cites_nothing() -> None:
    result = verify(draft("Відпустка триває 24 дні."), PROMPT, LABELS, None)
    assert result.notes == ["draft cites nothing although evidence exists"]


def test_verify_accepts_a_draft_without_citations_when_there_is_no_evidence() -> None:
    empty = AssembledPrompt(meta={}, budget={}, law_source_refs=[])
    assert verify(draft("У базі знань не знайдено норм."), empty, LABELS, None).verdict == "complete"


def test_verify_checks_a_repeated_citation_once() -> None:
    result = verify(draft("КЗпП ст. 36 і ще раз КЗпП ст. 36."), PROMPT, LABELS, None)
    assert [c.article_ref for c in result.citations] == ["КЗпП ст. 36"]


# --- U12 ----------------------------------------------------------------------------------------------------
MIXED = ("Відпустка — 24 дні (КЗпП ст. 75). Звільнення (КЗпП ст. 36) неможливе, див. також КЗпП ст. 36 "
         "та ПКУ ст. 167.")


def test_deliver_removes_unsupported_citations_from_text_and_list() -> None:
    # given a draft with one supported and two unsupported citations, as U11 verified it
    d = draft(MIXED)
    result = verify(d, PROMPT, LABELS, None)
    # when
    answer = deliver(d, result, LABELS, "strong", None)
    # then
    assert answer.removed_citations == ["КЗпП ст. 36", "ПКУ ст. 167"]
    assert [c.article_ref for c in answer.citations] == ["КЗпП ст. 75"]
    assert "КЗпП ст. 75" in answer.text
    assert answer.text.count(REMOVED) == 3


def test_deliver_never_leaves_a_removed_citation_in_the_text() -> None:
    d = draft(MIXED)
    answer = deliver(d, verify(d, PROMPT, LABELS, None), LABELS, "strong", None)
    left = {c.article_ref for c in find_citations(answer.text, LABELS)}
    assert left == {"КЗпП ст. 75"}
    for removed in answer.removed_citations:
        assert removed not in answer.text
    assert "ст. 36" not in answer.text and "ст. 167" not in answer.text


@pytest.mark.parametrize(
    ("text", "given", "gap", "expected"),
    [
        pytest.param(MIXED, "strong", None, "partial", id="strong-downgraded-when-something-removed"),
        pytest.param(MIXED, "partial", None, "partial", id="partial-stays-partial"),
        pytest.param("Відпустка — 24 дні (КЗпП ст. 75).", "strong", None, "strong",
                     id="strong-kept-when-all-supported"),
        pytest.param("Звільнення (КЗпП ст. 36).", "strong", None, "none", id="nothing-left-no-gap-none"),
        pytest.param("Звільнення (КЗпП ст. 36).", "strong", GAP, "weak", id="nothing-left-with-gap-weak"),
    ],
)
def test_deliver_support_level_reflects_what_survived(text: str, given: SupportLevel, gap: CoverageGap | None,
                                                      expected: str) -> None:
    d = draft(text)
    answer = deliver(d, verify(d, PROMPT, LABELS, gap), LABELS, given, gap)
    assert answer.support_level == expected


def test_an_answer_from_weak_evidence_warns_before_its_quotes() -> None:
    # given the gate found the law far from the question (or the retries ran out): support weak, no declared gap
    d = draft(SILENT)
    answer = deliver(d, verify(d, PROMPT, LABELS, None), LABELS, "weak", None)
    # then the warning leads, the quote and its citation stand
    assert answer.text.startswith(WEAK_SUPPORT_NOTE) and answer.text.endswith(SILENT)
    assert answer.support_level == "weak" and [c.article_ref for c in answer.citations] == ["КЗпП ст. 75"]


def test_a_draft_that_opens_with_its_own_note_gets_no_second_one() -> None:
    # given a weakly supported draft that says why itself: the article the question names is not in the evidence
    own = "Зверніть увагу: статті під номером 999 (КЗпП) серед знайдених норм немає, тому нижче — лише пов'язані норми."
    d = draft(f"{own}\n\n{SILENT}")
    answer = deliver(d, verify(d, PROMPT, LABELS, None), LABELS, "weak", None)
    # then no second note stacks on it (it said the act was maybe missing from the base, which holds КЗпП)
    assert answer.text.startswith(own) and WEAK_SUPPORT_NOTE not in answer.text
    assert answer.support_level == "weak"


@pytest.mark.parametrize(("given", "gap"), [("partial", None), ("strong", None), ("weak", "gap")])
def test_only_weak_support_without_a_declared_gap_gets_the_warning(given: SupportLevel, gap: str | None) -> None:
    coverage = PKU_GAP if gap else None
    d = draft(SILENT + " Податкового кодексу України тут немає.")
    answer = deliver(d, verify(d, PROMPT, LABELS, coverage), LABELS, given, coverage)
    assert WEAK_SUPPORT_NOTE not in answer.text


def test_deliver_keeps_a_fully_supported_draft_unchanged() -> None:
    d = draft("Відпустка — 24 дні (КЗпП ст. 75; Закон «Про відпустки» ст. 6).")
    answer = deliver(d, verify(d, PROMPT, LABELS, None), LABELS, "strong", None)
    assert answer.text == d.text
    assert answer.citations == d.citations
    assert answer.removed_citations == []


# --- a declared coverage gap must be named (issue 13, item 7) ----------------------------------------------
PKU_GAP = CoverageGap(reason="ACT_FOUND_IN_CATALOG_NOT_INDEXED",
                      acts=[{"nreg": "2755-17", "title": "Податковий кодекс України"}])
SILENT = "Відпустка триває 24 дні (КЗпП ст. 75)."


def test_verify_sends_back_a_draft_that_leaves_a_declared_gap_out() -> None:
    # given the Tax Code is declared missing and the draft answers as if nothing were
    result = verify(draft(SILENT), PROMPT, LABELS, PKU_GAP)
    # then
    assert result.verdict == "retry_write"
    assert "coverage_gap_not_named: Податковий кодекс України" in result.notes
    assert {c.article_ref: c.status for c in result.citations} == {"КЗпП ст. 75": "supported"}


def test_verify_accepts_a_draft_that_names_the_gap_in_any_inflection() -> None:
    text = "Норм Податкового кодексу в базі знань немає. Відпустка триває 24 дні (КЗпП ст. 75)."
    assert verify(draft(text), PROMPT, LABELS, PKU_GAP).verdict == "complete"


def test_deliver_appends_the_gap_sentence_when_the_write_retries_are_spent() -> None:
    # given the last draft still leaves the gap out
    result = verify(draft(SILENT), PROMPT, LABELS, PKU_GAP)
    # when U12 delivers it anyway
    answer = deliver(draft(SILENT), result, LABELS, "strong", PKU_GAP)
    # then the answer names the missing act, once, after what the writer said
    assert answer.text.startswith(SILENT)
    assert answer.text.count("Податковий кодекс України") == 1 and "немає в базі знань" in answer.text
    assert [c.article_ref for c in answer.citations] == ["КЗпП ст. 75"]


def test_a_name_no_act_goes_by_is_not_called_a_missing_act() -> None:
    # given a name the catalog knows no act by («закон про подарунки» is a subject more often than a law)
    gap = CoverageGap(reason="ACT_NOT_FOUND_IN_CATALOG", acts=[{"nreg": "", "title": "закон про подарунки"}])
    answer = deliver(draft(SILENT), verify(draft(SILENT), PROMPT, LABELS, gap), LABELS, "partial", gap)
    # then the answer says no act goes by that name, not that the act exists and the base lacks it
    assert "акта з такою назвою (закон про подарунки) у каталозі актів не знайдено" in answer.text
    assert "немає в базі знань" not in answer.text


def test_deliver_adds_nothing_when_the_draft_named_the_gap() -> None:
    text = "Податкового кодексу в базі немає. Відпустка триває 24 дні (КЗпП ст. 75)."
    answer = deliver(draft(text), verify(draft(text), PROMPT, LABELS, PKU_GAP), LABELS, "strong", PKU_GAP)
    assert answer.text == text
