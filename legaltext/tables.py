"""The word tables shipped beside legaltext's modules (``lay_terms.tsv``, ``surzhyk.tsv``): one ``key<TAB>value`` a
line, blank lines and ``#`` comments skipped."""

from __future__ import annotations

from pathlib import Path


def read_pairs(path: Path, *, shape: str, one_word_keys: bool = False) -> dict[str, str]:
    """The file's entries in its order. A line not of ``shape`` (a key and a value either side of a tab; with
    ``one_word_keys``, a key of one word) or a key given twice is an error naming the line, not a silent override."""
    pairs: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, tab, value = line.partition("\t")
        key, value = key.strip(), value.strip()
        if not tab or not key or not value or (one_word_keys and " " in key):
            raise ValueError(f"{path.name}:{number}: expected '{shape}', got {line!r}")
        if key in pairs:
            raise ValueError(f"{path.name}:{number}: {key!r} is given twice")
        pairs[key] = value
    return pairs
