"""Writing sections into the stored RunContext document, and reading one section of it. A masked section reads as
absent: after a retrieval retry is requested, downstream artifacts are stale until they are rebuilt (seed 001).
The whole document, typed, is ``pipeline.context.RunDocument``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from pipeline.context import MASKED, SECTION_TYPES, sections_owned_by

T = TypeVar("T", bound=BaseModel)
# What a pending retrieval retry makes stale (ORCH masks it) and what a write retry discards (ORCH resets it):
# the sections of the stages after retrieval, and of the writer and its verifier.
DOWNSTREAM_OF_RETRIEVAL = sections_owned_by("U7", "U8", "U9", "U10", "U11")
WRITER_ARTIFACTS = sections_owned_by("U10", "U11")

__all__ = ["DOWNSTREAM_OF_RETRIEVAL", "MASKED", "WRITER_ARTIFACTS", "apply", "dump", "read"]


def read(doc: Mapping[str, Any], name: str, kind: type[T]) -> T | None:
    """The section, or None when absent, masked or corrupt (a corrupt section never crashes a reader)."""
    if name in doc.get(MASKED, []):
        return None
    raw = doc.get(name)
    if raw is None:
        return None
    try:
        return kind.model_validate(raw)
    except ValidationError:
        return None


def dump(section: BaseModel) -> dict[str, Any]:
    return section.model_dump(mode="json", by_alias=True)


def apply(doc: Mapping[str, Any], *, write: Mapping[str, BaseModel | None] | None = None,
          mask: tuple[str, ...] = (), reset: tuple[str, ...] = ()) -> dict[str, Any]:
    """A new document: sections written (and unmasked), sections masked, sections removed."""
    out = dict(doc)
    masked = [m for m in out.get(MASKED, []) if m not in (write or {})]
    for name, section in (write or {}).items():
        if name not in SECTION_TYPES:
            raise KeyError(f"unknown RunContext section {name!r}")
        if section is None:
            out.pop(name, None)
        else:
            out[name] = dump(section)
    for name in mask:
        if name in out and name not in masked:
            masked.append(name)
    for name in reset:
        out.pop(name, None)
        masked = [m for m in masked if m != name]
    out[MASKED] = masked
    return out
