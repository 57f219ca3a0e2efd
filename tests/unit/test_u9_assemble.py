"""U9 assemble (assemble/u9.py, assemble/budgets.py): evidence → a bounded prompt context with provenance,
under an exact token budget, in the seed-000 shape."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from assemble import budgets
from assemble.prompt import SourceBlock, render_kb_context, render_source
from assemble.u9 import assemble_prompt, build_blocks
from llm.tokenizer import count_tokens
from pipeline.contracts import AssembledPrompt, CoverageGap, EvidenceAssembly, EvidenceItem, QueryProfile, SearchPlan

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
S1 = ("Щорічна основна відпустка надається працівникам тривалістю не менш як 24 календарних дні "
      "за відпрацьований робочий рік.")
S2 = "Особам віком до вісімнадцяти років надається щорічна основна відпустка тривалістю 31 календарний день."
S3 = "Підставами припинення трудового договору є угода сторін, закінчення строку або призов на службу."
SMALL_LAW_BUDGET = 400  # compact profile patched to 500 tokens; the law share of a "law" question is 0.8
PROFILE = QueryProfile(mode="law", law_only=True, complexity="simple")
PLAN = SearchPlan(steps=[], channels=["lldbi_chunks"], docs_probe=False)


def item(rank: int, ref: str, keys: list[str], heading: str | None = None) -> EvidenceItem:
    act, article = ref.rsplit(" ст. ", 1)
    return EvidenceItem(source="lldbi", rank=rank, score=round(1 - rank / 10, 2), act_nreg="322-08", act_label=act,
                        article=article, article_ref=ref, heading=heading, r2_keys=keys, channels=["dense"])


def assemble(items: list[EvidenceItem], texts: dict[str, str], gap: CoverageGap | None = None
             ) -> tuple[AssembledPrompt, list[SourceBlock]]:
    return assemble_prompt(evidence=EvidenceAssembly(items=items, support_level="strong"), profile=PROFILE,
                           plan=PLAN, texts=texts, load_warnings=[], budget_profile="compact",
                           tokenizer_id="o200k_base", count=count_tokens, now=NOW, coverage_gap=gap)


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setitem(budgets.PROFILE_TOKENS, "compact", 500)
    assert budgets.budget_for("compact", "law").law == SMALL_LAW_BUDGET
    return SMALL_LAW_BUDGET


# rank 1 fits whole; rank 2 is too long for what is left and gets cut; nothing useful fits for rank 3
TEXTS = {"k75": f"{S1} {S2}", "k74a": " ".join([S2] * 6), "k74b": " ".join([S1] * 6), "k36": " ".join([S3] * 4)}
ITEMS = [item(1, "КЗпП ст. 75", ["k75"], heading="Тривалість щорічної основної відпустки"),
         item(2, "КЗпП ст. 74", ["k74a", "k74b"]),
         item(3, "КЗпП ст. 36", ["k36"])]


def test_top_ranked_snippet_stays_whole_and_a_lower_one_is_cut_at_a_sentence_end(small_budget: int) -> None:
    # when
    prompt, blocks = assemble(ITEMS, TEXTS)
    # then
    whole, cut = prompt.snippets[0], prompt.snippets[1]
    assert (whole.article_ref, whole.truncated_to_chars) == ("КЗпП ст. 75", None)
    assert blocks[0].text == TEXTS["k75"]
    assert whole.tokens == count_tokens(render_source(blocks[0]))
    assert cut.article_ref == "КЗпП ст. 74"
    full = TEXTS["k74a"] + "\n" + TEXTS["k74b"]
    assert cut.truncated_to_chars is not None and 0 < cut.truncated_to_chars < len(full)
    assert blocks[1].text == full[: cut.truncated_to_chars]
    assert blocks[1].text.endswith(".") and full[cut.truncated_to_chars] in " \n"
    assert cut.tokens == count_tokens(render_source(blocks[1])) and cut.chars == len(blocks[1].text)


def test_a_snippet_is_dropped_with_a_warning_when_the_room_left_is_too_small(small_budget: int) -> None:
    prompt, blocks = assemble(ITEMS, TEXTS)
    assert "dropped_over_budget:КЗпП ст. 36" in prompt.meta.warnings
    assert [b.article_ref for b in blocks] == ["КЗпП ст. 75", "КЗпП ст. 74"]
    assert "КЗпП ст. 36" not in {r.article_ref for r in prompt.law_source_refs}


def test_included_snippets_never_exceed_the_room_law_has(small_budget: int) -> None:
    prompt, blocks = assemble(ITEMS, TEXTS)
    room = prompt.meta.channel_budget_tokens["law"]
    assert sum(s.tokens for s in prompt.snippets) <= room
    assert sum(count_tokens(render_source(b)) for b in blocks) <= room


# --- the budget split (issue 13, item 8; seed 000 "budget allocation … multi-signal weights") ---------------
def test_a_law_question_with_no_memory_or_history_gives_law_their_shares(small_budget: int) -> None:
    # given law evidence only: the memory (0.05) and history (0.15) shares of the 500-token envelope have nothing
    prompt, _ = assemble(ITEMS, TEXTS)
    # then law may spend the whole envelope, not its 0.8 share — and does
    assert prompt.meta.channel_budget_tokens == {"law": 500, "memory": 0, "doc": 0, "history": 0}
    assert prompt.meta.budget_tokens is not None
    assert prompt.meta.budget_tokens.law == small_budget  # the mode's own cap stays on record
    assert sum(s.tokens for s in prompt.snippets) > small_budget


def mixed_prompt(weights: dict[str, float]) -> AssembledPrompt:
    from assemble.budgets import AssembleConfig

    mixed = QueryProfile(mode="mixed", law_only=False, complexity="simple")
    memory = EvidenceItem(source="memory", rank=2, score=0.9, label="memory:1", heading="Факт", r2_keys=["m1"])
    evidence = EvidenceAssembly(items=[ITEMS[0], memory], support_level="strong")
    cfg = AssembleConfig.from_overrides(signal_weights=weights)
    prompt, _ = assemble_prompt(evidence=evidence, profile=mixed, plan=PLAN, texts={**TEXTS, "m1": S3},
                                load_warnings=[], budget_profile="standard", tokenizer_id="o200k_base",
                                count=count_tokens, now=NOW, config=cfg)
    return prompt


def test_the_signal_weights_split_an_unused_channels_share_between_the_channels_in_use() -> None:
    # given a mixed question with law and memory evidence, and no documents or history (0.3 + 0.1 of 8000 freed)
    by_prior = mixed_prompt({"prior": 1.0, "score": 0.0, "volume": 0.0, "explicit": 0.0})
    by_score = mixed_prompt({"prior": 0.0, "score": 1.0, "volume": 0.0, "explicit": 0.0})
    # then the freed 3200 tokens go to law and memory in proportion to their triage scores
    rooms = by_prior.meta.channel_budget_tokens
    assert rooms["doc"] == rooms["history"] == 0 and rooms["law"] + rooms["memory"] == 8000
    assert rooms == {"law": 4000 + 2667, "memory": 800 + 533, "doc": 0, "history": 0}  # priors 0.5 : 0.1
    # and other weights split it otherwise: the weights shape the budget, not only the order
    assert by_score.meta.channel_budget_tokens != rooms
    assert sum(by_score.meta.channel_budget_tokens.values()) == 8000


def test_an_evidence_item_without_stored_text_is_excluded_with_a_warning() -> None:
    # given a snippet key the store could not load
    items = [item(1, "КЗпП ст. 75", ["k75"]), item(2, "КЗпП ст. 76", ["k76-missing"])]
    # when
    prompt, blocks = assemble(items, {"k75": TEXTS["k75"]})
    # then
    assert prompt.meta.warnings == ["evidence_excluded:КЗпП ст. 76"]
    assert [b.article_ref for b in blocks] == ["КЗпП ст. 75"]


def test_output_keeps_the_seed_000_shape() -> None:
    # when
    prompt, _ = assemble(ITEMS, TEXTS)
    dumped = prompt.model_dump(by_alias=True)
    # then
    assert {"mode", "budget_profile", "total_tokens_est", "channels_used", "triage_model",
            "assembled_at"} <= set(dumped["meta"])
    assert dumped["meta"]["mode"] == "law" and dumped["meta"]["budget_profile"] == "compact"
    assert dumped["meta"]["channels_used"] == ["lldbi_chunks"]
    assert dumped["meta"]["assembled_at"] == NOW.isoformat()
    assert [set(r) for r in dumped["lawSourceRefs"]] == [{"article_ref", "r2_key", "score"}] * 3
    assert [(r["article_ref"], r["r2_key"], r["score"]) for r in dumped["lawSourceRefs"]] == [
        ("КЗпП ст. 75", "k75", 0.9), ("КЗпП ст. 74", "k74a", 0.8), ("КЗпП ст. 36", "k36", 0.7)]
    assert set(dumped["budget"]) == {"law_chars", "memory_chars", "doc_chars", "history_chars"}
    assert dumped["budget"]["law_chars"] == sum(s.chars for s in prompt.snippets)
    assert AssembledPrompt.model_validate(dumped) == prompt


@pytest.mark.parametrize("gap", [None, CoverageGap(reason="ACT_FOUND_IN_CATALOG_NOT_INDEXED",
                                                   acts=[{"nreg": "2755-17", "title": "Податковий кодекс України"}])],
                         ids=["no-gap", "with-coverage-gap"])
def test_total_tokens_est_is_the_exact_count_of_the_rendered_context(gap: CoverageGap | None) -> None:
    prompt, blocks = assemble(ITEMS, TEXTS, gap)
    assert prompt.meta.total_tokens_est == count_tokens(render_kb_context(blocks, gap))


def test_build_blocks_rebuilds_the_very_same_blocks_from_storage(small_budget: int) -> None:
    # given an assembly where one snippet was cut
    prompt, blocks = assemble(ITEMS, TEXTS)
    assert any(s.truncated_to_chars for s in prompt.snippets)
    # when U10 reloads the texts and rebuilds
    rebuilt = build_blocks(prompt.snippets, TEXTS)
    # then
    assert rebuilt == blocks
    assert render_kb_context(rebuilt) == render_kb_context(blocks)


def test_nothing_fits_nothing_is_claimed() -> None:
    prompt, blocks = assemble([], TEXTS)
    assert blocks == [] and prompt.law_source_refs == []
    assert prompt.meta.channels_used == []


@pytest.mark.parametrize(
    ("profile", "mode", "law"),
    [("compact", "law", 3200), ("standard", "law", 6400), ("standard", "mixed", 4000), ("extended", "memory", 4800),
     ("standard", "unknown-mode", 6400)],
)
def test_budget_share_follows_profile_and_mode(profile: str, mode: str, law: int) -> None:
    assert budgets.budget_for(profile, mode).law == law


def test_an_unknown_budget_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="U9_BUDGET_PROFILE"):
        budgets.budget_for("huge", "law")


def test_cut_text_ends_at_a_sentence_end_not_mid_sentence(small_budget: int) -> None:
    _, blocks = assemble(ITEMS, TEXTS)
    cut = blocks[1].text
    sentences = [s for s in re.split(r"(?<=[.;:!?])\s+|\n+", cut) if s]
    assert all(s in (S1, S2) for s in sentences)


def test_an_articles_chunks_are_joined_without_the_overlap_the_chunker_repeats() -> None:
    from assemble.u9 import snippet_text
    from knowledge.chunking import split_text
    from knowledge.text import words

    text = " ".join(f"Речення номер {i} про щорічну відпустку працівника та порядок її надання." for i in range(60))
    chunks = split_text(text, max_chars=400, overlap_chars=150)
    assert len(chunks) > 3 and any(chunks[0].endswith(chunks[1][:k]) for k in range(40, 200))  # overlap exists
    texts = {f"c{i}": c for i, c in enumerate(chunks)}
    joined = snippet_text(list(texts), texts)
    assert joined is not None and words(joined) == words(text)  # every word once, in order
    # chunks that are not neighbours (c0 and c2) share nothing and are joined as they are
    assert snippet_text(["c0", "c2"], texts) == f"{chunks[0]}\n{chunks[2]}"
