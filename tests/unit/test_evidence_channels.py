"""U7 with the user's channels (pipeline/stages/evidence.py), the memory matcher, and how U9, the offline writer
and U11 treat a non-law source: rendered with its kind, quoted as the user's, never cited as law. Pure, no DB."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assemble.prompt import legacy_messages
from assemble.u9 import assemble_prompt
from llm.providers.offline import compose_answer
from llm.tokenizer import count_tokens
from memory.matching import match_memory
from pipeline.citations import find_citations
from pipeline.contracts import (
    AssembledPrompt,
    ChannelHit,
    Draft,
    EvidenceAssembly,
    Hit,
    QueryProfile,
    RawHits,
    SearchPlan,
    SpecialistProfile,
)
from pipeline.stages.evidence import assemble_evidence, channels_to_probe
from pipeline.stages.planning import plan_search
from pipeline.stages.reasoning import reason
from pipeline.stages.verify import verify

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
LAW_TEXT = "Щорічна основна відпустка надається працівникам тривалістю не менш як 24 календарних дні."
DOC_TEXT = ("Орендар сплачує штраф у розмірі 5 відсотків за кожен день прострочення оплати. "
            "Відповідно до ст. 625 ЦК України боржник сплачує три проценти річних.")
LABELS = {"КЗпП": "322-08", "ЦК України": "435-15"}


def law_hit(article: str, score: float, ordinal: int = 0) -> Hit:
    return Hit(chunk_key=f"322-08#st{article}#c{ordinal}", act_nreg="322-08", act_title="Кодекс законів про працю",
               act_label="КЗпП", article=article, article_ref=f"КЗпП ст. {article}", r2_key=f"law/{article}/{ordinal}",
               ordinal=ordinal, score=score, channel="lexical", step=0)


def doc_hit(n: int, score: float) -> ChannelHit:
    return ChannelHit(source="doc", label=f"doc:договір.txt#{n}", r2_key=f"docs/1/d/c{n - 1}.txt", score=score,
                      heading=f"Документ користувача «договір.txt», фрагмент {n}")


MEMORY = ChannelHit(source="memory", label="memory:ab12cd34", r2_key="memory/1/x.txt", score=0.5,
                    heading="Зі слів користувача (запам'ятований факт)")
HISTORY = ChannelHit(source="history", label="history:1", r2_key="history/1/r.txt", score=1.0,
                     heading="Попередній обмін у цій розмові")
HITS = RawHits(hits=[law_hit("75", 0.04), law_hit("74", 0.02), law_hit("75", 0.03, ordinal=1)])


def test_law_alone_ranks_as_before_with_its_own_scores() -> None:
    evidence = assemble_evidence(HITS, support_level="strong", max_items=8)
    assert [(i.source, i.article_ref, i.rank, i.score) for i in evidence.items] == [
        ("lldbi", "КЗпП ст. 75", 1, 0.04), ("lldbi", "КЗпП ст. 74", 2, 0.02)]
    assert evidence.items[0].r2_keys == ["law/75/0", "law/75/1"]


def test_a_mixed_question_puts_the_users_document_first_and_keeps_provenance() -> None:
    evidence = assemble_evidence(HITS, support_level="strong", max_items=8, mode="mixed",
                                 channel_hits=[doc_hit(1, 1.0), doc_hit(2, 0.4), MEMORY, HISTORY])
    order = [(i.rank, i.source, i.article_ref or i.label) for i in evidence.items]
    # doc 1.0×1.0, law 1.0×0.9, law 0.5×0.9, memory 0.5×0.7, history 1.0×0.5, doc 0.4×1.0
    assert order == [(1, "doc", "doc:договір.txt#1"), (2, "lldbi", "КЗпП ст. 75"), (3, "history", "history:1"),
                     (4, "lldbi", "КЗпП ст. 74"), (5, "doc", "doc:договір.txt#2"), (6, "memory", "memory:ab12cd34")]
    doc = evidence.items[0]
    assert (doc.article_ref, doc.act_nreg, doc.r2_keys) == (None, None, ["docs/1/d/c0.txt"])


def test_in_a_law_question_law_outranks_an_equally_strong_document() -> None:
    evidence = assemble_evidence(HITS, support_level="strong", max_items=8, mode="law", channel_hits=[doc_hit(1, 1.0)])
    assert [i.source for i in evidence.items] == ["lldbi", "doc", "lldbi"]


def test_without_law_support_is_none_even_with_a_document_and_u8_finds_no_norm() -> None:
    evidence = assemble_evidence(RawHits(), support_level="strong", max_items=8, mode="mixed",
                                 channel_hits=[doc_hit(1, 1.0)])
    assert evidence.support_level == "none" and [i.source for i in evidence.items] == ["doc"]
    assert reason(QueryProfile(mode="mixed", law_only=False, complexity="simple"), evidence).applicable_norms == []


def test_u8_takes_norms_only_from_law_even_when_documents_rank_higher() -> None:
    evidence = assemble_evidence(HITS, support_level="strong", max_items=8, mode="mixed",
                                 channel_hits=[doc_hit(n, 1.0) for n in range(1, 7)])
    norms = reason(QueryProfile(mode="mixed", law_only=False, complexity="simple"), evidence).applicable_norms
    assert [n.article_ref for n in norms] == ["КЗпП ст. 75", "КЗпП ст. 74"]


@pytest.mark.parametrize("mode, docs_probe, user, conversation, expected", [
    ("law", False, True, False, ()),
    ("mixed", True, True, False, ("doc", "memory")),
    ("memory", True, True, True, ("doc", "memory", "history")),
    ("mixed", True, False, False, ()),  # no end user: no memory, no documents
])
def test_channels_probed_follow_the_plan_the_mode_and_who_asks(mode: str, docs_probe: bool, user: bool,
                                                               conversation: bool, expected: tuple[str, ...]) -> None:
    profile = QueryProfile(mode=mode, law_only=mode == "law", complexity="simple")
    plan = plan_search(question="Що в моєму договорі про відпустку?", profile=profile, top_k=12,
                       previous_question="Скільки днів відпустки?" if conversation else None)
    plan = plan.model_copy(update={"docs_probe": docs_probe})
    assert channels_to_probe(profile, plan, has_user=user, has_conversation=conversation) == expected


# Seed 001: a law-only plan works with legislation chunks only. The one exception is a follow-up ("А для
# неповнолітніх?"): its words mean nothing without the previous turn, so the writer needs that turn to answer it.
@pytest.mark.parametrize("question, expected", [
    pytest.param("Скільки днів триває щорічна основна відпустка за законом України про відпустки?", (),
                 id="a-self-contained-law-question-in-a-conversation-takes-no-history"),
    pytest.param("А для неповнолітніх?", ("history",), id="a-follow-up-takes-the-previous-turn"),
])
def test_a_law_only_plan_takes_history_only_for_a_follow_up(question: str, expected: tuple[str, ...]) -> None:
    profile = QueryProfile(mode="law", law_only=True, complexity="simple")
    # when planning knows the conversation's previous question
    plan = plan_search(question=question, profile=profile, top_k=12,
                       previous_question="Скільки днів триває щорічна відпустка?")
    # then history is planned (or not) here, not decided after the fact in U7
    assert ("history" in plan.channels) == bool(expected)
    assert channels_to_probe(profile, plan, has_user=True, has_conversation=True) == expected


def test_memory_matching_finds_facts_sharing_meaningful_words_best_first() -> None:
    items = [("a", "Моя зарплата — 20 000 гривень на місяць."), ("b", "Я працюю бухгалтером з 2019 року."),
             ("c", "У мене двоє дітей.")]
    found = match_memory("Що я раніше казав про свою роботу бухгалтером і зарплату?", items, limit=5)
    assert {m.item_id for m in found} == {"a", "b"} and all(0 < m.score <= 1 for m in found)
    assert match_memory("Що я раніше казав?", items, limit=5) == []  # only "remember" words: nothing specific


def _prompt(evidence: EvidenceAssembly, texts: dict[str, str]) -> tuple[AssembledPrompt, list]:
    return assemble_prompt(evidence=evidence, profile=QueryProfile(mode="mixed", law_only=False, complexity="simple"),
                           plan=SearchPlan(steps=[], channels=[], docs_probe=True), texts=texts, load_warnings=[],
                           budget_profile="standard", tokenizer_id="o200k_base", count=count_tokens, now=NOW)


def test_u9_renders_a_doc_chunk_in_its_channel_with_its_kind_and_keeps_it_out_of_law_refs() -> None:
    evidence = assemble_evidence(RawHits(hits=[law_hit("75", 0.04)]), support_level="strong", max_items=8,
                                 mode="mixed", channel_hits=[doc_hit(1, 1.0)])
    prompt, blocks = _prompt(evidence, {"law/75/0": LAW_TEXT, "docs/1/d/c0.txt": DOC_TEXT})
    assert [(s.source, s.article_ref) for s in prompt.snippets] == [("lldbi", "КЗпП ст. 75"),
                                                                   ("doc", "doc:договір.txt#1")]
    assert [r.article_ref for r in prompt.law_source_refs] == ["КЗпП ст. 75"]
    assert prompt.budget.doc_chars == len(DOC_TEXT) and "docs" in prompt.meta.channels_used
    kb = legacy_messages(profile=SpecialistProfile(slug="x"), blocks=blocks, question="q")[1].content
    assert '<source ref="doc:договір.txt#1" kind="doc" r2_key="docs/1/d/c0.txt">' in kb
    assert '<source ref="КЗпП ст. 75" r2_key="law/75/0">' in kb  # law markup unchanged (golden files)


def test_the_offline_writer_quotes_the_document_as_the_users_and_cites_only_law() -> None:
    evidence = assemble_evidence(RawHits(hits=[law_hit("75", 0.04)]), support_level="strong", max_items=8,
                                 mode="mixed", channel_hits=[doc_hit(1, 1.0)])
    prompt, blocks = _prompt(evidence, {"law/75/0": LAW_TEXT, "docs/1/d/c0.txt": DOC_TEXT})
    messages = legacy_messages(profile=SpecialistProfile(slug="x"), blocks=blocks,
                               question="Який штраф за прострочення оплати в моєму договорі?")
    answer = compose_answer(messages)
    assert "З ваших матеріалів:" in answer and "штраф у розмірі 5 відсотків" in answer
    assert "Документ користувача «договір.txt», фрагмент 1" in answer
    assert "ст. 625" not in answer  # the contract's own pointer to a law outside the evidence is not repeated
    assert answer.rstrip().endswith("Підстави: КЗпП ст. 75.")
    cited = {c.article_ref for c in find_citations(answer, LABELS)}
    assert cited == {"КЗпП ст. 75"}
    draft = Draft(text=answer, citations=[], provider="offline", model="m", attempt=1)
    assert verify(draft, prompt, LABELS, None).verdict == "complete"


def test_with_only_a_document_the_writer_quotes_it_and_still_says_no_norm_was_found() -> None:
    evidence = assemble_evidence(RawHits(), support_level="strong", max_items=8, mode="mixed",
                                 channel_hits=[doc_hit(1, 1.0)])
    prompt, blocks = _prompt(evidence, {"docs/1/d/c0.txt": DOC_TEXT})
    answer = compose_answer(legacy_messages(profile=SpecialistProfile(slug="x"), blocks=blocks,
                                            question="Який штраф у моєму договорі?"))
    assert "штраф у розмірі 5 відсотків" in answer and "не знайдено норм" in answer
    assert prompt.law_source_refs == [] and "Підстави" not in answer


def test_the_layered_prompt_carries_the_document_in_its_kb_layer_once() -> None:
    from assemble.budgets import budget_for, layer_budgets
    from assemble.render import layered_prompt

    evidence = assemble_evidence(RawHits(hits=[law_hit("75", 0.04)]), support_level="strong", max_items=8,
                                 mode="mixed", channel_hits=[doc_hit(1, 1.0)])
    prompt, blocks = _prompt(evidence, {"law/75/0": LAW_TEXT, "docs/1/d/c0.txt": DOC_TEXT})
    budget = budget_for("standard", "mixed")
    wp = layered_prompt(profile=SpecialistProfile(slug="x", soul="Ти — юрист."), blocks=blocks,
                        question="Який штраф у моєму договорі?", coverage_gap=None, corrections=[],
                        total_tokens=budget.total_tokens, budgets=layer_budgets(budget.total_tokens,
                                                                                budget.evidence_tokens),
                        count=count_tokens, block_tokens=[s.tokens for s in prompt.snippets])
    system = wp.messages[0].content
    assert system.count('kind="doc"') == 1 and system.count("<source ") == 2
    assert "штраф у розмірі 5 відсотків" in compose_answer(wp.messages)


def test_two_records_of_one_article_number_keep_all_their_chunks_in_order() -> None:
    # an amending act's second "Стаття 114" is stored as 114~2: both records' first chunks are ordinal 0
    first, second = law_hit("114", 0.04), law_hit("114", 0.03)
    second = second.model_copy(update={"chunk_key": "322-08#st114~2#c0", "r2_key": "law/114~2/0"})
    later = law_hit("114", 0.02, ordinal=1)
    items = assemble_evidence(RawHits(hits=[second, later, first]), support_level="strong", max_items=5).items
    assert [i.r2_keys for i in items] == [["law/114/0", "law/114/1", "law/114~2/0"]]
