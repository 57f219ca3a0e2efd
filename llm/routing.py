"""Which model serves which role. One setting per role, so an operator can move the writer to a stronger model
without paying premium prices for ORCH or triage calls."""

from __future__ import annotations

from django.conf import settings

# role -> the setting naming its model
ROLE_MODEL_SETTINGS: dict[str, str] = {
    "writer": "LLM_WRITER_MODEL",
    "triage": "LLM_TRIAGE_MODEL",
    "verifier": "LLM_VERIFIER_MODEL",
    "orch_cheap": "ORCH_CHEAP_MODEL",
    "orch_premium": "ORCH_PREMIUM_MODEL",
}


class UnknownRole(ValueError):
    """A call named a role with no model setting: a wiring bug, refused before any money is spent."""


def model_for_role(role: str) -> str:
    setting = ROLE_MODEL_SETTINGS.get(role)
    if setting is None:
        raise UnknownRole(f"no model is configured for role {role!r}; known roles: {sorted(ROLE_MODEL_SETTINGS)} "
                          "(or pass model= explicitly)")
    return str(getattr(settings, setting))
