"""Meta-triage (seed 000): which evidence channels the prompt draws on, in which order. Pure given its port.

Deterministic by default: law first whenever there is law evidence (a legal answer stands on articles), the
other channels ranked by a weighted sum of signals (``U9_SIGNAL_WEIGHTS``). With ``U9_TRIAGE=model`` a model
ranks the channels through the LLM gateway instead; a timeout, an error or an answer that does not parse falls
back to the deterministic law-first selection, and the fallback is recorded. Law-only questions never look at
documents: planning decided that (``SearchPlan.docs_probe``), triage only honours it. With one candidate channel
there is nothing to rank, so no model is asked (the seed's tail-latency point).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from llm.types import Completion, Message
from pipeline.contracts import EvidenceAssembly, QueryProfile, SearchPlan

LAW = "lldbi_chunks"
CHANNEL_OF_SOURCE = {"lldbi": LAW, "memory": "memory", "doc": "docs", "history": "history"}
SHARE_KEY = {LAW: "law", "memory": "memory", "docs": "doc", "history": "history"}
CHANNELS = (LAW, "memory", "docs", "history")
DETERMINISTIC = "deterministic"
TRIAGE_MAX_TOKENS = 60  # the answer is one short JSON object

TRIAGE_SYSTEM = (
    "Ти — диспетчер каналів доказів юридичного асистента. Упорядкуй канали за корисністю для відповіді на "
    'питання. Відповідай лише JSON у формі {"channels": ["..."]}, використовуючи тільки канали з переліку.'
)
_JSON_OBJECT = re.compile(r"\{.*\}", re.S)

AskFn = Callable[[list[Message]], Completion]


@dataclass(frozen=True)
class Triage:
    channels: tuple[str, ...]  # selected, in order of use
    scores: Mapping[str, float] = field(default_factory=dict)
    model: str = DETERMINISTIC  # who decided: "deterministic" or the model's name
    skipped: Mapping[str, str] = field(default_factory=dict)  # channel -> why it was left out
    fallback: str | None = None  # why a requested model did not decide


def _candidates(evidence: EvidenceAssembly, plan: SearchPlan) -> tuple[dict[str, int], dict[str, str]]:
    counts: dict[str, int] = {}
    for item in evidence.items:
        channel = CHANNEL_OF_SOURCE[item.source]
        counts[channel] = counts.get(channel, 0) + 1
    skipped: dict[str, str] = {}
    if not plan.docs_probe:
        skipped["docs"] = "law-only question: no documents probe (decided at planning)"
        counts.pop("docs", None)
    return counts, skipped


def channel_scores(profile: QueryProfile, evidence: EvidenceAssembly, counts: Mapping[str, int],
                   weights: Mapping[str, float], shares: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    mode_shares = shares.get(profile.mode, shares["law"])
    best: dict[str, float] = {}
    for item in evidence.items:
        channel = CHANNEL_OF_SOURCE[item.source]
        best[channel] = max(best.get(channel, 0.0), item.score)
    top = max(best.values(), default=0.0) or 1.0
    total = sum(counts.values()) or 1
    explicit = 1.0 if (profile.article_refs or profile.act_hints) else 0.0
    scores = {}
    for channel in counts:
        signals = {"prior": mode_shares.get(SHARE_KEY[channel], 0.0), "score": best.get(channel, 0.0) / top,
                   "volume": counts[channel] / total, "explicit": explicit if channel == LAW else 0.0}
        scores[channel] = round(sum(weights.get(k, 0.0) * v for k, v in signals.items()), 6)
    return scores


def triage_deterministic(*, profile: QueryProfile, plan: SearchPlan, evidence: EvidenceAssembly,
                         weights: Mapping[str, float], shares: Mapping[str, Mapping[str, float]],
                         fallback: str | None = None) -> Triage:
    counts, skipped = _candidates(evidence, plan)
    scores = channel_scores(profile, evidence, counts, weights, shares)
    others = sorted((c for c in counts if c != LAW), key=lambda c: (-scores[c], CHANNELS.index(c)))
    order = ([LAW] if LAW in counts else []) + others
    return Triage(tuple(order), scores, DETERMINISTIC, skipped, fallback)


def triage_messages(question: str, profile: QueryProfile, counts: Mapping[str, int]) -> list[Message]:
    payload = {"question": question, "mode": profile.mode,
               "channels": [{"name": c, "items": n} for c, n in counts.items()]}
    return [Message("system", TRIAGE_SYSTEM), Message("user", json.dumps(payload, ensure_ascii=False))]


def _parse(text: str, allowed: Mapping[str, int]) -> tuple[str, ...]:
    match = _JSON_OBJECT.search(text)
    if match is None:
        raise ValueError("no JSON object in the answer")
    channels = json.loads(match.group(0)).get("channels")
    if not isinstance(channels, list):
        raise ValueError("'channels' is not a list")
    chosen = tuple(dict.fromkeys(c for c in channels if isinstance(c, str) and c in allowed))
    if not chosen:
        raise ValueError("no known channel in the answer")
    return chosen


def triage_with_model(*, question: str, profile: QueryProfile, plan: SearchPlan, evidence: EvidenceAssembly,
                      weights: Mapping[str, float], shares: Mapping[str, Mapping[str, float]], ask: AskFn,
                      model: str) -> Triage:
    counts, skipped = _candidates(evidence, plan)
    if len(counts) <= 1:
        return triage_deterministic(profile=profile, plan=plan, evidence=evidence, weights=weights, shares=shares)
    scores = channel_scores(profile, evidence, counts, weights, shares)
    try:
        chosen = _parse(ask(triage_messages(question, profile, counts)).text, counts)
    except Exception as exc:  # timeout, provider error, unusable answer: all fall back the same way
        reason = f"{type(exc).__name__}: {exc}"[:200]
        return triage_deterministic(profile=profile, plan=plan, evidence=evidence, weights=weights,
                                    shares=shares, fallback=reason)
    if LAW in counts and LAW not in chosen:  # law evidence is never dropped: the answer must cite articles
        chosen = (LAW, *chosen)
    left_out = {c: "not chosen by the triage model" for c in counts if c not in chosen}
    return Triage(chosen, scores, model, {**skipped, **left_out})
