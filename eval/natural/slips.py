"""Write a natural-question file again with typing slips: python3 eval/natural/slips.py FILE.jsonl [--kind K] > OUT

A robustness probe, not a measure of its own: the same questions and gold, the words typed as people slip.
``--kind typo`` (the default): in each question up to SLIPS_PER_QUESTION words of at least SLIP_MIN_LETTERS letters
get one slip each — a letter dropped, two neighbours transposed or a letter doubled, never the first letter.
``--kind keyboard``: the Ukrainian letters a Russian layout lacks typed as its nearest («і», «ї» → «и», «є» → «е»),
no apostrophe. ``--kind bare``: lower case, no punctuation, as a phone's chat is typed. ``--kind courtesy``: a
greeting and a request before the question, thanks after it, as a message to a lawyer opens and closes. The same
file and seed give the same output (README "Retrieval quality", session 41)."""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

SLIPS_PER_QUESTION = 2
SLIP_MIN_LETTERS = 6
_NOT_LETTER = re.compile(r"\W")
_PUNCTUATION = re.compile(r"[^\w\s'’-]")
OPENINGS = ("Доброго дня! ", "Добрий день. Підкажіть, будь ласка. ", "Вітаю! Маю питання. ",
            "Здравствуйте, допоможіть, будь ласка. ")
CLOSINGS = (" Дякую!", " Заздалегідь дякую за відповідь.", " Дуже потрібна ваша порада.", "")
KINDS = ("typo", "keyboard", "bare", "courtesy")
_KEYBOARD = str.maketrans({"і": "и", "ї": "и", "є": "е", "І": "И", "Ї": "И", "Є": "Е", "'": None, "’": None})


def slipped_word(word: str, rng: random.Random) -> str:
    """``word`` with one slip past its first letter (its trailing punctuation kept)."""
    at = rng.randrange(1, len(word) - 2)
    kind = rng.choice(("drop", "transpose", "double"))
    if kind == "drop":
        return word[:at] + word[at + 1:]
    if kind == "transpose":
        return word[:at] + word[at + 1] + word[at] + word[at + 2:]
    return word[:at] + word[at] + word[at:]


def with_slips(question: str, rng: random.Random) -> str:
    words = question.split()
    long = [i for i, w in enumerate(words) if len(_NOT_LETTER.sub("", w)) >= SLIP_MIN_LETTERS]
    for i in rng.sample(long, min(SLIPS_PER_QUESTION, len(long))):
        words[i] = slipped_word(words[i], rng)
    return " ".join(words)


def keyboard(question: str) -> str:
    return question.translate(_KEYBOARD)


def bare(question: str) -> str:
    return _PUNCTUATION.sub("", question.lower())


def courteous(question: str, rng: random.Random) -> str:
    return rng.choice(OPENINGS) + question + rng.choice(CLOSINGS)


def rewritten(question: str, kind: str, rng: random.Random) -> str:
    if kind == "typo":
        return with_slips(question, rng)
    if kind == "courtesy":
        return courteous(question, rng)
    return keyboard(question) if kind == "keyboard" else bare(question)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--kind", choices=KINDS, default="typo")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    for line in args.path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        question = rewritten(case["question"], args.kind, rng)
        sys.stdout.write(json.dumps({**case, "question": question}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
