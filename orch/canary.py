"""The deterministic canary (seed 001): obvious branches are decided by rules; only where the rules leave a real
choice on a hard question is a model consulted — the cheap one for moderate cases, the premium one for complex
ones. A model's answer outside the allowed actions is ignored: the rule's choice stands."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from assemble.prompt import user_material
from orch.policy import Decision
from pipeline.context import RunDocument
from pipeline.messages import Message

Difficulty = Literal["obvious", "moderate", "complex"]
ORCH_MAX_TOKENS = 16


def difficulty(doc: Mapping[str, Any]) -> Difficulty:
    """Obvious: a single act, or an explicit article, and nothing ambiguous (seed 001's examples)."""
    profile = RunDocument.parse_only(doc, ("query_profile",)).visible().query_profile
    if profile is None:
        return "obvious"
    ambiguous = bool(profile.unresolved_act_phrases) or len(profile.act_hints) > 1
    if not ambiguous and (len(profile.act_hints) == 1 or profile.article_refs):
        return "obvious"
    return "complex" if profile.complexity == "complex" or ambiguous else "moderate"


def orch_messages(decision: Decision, doc: Mapping[str, Any]) -> list[Message]:
    options = [decision.action, *decision.alternatives]
    profile = RunDocument.parse_only(doc, ("query_profile",)).visible().query_profile
    question = profile.goals[0] if profile and profile.goals else ""
    return [
        Message("system", "Ти — оркестратор конвеєра юридичних відповідей. Обери одну дію зі списку; "
                          "відповідай лише її назвою."),
        Message("user", f"Питання користувача: {user_material(question)}\nСитуація: {decision.reason}\n"
                        f"<orch_options>{' | '.join(options)}</orch_options>"),
    ]


def pick(decision: Decision, reply: str) -> Decision:
    allowed = [decision.action, *decision.alternatives]
    chosen = next((a for a in allowed if re.search(rf"\b{re.escape(a)}\b", reply)), None)
    if chosen is None:
        return decision
    if chosen == decision.action:
        return replace(decision, alternatives=())
    return Decision(chosen, f"model chose {chosen} over {decision.action}: {decision.reason}",
                    reset=decision.reset if chosen == decision.action else ())
