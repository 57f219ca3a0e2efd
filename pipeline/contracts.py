"""Typed, frozen RunContext sections. A stage reads sections and returns new ones; the DB document is their
serialized union (``RunContext.document``) with a version number. Names follow the seeds."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer


class Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Shape(BaseModel):
    """A fixed shape that was an open dict in the stored JSON (DESIGN §4, seeds 000/002/004). It dumps exactly the
    keys it was given — an optional key left out stays out instead of becoming ``null`` — and keeps keys it does
    not know, so the stored JSON is what the dict used to be, and older or newer documents pass through whole."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    @model_serializer(mode="wrap")
    def _given_keys_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        fields = type(self).model_fields
        known = {*fields, *(f.alias for f in fields.values() if f.alias)}
        given = {*self.model_fields_set, *(fields[n].alias for n in self.model_fields_set if n in fields)}
        return {k: v for k, v in data.items() if k in given or k not in known}


# --- U1 ---------------------------------------------------------------------------------------------------
class SpecialistProfile(Section):
    slug: str
    name: str = ""
    soul: str = ""
    role_skeleton: str = ""
    directives: list[str] = Field(default_factory=list)
    red_lines: str = ""
    response_contract: str = ""


class Intake(Section):
    question: str
    normalized: str
    specialist: SpecialistProfile
    received_at: str


# --- U2 ---------------------------------------------------------------------------------------------------
class ActCue(Section):
    nreg: str
    title: str
    label: str  # what to print in a citation: the abbreviation, else the title
    matched: str  # the words of the question that named it
    how: Literal["nreg", "abbreviation", "title", "alias"]
    indexed: bool


class ArticleRefCue(Section):
    article: str
    part: str | None = None
    act_nreg: str | None = None  # bound when an act is named right after the reference
    matched: str


class QueryProfile(Section):
    mode: Literal["law", "mixed", "memory"]
    law_only: bool
    act_hints: list[ActCue] = Field(default_factory=list)  # acts the question names ("за КЗпП", "закон про …")
    # Acts whose title words the question uses for its subject, not as a name ("під час воєнного стану" is not
    # "Закон «Про правовий режим воєнного стану»"): searched beside the question at a lower weight, never a filter
    # and never a coverage gap.
    topic_acts: list[ActCue] = Field(default_factory=list)
    article_refs: list[ArticleRefCue] = Field(default_factory=list)
    goals: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    complexity: Literal["simple", "moderate", "complex"]
    # "процесуального кодексу", "Закон про неіснуюче": the question names an act the lexicon could not bind;
    # U6 asks DocList which act it is (or whether it exists at all).
    unresolved_act_phrases: list[str] = Field(default_factory=list)
    # "Що означає термін «X»?": the term asked about (legaltext/definitions.py); U3 plans a lookup of it
    definition_term: str | None = None


# --- U3 ---------------------------------------------------------------------------------------------------
class SearchStep(Section):
    kind: Literal["hybrid", "exact_article", "definition"]
    query: str
    act_filter: list[str] = Field(default_factory=list)  # nregs
    article: str | None = None
    limit: int
    # a step's fused scores count at this share: a seat for an act beside the main search (planning.py)
    weight: float = 1.0


class SearchPlan(Section):
    steps: list[SearchStep]
    channels: list[str]
    docs_probe: bool  # decided here, not after the fact (DESIGN §3 rule 9)


# --- U4 ---------------------------------------------------------------------------------------------------
class Hit(Section):
    chunk_key: str
    act_nreg: str
    act_title: str
    act_label: str
    article: str
    article_ref: str
    heading: str | None = None
    r2_key: str
    ordinal: int
    score: float
    channel: str
    step: int
    # the article's 0-based rank in each similarity signal's list (None: that signal did not find it); U5 reads
    # whether both kinds of signal put it near the top
    lexical_rank: int | None = None
    dense_rank: int | None = None
    # for the article first in the lexical list: how far its BM25 score stands ahead of the next article's
    # (1 − second/first); None for every other article. U5 reads it: a first place by a hair is not an answer.
    lexical_lead: float | None = None
    # for an article among a full-weight hybrid step's first (QUESTION_RERANK_DEPTH): the cosine of its lay question
    # closest to the user's (None: not compared, or it has none). U5 reads it: the user asked what people ask of it.
    question_closeness: float | None = None


class RawHits(Section):
    hits: list[Hit] = Field(default_factory=list)


class TraceStep(Section):
    step: int
    kind: str
    query: str
    act_filter: list[str]
    n_hits: int
    latency_ms: float
    error: str | None = None
    # how close a hybrid step's best matches came: the dense list's first cosine, and the BM25 list's first score
    # (None: no word of the question stands in any chunk). U5 reads them: a question the law neither words nor
    # means («SELECT * FROM runs;», «hello world») has no answer in it, whatever the lists return.
    best_dense: float | None = None
    best_lexical: float | None = None


class RetrievalTrace(Section):
    attempt: int
    embed_model: str
    steps: list[TraceStep]
    seeded: bool = False


# --- U5 / U6 ----------------------------------------------------------------------------------------------
SupportLevel = Literal["strong", "partial", "weak", "none"]

# DocList reason codes (seed 002; DESIGN §3 rule 5): what DocList says of an act phrase, on the wire
# (``POST /api/v1/doclist/resolve``), in ``doclist_trace`` and as a ``coverage_gap`` reason.
ACT_FOUND_AND_INDEXED = "ACT_FOUND_AND_INDEXED"  # the found-and-indexed code of our naming
ACT_FOUND_IN_CATALOG_NOT_INDEXED = "ACT_FOUND_IN_CATALOG_NOT_INDEXED"
ACT_NOT_FOUND_IN_CATALOG = "ACT_NOT_FOUND_IN_CATALOG"
AMBIGUOUS_ACT_MATCH = "AMBIGUOUS_ACT_MATCH"
# Ours, beside the seed's: the client is switched off (DOCLIST_ENABLED=false); the client could not get an answer
# (a remote DocList timed out, refused, or answered nonsense: engine/stage_env.doclist_port).
DOCLIST_DISABLED = "DOCLIST_DISABLED"
DOCLIST_UNAVAILABLE = "DOCLIST_UNAVAILABLE"
# A gap's reason when DocList stayed unavailable after U6's direct retry: the act a phrase of the question names
# was never checked against the catalog, so nothing can be said of it either way.
ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE = "ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE"


class GateDecision(Section):
    expand: bool
    reason: str
    support_level: SupportLevel
    top_score: float = 0.0
    covered_goals: int = 0
    total_goals: int = 0


class RetrievalRetryRequest(Section):
    state: Literal["pending", "applied", "deferred", "exhausted"]
    reason: str
    seeded_queries: list[str] = Field(default_factory=list)
    act_hints: list[str] = Field(default_factory=list)
    attempt: int
    max: int
    requested_at: str
    updated_at: str


class ClarificationOption(Section):
    nreg: str
    title: str
    label: str
    indexed: bool


class Clarification(Section):
    """A question back to the user (seed 001: ambiguity deferral), and the answer once it arrives."""

    reason: str
    question: str
    about: str  # the words of the user's question that were ambiguous
    options: list[ClarificationOption]
    asked_at: str
    answer_nreg: str | None = None
    answer_text: str | None = None
    answered_at: str | None = None


class ResolutionCandidate(Shape):
    """An act DocList offered for a phrase (seed 002), or the act a U2 cue already bound (nreg, title, indexed)."""

    nreg: str
    title: str = ""
    abbreviations: list[str] = Field(default_factory=list)
    indexed: bool = False
    score: float = 0.0
    how: str | None = None  # which cue matched: nreg, official_number, abbreviation, title, alias, partial_title

    @property
    def label(self) -> str:
        """How a clarification option names it: the abbreviation, else the title."""
        return self.abbreviations[0] if self.abbreviations else self.title or self.nreg


class Resolution(Section):
    """What DocList said about one act phrase of the question: a reason code and its candidates, best first."""

    query: str
    reason: str
    candidates: list[ResolutionCandidate] = Field(default_factory=list)


class DoclistTrace(Section):
    resolutions: list[Resolution] = Field(default_factory=list)
    note: str = ""


class GapAct(Shape):
    """An act the answer cannot consult: ``nreg`` is empty when the catalog does not know it."""

    nreg: str
    title: str
    reason: str | None = None  # its own reason code when it differs from the gap's (DocList could not check it)

    @property
    def name(self) -> str:
        return self.title or self.nreg


class CoverageGap(Section):
    reason: str
    acts: list[GapAct] = Field(default_factory=list)


# --- U7 / U8 ----------------------------------------------------------------------------------------------
ChannelSource = Literal["memory", "doc", "history"]


class ChannelHit(Section):
    """A candidate from a non-law channel (the user's memory, the user's documents, the conversation's earlier
    turns), found by the channel ports for U7. Never a law citation: only ``lldbi`` items carry an article."""

    source: ChannelSource
    label: str  # how the prompt names it: "memory:12", "doc:договір.txt#2", "history:1"
    heading: str  # one line that says what it is, in the prompt ("Документ користувача «договір.txt» …")
    r2_key: str  # its text in the snippet store, like a law chunk
    score: float  # the channel's own relevance, 0..1 (U7 ranks channels against each other on it)


class EvidenceItem(Section):
    source: Literal["lldbi", "memory", "doc", "history"]
    rank: int
    score: float  # the source's own score (law: retrieval fusion; other channels: 0..1)
    label: str | None = None  # non-law items: the handle the prompt shows (law items are named by article_ref)
    act_nreg: str | None = None
    act_label: str | None = None
    article: str | None = None
    article_ref: str | None = None
    heading: str | None = None
    r2_keys: list[str]
    channels: list[str] = Field(default_factory=list)


class EvidenceAssembly(Section):
    items: list[EvidenceItem]
    support_level: SupportLevel
    dropped: int = 0


class ApplicableNorm(Section):
    article_ref: str
    act_nreg: str
    article: str
    heading: str | None = None
    why: str


class LegalReasoning(Section):
    issues: list[str]
    applicable_norms: list[ApplicableNorm]
    conclusion_outline: list[str]


# --- U9 (seed 000 shape, extended only additively) --------------------------------------------------------
class LawSourceRef(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)
    article_ref: str
    r2_key: str
    score: float


class IncludedSnippet(Section):
    source: Literal["lldbi", "memory", "doc", "history"]
    r2_key: str
    r2_keys: list[str]  # the article's chunks in order; r2_key is the first
    article_ref: str | None
    heading: str | None = None
    rank: int
    tokens: int
    chars: int
    truncated_to_chars: int | None = None  # set when cut at a sentence boundary


class BudgetTokens(Shape):
    """The U9 token budget of the envelope and of each channel, as the mode's caps set it."""

    total: int = 0
    law: int = 0
    memory: int = 0
    doc: int = 0
    history: int = 0


class LayerBudget(Shape):
    """What a layered prompt is held to: the envelope and each layer's token budget (seed 004)."""

    total: int
    layers: dict[str, int] = Field(default_factory=dict)


class PromptMeta(Shape):
    """``assembled_prompt.meta``: seed 000's keys first, then ours, added only additively. Every key is optional
    on read: a stored prompt missing one (an older run, a test double) still routes and renders as before."""

    mode: Literal["law", "mixed", "memory"] | None = None
    budget_profile: str | None = None
    total_tokens_est: int = 0  # the context U9 assembled: the kb turn, or the layered assembled_context
    channels_used: list[str] = Field(default_factory=list)
    triage_model: str | None = None
    assembled_at: str | None = None
    warnings: list[str] = Field(default_factory=list)
    tokenizer: str | None = None  # the encoding U9 counted with; U10 counts with it again
    budget_tokens: BudgetTokens | None = None
    channel_budget_tokens: dict[str, int] = Field(default_factory=dict)
    docs_probe: bool | None = None
    assembler: Literal["legacy", "layered"] = "legacy"
    triage_scores: dict[str, float] = Field(default_factory=dict)
    triage_skipped: dict[str, str] = Field(default_factory=dict)
    triage_fallback: str | None = None  # why a requested triage model did not decide
    prompt_assembler_version: int | None = None
    layer_budget: LayerBudget | None = None
    correction_ids: list[int] = Field(default_factory=list)
    prompt_tokens: int | None = None
    prompt_sha256: str | None = None


class PromptBudget(Shape):
    """Characters each channel put into the prompt (seed 000's ``budget``)."""

    law_chars: int = 0
    memory_chars: int = 0
    doc_chars: int = 0
    history_chars: int = 0


class SegmentCount(Shape):
    kept: int
    total: int


class LayerManifestEntry(Shape):
    """One layer of a layered prompt (seed 004's ``Layer``, with our exact token counts and digest)."""

    id: str
    priority: int
    never_truncate: bool = Field(alias="neverTruncate")
    token_budget: int | None = Field(default=None, alias="tokenBudget")
    token_count: int = Field(default=0, alias="tokenCount")
    char_count: int = Field(default=0, alias="charCount")
    included: bool = True
    truncated: bool = False
    segments: SegmentCount | None = None
    sha256: str | None = None
    source_refs: list[str] | None = Field(default=None, alias="sourceRefs")


class AssembledPrompt(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)
    meta: PromptMeta
    law_source_refs: list[LawSourceRef] = Field(alias="lawSourceRefs")
    budget: PromptBudget
    snippets: list[IncludedSnippet] = Field(default_factory=list)
    layer_manifest: list[LayerManifestEntry] | None = None


# --- U10 / U11 / U12 --------------------------------------------------------------------------------------
class Citation(Section):
    article_ref: str
    act_nreg: str | None = None
    article: str | None = None


class Draft(Section):
    text: str
    citations: list[Citation]
    provider: str
    model: str
    attempt: int


class CitationCheck(Section):
    article_ref: str
    # user_material: the article is in the evidence, but the sentence citing it repeats a user's document, memory
    # item or earlier turn, words the article does not hold (issue 12) — the user's text posing as the law.
    status: Literal["supported", "not_in_evidence", "unknown_act", "user_material"]


class VerifyResult(Section):
    verdict: Literal["complete", "retry_write", "fail"]
    citations: list[CitationCheck]
    coverage_gap: CoverageGap | None = None
    notes: list[str] = Field(default_factory=list)


class Answer(Section):
    text: str
    citations: list[Citation]
    support_level: SupportLevel
    coverage_gap: CoverageGap | None = None
    removed_citations: list[str] = Field(default_factory=list)
