"""RunContext document (pipeline/document.py): typed sections, masking, resetting, corrupt sections."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.contracts import CitationCheck, Draft, GateDecision, VerifyResult
from pipeline.document import MASKED, apply, dump, read

DRAFT = Draft(text="Відпустка триває 24 дні (КЗпП ст. 75).", citations=[], provider="offline", model="m", attempt=1)
VERDICT = VerifyResult(verdict="complete", citations=[CitationCheck(article_ref="КЗпП ст. 75", status="supported")])


def test_written_section_reads_back_as_the_same_model() -> None:
    # given / when
    doc = apply({}, write={"draft": DRAFT})
    # then
    assert read(doc, "draft", Draft) == DRAFT
    assert doc["draft"] == dump(DRAFT)


def test_masking_hides_a_section_from_read_but_keeps_its_data() -> None:
    # given
    doc = apply({}, write={"draft": DRAFT, "verify_result": VERDICT})
    # when
    masked = apply(doc, mask=("draft",))
    # then
    assert read(masked, "draft", Draft) is None
    assert read(masked, "verify_result", VerifyResult) == VERDICT
    assert masked["draft"] == dump(DRAFT)  # stale, not deleted


def test_writing_a_masked_section_unmasks_it() -> None:
    # given
    doc = apply(apply({}, write={"draft": DRAFT}), mask=("draft",))
    rewritten = DRAFT.model_copy(update={"attempt": 2})
    # when
    doc = apply(doc, write={"draft": rewritten})
    # then
    assert read(doc, "draft", Draft) == rewritten
    assert "draft" not in doc[MASKED]


def test_reset_removes_the_section_and_its_mask() -> None:
    # given
    doc = apply(apply({}, write={"draft": DRAFT, "verify_result": VERDICT}), mask=("draft",))
    # when
    doc = apply(doc, reset=("draft", "verify_result"))
    # then
    assert "draft" not in doc and "verify_result" not in doc
    assert doc[MASKED] == []
    assert read(doc, "verify_result", VerifyResult) is None


def test_writing_none_removes_the_section() -> None:
    doc = apply(apply({}, write={"draft": DRAFT}), write={"draft": None})
    assert "draft" not in doc


def test_apply_returns_a_new_document_and_leaves_the_old_one_untouched() -> None:
    # given
    doc = apply({}, write={"draft": DRAFT})
    before = {k: (list(v) if isinstance(v, list) else v) for k, v in doc.items()}
    # when
    apply(doc, mask=("draft",), reset=("verify_result",), write={"verify_result": VERDICT})
    # then
    assert doc == before


def test_writing_an_unknown_section_is_refused() -> None:
    with pytest.raises(KeyError, match="unknown RunContext section"):
        apply({}, write={"scratchpad": DRAFT})


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param({"expand": "maybe", "reason": "no_hits", "support_level": "none"}, id="wrong-type"),
        pytest.param({"expand": True}, id="missing-fields"),
        pytest.param({"expand": False, "reason": "x", "support_level": "excellent"}, id="value-outside-literal"),
        pytest.param("not a mapping", id="not-a-mapping"),
        pytest.param([1, 2, 3], id="a-list"),
    ],
)
def test_corrupt_section_reads_as_none_instead_of_raising(raw: Any) -> None:
    # given
    doc = {"gate_decision": raw}
    # when / then
    assert read(doc, "gate_decision", GateDecision) is None


def test_absent_section_reads_as_none() -> None:
    assert read({}, "gate_decision", GateDecision) is None
