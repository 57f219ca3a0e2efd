"""Questions people ask that an article answers, stored beside its sentences (doc2query, written by hand).

The meaning list and rerank of U4 compare a question with each article's sentences by their best match (MaxSim). A
lay question rarely meets the statute's sentence: «Мене звільнили на лікарняному» against «розірвання трудового
договору … в період тимчасової непрацездатності». For the articles people actually need, the shipped file
``knowledge/corpus/lay_questions.jsonl.gz`` holds a few questions in everyday Ukrainian that the article's text
answers, written from that text article by article (never from an evaluation question; README "Retrieval quality",
session 30). Ingest embeds them as more of the article's sentence vectors: a user's question then meets a question.
They are never quoted: the writer quotes the article's own sentences, and looks vectors up by their text.

One JSON line an article: ``{"act_nreg": "322-08", "article": "40", "questions": ["…", "…"]}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

from django.conf import settings

from knowledge.ingest.jsonl import IngestError, open_text
from legaltext.chunking import Article

LayQuestions = Mapping[tuple[str, str], tuple[str, ...]]  # (act nreg case-folded, article) -> its questions
NONE: LayQuestions = MappingProxyType({})


def read_lay_questions(path: Path, *, per_article: int) -> dict[tuple[str, str], tuple[str, ...]]:
    """The file's questions by article, at most ``per_article`` each. A line that is not such a record, or an
    article given twice, is the operator's error naming the line (a silent override would hide a merge mistake)."""
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for number, line in enumerate(open_text(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key = (str(record["act_nreg"]).lower(), str(record["article"]))
            questions = tuple(q.strip() for q in record["questions"] if isinstance(q, str) and q.strip())
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise IngestError(f"{path}:{number}: expected {{act_nreg, article, questions: [...]}} ({exc})") from exc
        if key in out:
            raise IngestError(f"{path}:{number}: {key[0]} ст. {key[1]} is given twice")
        out[key] = tuple(dict.fromkeys(questions))[:per_article]
    return out


@lru_cache(maxsize=4)
def _read(path: str, per_article: int) -> LayQuestions:
    return read_lay_questions(Path(path), per_article=per_article)


def lay_questions(path: str, *, per_article: int) -> LayQuestions:
    """The questions of the file ``path`` (read once a process); none when ``path`` is empty or ``per_article`` 0."""
    if not path or per_article <= 0:
        return NONE
    return _read(path, per_article)


def stored_lay_questions() -> LayQuestions:
    """The questions the deployment stores (``LAY_QUESTIONS_FILE``, ``LAY_QUESTIONS_PER_ARTICLE``): none when no
    sentence vectors are stored (``MEANING_SENTENCES`` 0), since they are stored as more of them."""
    path = settings.LAY_QUESTIONS_FILE if settings.MEANING_SENTENCES > 0 else ""
    return lay_questions(path, per_article=settings.LAY_QUESTIONS_PER_ARTICLE)


def questions_of(questions: LayQuestions, act_nreg: str, article: str) -> tuple[str, ...]:
    return questions.get((act_nreg.lower(), article), ())


def questions_for(questions: LayQuestions, article: Article) -> tuple[str, ...]:
    """The questions written for an article's number, for the record that number means (``Article.primary``): a
    repealed stub or a second text under the same number gets none."""
    return questions_of(questions, article.act_nreg, article.article) if article.primary else ()
