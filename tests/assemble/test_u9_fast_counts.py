"""U9 counts each paragraph once (issue 15, item 5) and must still choose, cut and total exactly as counting every
text whole did: the hard-seam rule behind it (assemble/seams.py) on random text for both encodings, then U9 against
the frozen slow reference (u9_reference.py) on random candidates, budgets, channels and coverage gaps."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from assemble.budgets import AssembleConfig, layer_budgets
from assemble.prompt import SourceBlock, render_kb_context, render_source
from assemble.render import layered_prompt
from assemble.seams import PieceCounter, hard_pieces
from assemble.u9 import assemble_prompt
from llm.tokenizer import count_tokens, get_encoding
from pipeline.contracts import (
    CoverageGap,
    EvidenceAssembly,
    EvidenceItem,
    QueryProfile,
    SearchPlan,
    SpecialistProfile,
)
from tests.assemble.u9_reference import assemble_prompt_reference

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
# Characters that decide where tiktoken's pieces end: newlines and other whitespace (a no-break space, a tab, a
# carriage return), "/" (o200k's punctuation piece swallows it after a newline), markup and punctuation, digits,
# an apostrophe (contractions), Latin and Cyrillic in both cases.
ALPHABET = "\n\n\n  \t\r\u00a0/<>&.;:!?,'\"-()0123456789aZbqЩщорічнавідпусткаТКЗпПєїґ"
TEXT = st.text(alphabet=ALPHABET, max_size=300)
ENCODINGS = ("o200k_base", "cl100k_base")


def counter(encoding: str) -> Callable[[str], int]:
    enc = get_encoding(encoding)
    return lambda text: len(enc.encode(text, disallowed_special=()))


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_a_text_counts_as_the_sum_of_its_hard_seam_pieces(encoding: str, text: str) -> None:
    count = counter(encoding)
    pieces = hard_pieces(text)
    assert "".join(pieces) == text
    assert sum(count(p) for p in pieces) == count(text)


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, limit=st.integers(min_value=0, max_value=120))
def test_at_most_is_the_exact_count_or_none_when_over_the_limit(encoding: str, text: str, limit: int) -> None:
    count = counter(encoding)
    exact = count(text)
    assert PieceCounter(count).at_most(text, limit) == (exact if exact <= limit else None)


def test_unicode_whitespace_is_whitespace_to_the_seam_rule_too() -> None:
    # the Unicode White_Space set tiktoken's \s matches: each must stop a hard seam in Python's \s as well
    white_space = [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F,
                   0x205F, 0x3000]
    for cp in white_space:
        assert hard_pieces(f"a\n{chr(cp)}b")[0] != "a\n", hex(cp)


SENTENCE = st.builds(lambda words, end: " ".join(words) + end,
                     st.lists(st.text(alphabet="абвгдеєжзиіїйклмнопрстуфхцчшщюяКЗП0123456789/<&'", min_size=1,
                                      max_size=9), min_size=1, max_size=14),
                     st.sampled_from([".", ";", ":", "!", "?", ",", ""]))
PARAGRAPH = st.builds(" ".join, st.lists(SENTENCE, min_size=1, max_size=5))
ARTICLE = st.builds(lambda paras, seps: "".join(p + s for p, s in zip(paras, seps, strict=False)).strip() or "x",
                    st.lists(PARAGRAPH, min_size=1, max_size=6),
                    st.lists(st.sampled_from(["\n", "\n\n", " \n", "\n ", "\n/"]), min_size=6, max_size=6))
SOURCES = ("lldbi", "lldbi", "memory", "doc", "history")


@st.composite
def candidates(draw: st.DrawFn) -> tuple[list[EvidenceItem], dict[str, str]]:
    n = draw(st.integers(min_value=1, max_value=7))
    items, texts = [], {}
    for rank in range(1, n + 1):
        source = draw(st.sampled_from(SOURCES))
        keys = [f"k{rank}-{j}" for j in range(draw(st.integers(min_value=1, max_value=2)))]
        for key in keys:
            if draw(st.integers(min_value=0, max_value=9)):  # now and then a key the store could not load
                texts[key] = draw(ARTICLE)
        heading = draw(st.one_of(st.none(), st.sampled_from(["Тривалість відпустки", " Заголовок", "<b>&"])))
        law = source == "lldbi"
        items.append(EvidenceItem(source=source, rank=rank, score=round(1 - rank / 10, 2), heading=heading,
                                  r2_keys=keys, label=None if law else f"{source}:{rank}",
                                  act_nreg="322-08" if law else None, act_label="КЗпП" if law else None,
                                  article=str(rank) if law else None, article_ref=f"КЗпП ст. {rank}" if law else None))
    return items, texts


GAP = CoverageGap(reason="ACT_FOUND_IN_CATALOG_NOT_INDEXED",
                  acts=[{"nreg": "2755-17", "title": "Податковий кодекс України"}])


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=candidates(), envelope=st.integers(min_value=40, max_value=900),
       mode=st.sampled_from(["law", "mixed", "memory"]), gap=st.sampled_from([None, GAP]))
def test_u9_chooses_cuts_and_totals_exactly_as_counting_every_text_whole(
        encoding: str, drawn: tuple[list[EvidenceItem], dict[str, str]], envelope: int, mode: str,
        gap: CoverageGap | None) -> None:
    # given random candidates over every channel, more or less text than the envelope holds
    items, texts = drawn
    count = counter(encoding)
    kwargs: dict[str, Any] = {"evidence": EvidenceAssembly(items=items, support_level="strong"),
              "profile": QueryProfile(mode=mode, law_only=mode == "law", complexity="simple"),
              "plan": SearchPlan(steps=[], channels=["lldbi_chunks"], docs_probe=True),
              "texts": texts, "budget_profile": "compact", "count": count, "now": NOW, "coverage_gap": gap,
              "config": AssembleConfig.from_overrides(profile_tokens={"compact": envelope})}
    # when
    fast, fast_blocks = assemble_prompt(**kwargs, load_warnings=[], tokenizer_id="reference")
    slow, slow_blocks = assemble_prompt_reference(**kwargs)
    # then the same blocks, the same cuts, the same counts and warnings, and the exact total
    event("cut" if any(s.truncated_to_chars for s in slow.snippets) else "none cut")
    event("dropped" if any(w.startswith("dropped_over_budget") for w in slow.meta.warnings) else "none dropped")
    assert fast_blocks == slow_blocks
    assert fast == slow
    assert fast.meta.total_tokens_est == count(render_kb_context(fast_blocks, gap))


def test_a_layered_prompt_encodes_its_context_about_once_and_every_count_stays_exact() -> None:
    # given a layered prompt over twelve long law blocks whose counts U9 measured
    corpus = Path(__file__).resolve().parents[2] / "knowledge" / "demo_corpus" / "demo_articles.jsonl"
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    longest = sorted((r for r in rows if r["act_nreg"] == "322-08"), key=lambda r: -len(r["text"]))[:12]
    blocks = [SourceBlock(f"КЗпП ст. {r['article']}", f"k{i}", r.get("article_heading"), r["text"])
              for i, r in enumerate(longest)]
    encoded: list[str] = []

    def recording(text: str) -> int:
        encoded.append(text)
        return count_tokens(text)

    profile = SpecialistProfile(slug="labour", soul="Ти — уважний юридичний помічник. Відповідай стисло.",
                                directives=["Посилайся на статті.", "Не вигадуй."],
                                red_lines="Не радь порушувати закон.")
    # when
    wp = layered_prompt(profile=profile, blocks=blocks, question="Скільки днів відпустки?", coverage_gap=None,
                        corrections=[], total_tokens=16_000, budgets=layer_budgets(16_000, 12_800), count=recording,
                        block_tokens=[count_tokens(render_source(b)) for b in blocks])
    context = wp.messages[0].content
    # then the context went through the tokenizer about once (it went three times: fitted, per layer, in the total)
    assert sum(len(t) for t in encoded) < 1.2 * len(context)
    # and every count is what encoding each text whole gives
    assert wp.context_tokens == count_tokens(context)
    assert wp.total_tokens == sum(count_tokens(m.content) for m in wp.messages)
    assert wp.layer_manifest is not None
    for entry in wp.layer_manifest:
        assert entry.token_count <= wp.context_tokens
    kb = next(e for e in wp.layer_manifest if e.id == "kb")
    kb_text = context[context.index("<kb_context>"):context.index("</kb_context>") + len("</kb_context>")]
    assert kb.token_count == count_tokens(kb_text) and kb.char_count == len(kb_text)
