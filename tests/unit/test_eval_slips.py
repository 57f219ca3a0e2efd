"""eval/natural/slips.py: the robustness probe writes the same questions with slips, the same way every time."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "eval" / "natural" / "slips.py"


def slips() -> ModuleType:
    spec = importlib.util.spec_from_file_location("slips", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


QUESTION = "Роботодавець затримує заробітну плату вже два місяці. Куди скаржитися?"


def test_each_question_gets_at_most_its_slips_in_long_words_never_the_first_letter() -> None:
    s = slips()
    typed = s.with_slips(QUESTION, random.Random(1))
    changed = [(a, b) for a, b in zip(QUESTION.split(), typed.split(), strict=True) if a != b]
    assert 1 <= len(changed) <= s.SLIPS_PER_QUESTION
    assert all(len(a) >= s.SLIP_MIN_LETTERS and a[0] == b[0] and abs(len(a) - len(b)) <= 1 for a, b in changed)


def test_the_keyboard_kind_types_the_letters_a_russian_layout_lacks() -> None:
    assert slips().keyboard("Чи має їхній під'їзд Є-код?") == "Чи мае ихний пидизд Е-код?"


def test_the_same_file_and_seed_write_the_same_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"question": QUESTION, "gold": [{"act_nreg": "322-08", "article": "115"}]},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    outputs = []
    for _ in range(2):
        assert slips().main([str(path), "--seed", "3"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    line = json.loads(outputs[0])
    assert line["gold"] == [{"act_nreg": "322-08", "article": "115"}] and line["question"] != QUESTION


def test_the_bare_and_courtesy_kinds_keep_the_question_inside() -> None:
    s = slips()
    assert s.bare("Куди скаржитися, якщо затримують зарплату?") == "куди скаржитися якщо затримують зарплату"
    dressed = s.courteous(QUESTION, random.Random(2))
    assert QUESTION in dressed and dressed != QUESTION
