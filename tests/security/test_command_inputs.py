"""What fuzzing the management commands found (issue 12 follow-up): a path that is a folder or a file that is not
UTF-8, a bad number — each is the operator's one sentence (CommandError: exit code 1), never a traceback."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from runs.models import Run
from tenancy.models import ApiKey

NOT_UTF8 = b'{"question": "\xff\xfe"}\n'


def bad_inputs(tmp: Path) -> dict[str, Path]:
    (tmp / "folder.jsonl").mkdir()
    (tmp / "latin.jsonl").write_bytes(NOT_UTF8)
    (tmp / "latin.jsonl.gz").write_bytes(gzip.compress(NOT_UTF8))
    return {"a folder": tmp / "folder.jsonl", "not UTF-8": tmp / "latin.jsonl",
            "gzipped, not UTF-8": tmp / "latin.jsonl.gz"}


SENTENCES = {"a folder": "not a file", "not UTF-8": "not UTF-8 text", "gzipped, not UTF-8": "not UTF-8 text"}
# Each command that reads a JSONL file, with the arguments that put the file in place of ``{}``.
READERS = {
    "ingest_laws": ["ingest_laws", "{}"],
    "ingest_catalog": ["ingest_catalog", "--acts", "{}"],
    "eval_retrieval": ["eval_retrieval", "{}"],
    "eval_answers": ["eval_answers", "{}", "--specialist", "labour"],
    "export_embeddings": ["export_embeddings", "{}", "--out", "{out}"],
}


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize("command", list(READERS))
@pytest.mark.parametrize("what", list(SENTENCES))
def test_a_command_given_a_folder_or_a_file_that_is_not_utf8_says_so(specialist: Any, tmp_path: Path, command: str,
                                                                      what: str) -> None:
    path = bad_inputs(tmp_path)[what]
    args = [a.format(path, out=tmp_path / "out") for a in READERS[command]]

    with pytest.raises(CommandError, match=SENTENCES[what]):
        run(*args)


@pytest.mark.django_db
@pytest.mark.parametrize("args, message", [
    (["eval_answers", "eval/natural/test.jsonl", "--specialist", "labour", "--sample", "-1"],
     "--sample must be a positive"),
    (["export_embeddings", "{empty}", "--out", "{tmp}"], "no articles read"),
    (["export_embeddings", "{corpus}", "--out", "{empty}"], "is a file; give the directory"),
    (["export_embeddings", "{broken}", "--out", "{tmp}"], "not a corpus record"),
], ids=["eval-answers-negative-sample", "export-empty-corpus", "export-out-is-a-file", "export-broken-line"])
def test_a_bad_argument_is_a_sentence(specialist: Any, tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "broken.jsonl").write_text("{broken\n")
    places = {"empty": tmp_path / "empty.jsonl", "broken": tmp_path / "broken.jsonl", "tmp": tmp_path,
              "corpus": Path(settings.BASE_DIR) / "knowledge/corpus/core_articles.jsonl.gz"}

    with pytest.raises(CommandError, match=message):
        run(*[a.format(**places) for a in args])


@pytest.mark.django_db
@pytest.mark.parametrize("args, message", [
    (["--ttl-days", "99999999999"], "must be 0 \\(never expires\\) to 36500"),
    (["--ttl-days", "4000000"], "must be 0 \\(never expires\\) to 36500"),
    (["--ttl-days", "-1"], "must be 0 \\(never expires\\) to 36500"),
    (["--name", "n" * 101], "the limit is 100"),
], ids=["ttl-past-c-int", "ttl-past-year-9999", "ttl-negative", "name-too-long"])
def test_create_api_key_refuses_a_lifetime_or_name_it_cannot_store(org: Any, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run("create_api_key", "--org", org.slug, *args)

    assert not ApiKey.objects.exists()


def test_the_operator_sees_one_line_and_exit_code_1_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "latin.jsonl").write_bytes(NOT_UTF8)
    env = {**os.environ, "LOG_LEVEL": "ERROR"}

    done = subprocess.run([sys.executable, "manage.py", "eval_retrieval", str(tmp_path / "latin.jsonl")],
                          cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120)

    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "CommandError: " in done.stderr and "not UTF-8 text" in done.stderr


@pytest.mark.django_db
@pytest.mark.parametrize("args, message", [
    (["ask", "\udcff\udcfe ст. 36 КЗпП", "--specialist", "labour"], "invalid Unicode"),  # stray bytes of argv
    (["ask", "ст. 36", "--specialist", "labour", "--org", "nope"], "in org 'nope'"),
    (["forget_user", "--org", "acme", "--user-ref", "\udcff"], "invalid Unicode"),
    (["forget_user", "--org", "acme", "--user-ref", " "], "must not be empty"),
    (["eval_answers", "{blank}", "--specialist", "labour"], "a question was refused: question must not be empty"),
    (["eval_answers", "{surrogate}", "--specialist", "labour"], "a question was refused: .*invalid Unicode"),
], ids=["ask-surrogates", "ask-unknown-org", "forget-surrogate", "forget-blank", "eval-blank-question",
        "eval-surrogate-question"])
def test_text_a_database_cannot_store_is_refused_with_a_sentence(specialist: Any, tmp_path: Path, args: list[str],
                                                                 message: str) -> None:
    gold = '"gold": [{"act_nreg": "322-08", "article": "1"}]'
    (tmp_path / "blank.jsonl").write_text('{"question": "   ", ' + gold + "}\n")
    (tmp_path / "surrogate.jsonl").write_text('{"question": "\\ud800 ст. 1", ' + gold + "}\n")
    places = {"blank": tmp_path / "blank.jsonl", "surrogate": tmp_path / "surrogate.jsonl"}

    with pytest.raises(CommandError, match=message):
        run(*[a.format(**places) for a in args])

    assert not Run.objects.exists()
