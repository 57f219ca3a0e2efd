"""The writer's prompt, both ways, from the same inputs. Pure: texts in, messages out.

legacy (flag OFF): soul, role, directives, red lines, contract and the writer's instructions in the system
prompt, the law as a ``<kb_context>`` user turn, then the question — byte-identical to the foundation's writer.
layered (flag ON): the system prompt is the layered assembler's ``assembled_context`` (seed 004), which already
holds the KB, the soul and the directives; the only user turn is the question. Either way each of those appears
exactly once.

``writer_prompt_from_context`` rebuilds the prompt of a run from its RunContext and the reloaded snippet texts:
U10 sends exactly that, and replay, ``prompt_diff`` and ``ask --show-prompt`` show exactly that.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from assemble.budgets import AssembleConfig, layer_budgets
from assemble.layers import (
    LAYER_SEPARATOR,
    Layer,
    TokenCounter,
    assemble_layers,
    prose_layer,
)
from assemble.prompt import (
    LAYERED_WRITER_INSTRUCTIONS,
    SourceBlock,
    legacy_messages,
    render_coverage_gap,
    render_question,
    render_source,
)
from assemble.seams import PieceCounter
from assemble.u9 import snippet_text
from pipeline.context import RunDocument
from pipeline.contracts import (
    AssembledPrompt,
    CoverageGap,
    IncludedSnippet,
    LayerBudget,
    LayerManifestEntry,
    SpecialistProfile,
)
from pipeline.messages import Message

Assembler = Literal["legacy", "layered"]
CORRECTIONS_HEAD = "Виправлення оператора — відповіді, яких слід уникати, і якими вони мають бути:\n"


class PromptSourcesMissing(ValueError):
    """The run has no assembled prompt (it ended before U9, or the section is masked): nothing to rebuild."""


@dataclass(frozen=True)
class CorrectionText:
    id: int
    question: str
    bad_answer: str
    fixed_answer: str


@dataclass(frozen=True)
class WriterPrompt:
    messages: list[Message]
    assembler: Assembler
    layer_manifest: list[LayerManifestEntry] | None
    total_tokens: int  # exact: the sum over message contents, as a provider bills them
    context_tokens: int  # exact: the context U9 assembled (the kb turn, or assembled_context)
    sha256: str
    kept_refs: Mapping[str, tuple[str, ...]] | None = None

    def manifest_json(self) -> list[dict[str, Any]] | None:
        """The manifest as stored and shown: seed 004's camelCase keys."""
        if self.layer_manifest is None:
            return None
        return [m.model_dump(mode="json", by_alias=True) for m in self.layer_manifest]

    def as_json(self) -> dict[str, Any]:
        return {"messages": [{"role": m.role, "content": m.content} for m in self.messages],
                "layer_manifest": self.manifest_json(), "assembler": self.assembler,
                "total_tokens": self.total_tokens}


def messages_sha256(messages: Sequence[Message]) -> str:
    canonical = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _finish(messages: list[Message], assembler: Assembler, count: TokenCounter, context: str,
            manifest: list[LayerManifestEntry] | None = None,
            kept_refs: Mapping[str, tuple[str, ...]] | None = None) -> WriterPrompt:
    tokens = {m.content: count(m.content) for m in messages}  # the context is one of the messages: counted once
    return WriterPrompt(messages, assembler, manifest, sum(tokens[m.content] for m in messages),
                        tokens[context] if context in tokens else count(context), messages_sha256(messages),
                        kept_refs)


def legacy_prompt(*, profile: SpecialistProfile, blocks: list[SourceBlock], question: str,
                  coverage_gap: CoverageGap | None, count: TokenCounter) -> WriterPrompt:
    messages = legacy_messages(profile=profile, blocks=blocks, question=question, coverage_gap=coverage_gap)
    return _finish(messages, "legacy", count, messages[1].content)


def render_correction(c: CorrectionText) -> str:
    parts = [f'<correction id="{c.id}">']
    if c.question.strip():
        parts.append(f"Запит: {c.question.strip()}")
    parts += [f"Погана відповідь: {c.bad_answer.strip()}", f"Виправлена відповідь: {c.fixed_answer.strip()}",
              "</correction>"]
    return "\n".join(parts)


def kb_layer(blocks: list[SourceBlock], coverage_gap: CoverageGap | None,
             block_tokens: Sequence[int] | None = None) -> Layer | None:
    """The ``<kb_context>`` of the legacy turn as a layer: the same markup, cut only by whole sources."""
    gap = render_coverage_gap(coverage_gap) or ""
    if not blocks and not gap:
        return None
    tail = (f"\n{gap}" if gap and blocks else gap) + "\n</kb_context>"
    return Layer("kb", tuple(render_source(b) for b in blocks), head="<kb_context>\n", joiner="\n", tail=tail,
                 segment_refs=tuple(b.article_ref for b in blocks),
                 segment_tokens=tuple(block_tokens) if block_tokens is not None else None)


def specialist_layers(*, profile: SpecialistProfile, blocks: list[SourceBlock], coverage_gap: CoverageGap | None,
                      corrections: Sequence[CorrectionText], block_tokens: Sequence[int] | None = None,
                      crisis: str | None = None, skill: str | None = None) -> list[Layer | None]:
    """The layers of a specialist's prompt. crisis and skill have no source yet (P3.2): absent unless given."""
    directives = [d.strip() for d in profile.directives if d.strip()]
    contract = profile.response_contract.strip()
    response = (f"Формат відповіді:\n{contract}\n\n" if contract else "") + LAYERED_WRITER_INSTRUCTIONS
    return [
        prose_layer("red_lines", profile.red_lines, head="Червоні лінії:\n"),
        prose_layer("crisis", crisis),
        Layer("directives", tuple(f"- {d}" for d in directives), head="Директиви:\n", joiner="\n")
        if directives else None,
        prose_layer("skill", skill),
        prose_layer("soul", profile.soul),
        prose_layer("role", profile.role_skeleton),
        kb_layer(blocks, coverage_gap, block_tokens),
        Layer("correction", tuple(render_correction(c) for c in corrections), head=CORRECTIONS_HEAD, joiner="\n",
              segment_refs=tuple(f"correction:{c.id}" for c in corrections)) if corrections else None,
        prose_layer("response_contract", response),
    ]


def kb_room(*, profile: SpecialistProfile, coverage_gap: CoverageGap | None, total_tokens: int,
            budgets: Mapping[str, int], count: TokenCounter, sources: int) -> int:
    """The tokens the kb layer's sources can have in a layered prompt: the envelope less every layer that outranks
    kb as it will be fitted (red lines, soul and the runtime tail whole; directives, skill and role to their
    budgets), the separators, the kb markup (with the coverage gap) and one joiner per source. U9 sizes the
    evidence to this, so the kb layer cuts sentences where U9 could, instead of dropping whole sources. The
    correction layer ranks below kb and takes only what kb leaves."""
    layers = specialist_layers(profile=profile, blocks=[], coverage_gap=None, corrections=[])
    fitted = assemble_layers(layers, total_tokens=total_tokens, layer_budgets=budgets, count=count)
    shell = kb_layer([SourceBlock("", "", None, "")], coverage_gap)
    assert shell is not None
    markup = count(shell.head) + count(shell.tail) + count(shell.joiner) * max(sources - 1, 0)
    room = total_tokens - fitted.total_tokens - count(LAYER_SEPARATOR) - markup
    return max(0, min(room, budgets.get("kb", room)))


def layered_prompt(*, profile: SpecialistProfile, blocks: list[SourceBlock], question: str,
                   coverage_gap: CoverageGap | None, corrections: Sequence[CorrectionText], total_tokens: int,
                   budgets: Mapping[str, int], count: TokenCounter,
                   block_tokens: Sequence[int] | None = None) -> WriterPrompt:
    layers = specialist_layers(profile=profile, blocks=blocks, coverage_gap=coverage_gap, corrections=corrections,
                               block_tokens=block_tokens)
    pieces = PieceCounter(count)  # shared: the prompt's total reuses the pieces the assembler counted
    result = assemble_layers(layers, total_tokens=total_tokens, layer_budgets=budgets, count=pieces)
    messages = [Message("system", result.assembled_context), Message("user", render_question(question))]
    return _finish(messages, "layered", pieces, result.assembled_context, result.layer_manifest, result.kept_refs)


def blocks_with_tokens(snippets: list[IncludedSnippet], texts: Mapping[str, str]
                       ) -> tuple[list[SourceBlock], list[int]]:
    """U9's blocks rebuilt from storage, with the token counts U9 measured (texts are never in the DB)."""
    blocks, tokens = [], []
    for s in snippets:
        text = snippet_text(s.r2_keys, dict(texts))
        if text is None or s.article_ref is None:
            continue
        if s.truncated_to_chars is not None:
            text = text[: s.truncated_to_chars]
        blocks.append(SourceBlock(s.article_ref, s.r2_key, s.heading, text, s.source))
        tokens.append(s.tokens)
    return blocks, tokens


def layer_budget_meta(prompt: AssembledPrompt, config: AssembleConfig | None = None) -> LayerBudget:
    """The budgets a layered prompt is held to: recorded at U9; for a legacy run, derived from its U9 budget."""
    if prompt.meta.layer_budget is not None:
        return prompt.meta.layer_budget
    tokens = prompt.meta.budget_tokens
    total = tokens.total if tokens else 0
    evidence = tokens.law + tokens.memory + tokens.doc if tokens else 0
    return LayerBudget(total=total, layers=layer_budgets(total, evidence, config))


def writer_prompt_from_context(doc: Mapping[str, Any] | RunDocument, *, texts: Mapping[str, str],
                               corrections: Sequence[CorrectionText], count: TokenCounter,
                               layered: bool | None = None, config: AssembleConfig | None = None) -> WriterPrompt:
    """The writer prompt of a run, from its RunContext and the snippet texts. ``layered`` None = the path the run
    took (``assembled_prompt.meta.assembler``); True/False renders the other way for a shadow compare."""
    ctx = (doc if isinstance(doc, RunDocument) else RunDocument.parse(doc)).visible()
    prompt, intake = ctx.assembled_prompt, ctx.intake
    if prompt is None or intake is None:
        raise PromptSourcesMissing("the run has no assembled prompt yet (it did not reach U9, or U9 is masked)")
    blocks, tokens = blocks_with_tokens(prompt.snippets, texts)
    use_layered = prompt.meta.assembler == "layered" if layered is None else layered
    if not use_layered:
        return legacy_prompt(profile=intake.specialist, blocks=blocks, question=intake.normalized,
                             coverage_gap=ctx.coverage_gap, count=count)
    budget = layer_budget_meta(prompt, config)
    return layered_prompt(profile=intake.specialist, blocks=blocks, question=intake.normalized,
                          coverage_gap=ctx.coverage_gap, corrections=corrections, total_tokens=budget.total,
                          budgets=budget.layers, count=count, block_tokens=tokens)
