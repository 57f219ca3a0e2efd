"""The act lexicon U2 matches questions against, kept in a file so that a fresh process does not rebuild it.

Building it lemmatises every catalog title and alias (8,164 acts: over a second, the largest part of U2 in a fresh
``manage.py ask`` once the search engine opens in milliseconds). The file is named by what the lexicon is built
from — the Act table's stamp and database, and the code and dictionaries that lemmatise — so any change to those
builds a new one. It lives in this deployment's own state directory and is written only by this code, which is what
makes reading it back with pickle safe.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import pickle
from pathlib import Path
from typing import Any

from django.conf import settings

import legaltext.chunking
import legaltext.citations
import legaltext.lexicon
import legaltext.text
from legaltext import lay_terms
from legaltext.citations import name_stems, remember_title_stems
from legaltext.lexicon import ActLexicon

logger = logging.getLogger(__name__)

_LEMMATISING_CODE = (legaltext.lexicon, legaltext.text, legaltext.chunking, legaltext.citations, lay_terms)
_DICTIONARIES = ("pymorphy3", "pymorphy3-dicts-uk")


def _key(stamp: tuple[Any, ...]) -> str:
    digest = hashlib.sha256(repr((stamp, str(settings.DATABASES["default"]["NAME"]))).encode())
    for module in _LEMMATISING_CODE:
        digest.update(Path(str(module.__file__)).read_bytes())
    digest.update(lay_terms.DATA_FILE.read_bytes())
    for package in _DICTIONARIES:
        digest.update(importlib.metadata.version(package).encode())
    return digest.hexdigest()[:20]


def stored_lexicon(stamp: tuple[Any, ...], rows: Any) -> ActLexicon:
    """The lexicon for the Act table at ``stamp``: read back when a process built it before, else built from
    ``rows()`` and written for the next process (the older files are dropped). The stems U10–U12 bind the acts'
    names by travel with it (legaltext.citations): stemming ~12,600 names was half a second of a fresh ``ask``; so
    does the lay-terms thesaurus, lemmatised (legaltext.lay_terms: ~0.3 s more)."""
    directory = Path(settings.LEXICON_CACHE_DIR)
    path = directory / f"lexicon-{_key(stamp)}.pickle"
    try:
        with path.open("rb") as f:
            stored = pickle.load(f)  # our own file in our own state directory (see the docstring)
        if isinstance(stored, tuple) and len(stored) == 3 and isinstance(stored[0], ActLexicon):
            remember_title_stems(stored[1])
            lay_terms.remember_entries(stored[2])
            return stored[0]
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        pass  # none yet, or unreadable: build it
    lexicon = ActLexicon.build(rows())
    stems = name_stems([e.title for e in lexicon.entries if e.title] + list(lexicon.label_index()))
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / f".{path.name}.{os.getpid()}"
        tmp.write_bytes(pickle.dumps((lexicon, stems, lay_terms.entries()), protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(path)  # atomic: another process reads the whole file or none
        for old in directory.glob("lexicon-*.pickle"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:  # a read-only state directory costs the next process a rebuild, not this one its answer
        logger.warning("act lexicon not stored", exc_info=True)
    return lexicon
