"""Token counting (llm/tokenizer.py): exact tiktoken counts from bundled BPE files, never a download."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tiktoken

from llm import tokenizer
from llm.tokenizer import count_tokens, encoding_name_for_model, get_encoding

ROOT = Path(__file__).resolve().parents[2]
UKRAINIAN = ("Щорічна основна відпустка надається працівникам тривалістю не менш як 24 календарних дні "
             "за відпрацьований робочий рік, який відлічується з дня укладення трудового договору.")
TEXTS = [
    pytest.param(UKRAINIAN, id="ukrainian"),
    pytest.param("The employer shall grant annual leave of at least 24 calendar days.", id="english"),
    pytest.param("КЗпП ст. 75; Закон «Про відпустки» ст. 6 — 24 дні.\n<kb_context>", id="citations-and-markup"),
    pytest.param("<|endoftext|> is plain text here", id="special-token-text"),
    pytest.param("", id="empty"),
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("model", "encoding"), [("gpt-4o-mini", "o200k_base"), ("gpt-4", "cl100k_base")])
def test_count_is_the_exact_tiktoken_count_for_the_models_encoding(text: str, model: str, encoding: str) -> None:
    # given the encoding loaded by tiktoken itself (its cache already laid out by the tokenizer module)
    get_encoding(encoding)
    reference = tiktoken.get_encoding(encoding)
    # when / then
    assert count_tokens(text, model) == len(reference.encode(text, disallowed_special=()))


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4"])
def test_ukrainian_text_costs_materially_more_than_a_chars_over_4_estimate(model: str) -> None:
    # given a paragraph of Ukrainian legal text
    text = " ".join([UKRAINIAN] * 5)
    # when
    tokens = count_tokens(text, model)
    # then: len/4 (the English rule of thumb) would under-count it
    assert tokens > len(text) / 4
    assert tokens > 1.2 * (len(text) / 4)


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4o", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("text-davinci-003", "o200k_base"),  # p50k_base is not bundled: the default, never a download
        ("offline-extractive-1", "o200k_base"),
        ("no-such-model", "o200k_base"),
    ],
)
def test_model_maps_to_a_bundled_encoding(model: str, encoding: str) -> None:
    assert encoding_name_for_model(model) == encoding


def test_an_encoding_without_a_bundled_file_is_refused() -> None:
    with pytest.raises(ValueError, match="no bundled BPE file"):
        get_encoding("p50k_base")


NO_NETWORK = textwrap.dedent(
    """
    import socket

    def _blocked(*args, **kwargs):
        raise OSError("network access attempted")

    socket.socket.connect = _blocked
    socket.socket.connect_ex = _blocked
    socket.create_connection = _blocked
    socket.getaddrinfo = _blocked

    from llm.tokenizer import count_tokens

    text = "Щорічна основна відпустка"
    print(count_tokens(text, "gpt-4o-mini"), count_tokens(text, "gpt-4"))
    """
)


def test_counting_works_with_the_network_blocked_and_an_empty_cache(tmp_path: Path) -> None:
    # given a fresh process: an empty state directory, no tiktoken cache, every socket connection refused
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    env["LEXERY_VAR_DIR"] = str(tmp_path)
    # when it counts tokens with both encodings
    done = subprocess.run([sys.executable, "-c", NO_NETWORK], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    # then it succeeded offline, with the same counts as here, from files it laid out itself
    assert done.returncode == 0, done.stderr
    o200k, cl100k = (int(n) for n in done.stdout.split())
    assert (o200k, cl100k) == (count_tokens("Щорічна основна відпустка", "gpt-4o-mini"),
                               count_tokens("Щорічна основна відпустка", "gpt-4"))
    assert len(list((tmp_path / "tiktoken").iterdir())) == 2


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_a_later_build_reads_the_stored_parse_and_encodes_exactly_as_tiktoken(
        encoding: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # given an empty state directory: the first build parses the bundled BPE file and stores the result
    monkeypatch.setenv("LEXERY_VAR_DIR", str(tmp_path))
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)  # restored afterwards: the build points it at tmp_path
    get_encoding.cache_clear()
    get_encoding(encoding)
    assert [p.name.split("-")[0] for p in (tmp_path / "tiktoken-parsed").iterdir()] == [encoding]
    # when a later build (a new process: nothing cached in memory) can no longer parse a BPE file at all
    get_encoding.cache_clear()
    monkeypatch.setattr(tokenizer, "ENCODING_CONSTRUCTORS", {})
    try:
        stored = get_encoding(encoding)
    finally:
        get_encoding.cache_clear()  # the other tests build from the suite's own state directory again
    # then it was built from the stored parse, and encodes every text as tiktoken's own encoding does
    reference = tiktoken.get_encoding(encoding)
    assert stored.max_token_value == reference.max_token_value
    for text in [p.values[0] for p in TEXTS] + [" ".join(str(p.values[0]) for p in TEXTS) * 3]:
        assert stored.encode(str(text), disallowed_special=()) == reference.encode(str(text), disallowed_special=())


def test_an_unreadable_stored_parse_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # given a stored parse that is not one (a truncated write, a file from elsewhere)
    monkeypatch.setenv("LEXERY_VAR_DIR", str(tmp_path))
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    get_encoding.cache_clear()
    get_encoding("cl100k_base")
    [stored] = (tmp_path / "tiktoken-parsed").iterdir()
    for junk in (b"not a pickle", pickle.dumps({"name": "cl100k_base"})):
        stored.write_bytes(junk)
        get_encoding.cache_clear()
        try:
            # when the encoding is built again
            rebuilt = get_encoding("cl100k_base")
        finally:
            get_encoding.cache_clear()
        # then it was parsed from the bundled file again, and the parse stored in place of the junk
        assert rebuilt.encode(UKRAINIAN) == tiktoken.get_encoding("cl100k_base").encode(UKRAINIAN)
        assert pickle.loads(stored.read_bytes())["name"] == "cl100k_base"
        assert len(pickle.loads(stored.read_bytes())["mergeable_ranks"]) > 100_000
