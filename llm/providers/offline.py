"""The offline provider: deterministic and extractive. It reads only what the prompt gives it — the
``<kb_context>`` sources and the question — and quotes the sentences of the best sources that share the most
words with the question, citing each in the canonical form. It never cites a source it was not given."""

from __future__ import annotations

import re
from html import unescape

from assemble.tokenizer import count_tokens
from knowledge.text import content_lemmas
from llm.types import Completion, Message

MODEL = "offline-extractive-1"
MAX_SOURCES = 3
MAX_SENTENCES_PER_SOURCE = 2

_SOURCE = re.compile(r'<source ref="(?P<ref>[^"]*)"[^>]*>\n(?P<body>.*?)\n</source>', re.S)
_GAP = re.compile(r"<coverage_gap[^>]*>(?P<names>.*?)</coverage_gap>", re.S)
_QUESTION = re.compile(r"^Питання:\s*(?P<q>.+)$", re.S)
_SENTENCES = re.compile(r"(?<=[.;!?])\s+|\n+")


def _best_sentences(body: str, question_lemmas: set[str], n: int) -> list[str]:
    sentences = [s.strip() for s in _SENTENCES.split(body) if len(s.strip()) > 15]
    scored = []
    for pos, s in enumerate(sentences):
        overlap = len(question_lemmas & set(content_lemmas(s)))
        scored.append((overlap, -pos, s))
    scored.sort(reverse=True)
    chosen = [s for overlap, _, s in scored[:n] if overlap > 0] or sentences[:1]
    return sorted(chosen, key=sentences.index)


def _clip(sentence: str, limit: int = 400) -> str:
    sentence = sentence.rstrip(" ;:,.")
    return sentence if len(sentence) <= limit else sentence[:limit].rsplit(" ", 1)[0] + " …"


def compose_answer(messages: list[Message]) -> str:
    joined = "\n".join(m.content for m in messages if m.role == "user")
    question = ""
    for m in reversed(messages):
        match = _QUESTION.match(m.content.strip()) if m.role == "user" else None
        if match:
            question = match.group("q").strip()
            break
    q_lemmas = set(content_lemmas(question))
    sources = [(unescape(m.group("ref")), m.group("body")) for m in _SOURCE.finditer(joined)][:MAX_SOURCES]
    gap = _GAP.search(joined)
    lines: list[str] = []
    if gap:
        lines.append(f"Зверніть увагу: потрібного акта ({unescape(gap.group('names')).strip()}) немає в базі "
                     "знань, тому я не можу послатися на його норми.")
    if not sources:
        lines.append("У базі знань не знайдено норм, які відповідають на це питання; "
                     "відповідь без джерел я не надаю.")
        return "\n\n".join(lines)
    first_ref, first_body = sources[0]
    lead = _best_sentences(first_body, q_lemmas, 1)[0]
    lines.append(f"Коротко: {_clip(lead)} ({first_ref}).")
    details = []
    for ref, body in sources:
        for s in _best_sentences(body, q_lemmas, MAX_SENTENCES_PER_SOURCE):
            if s != lead:
                details.append(f"— {_clip(s)} ({ref}).")
    if details:
        lines.append("Детальніше:\n" + "\n".join(details))
    lines.append("Підстави: " + "; ".join(ref for ref, _ in sources) + ".")
    return "\n\n".join(lines)


class OfflineProvider:
    name = "offline"

    def complete(self, *, model: str, messages: list[Message], max_tokens: int) -> Completion:
        text = compose_answer(messages)
        prompt_tokens = sum(count_tokens(m.content, model) for m in messages)
        completion_tokens = count_tokens(text, model)
        if completion_tokens > max_tokens:  # respect max_tokens like a real model would: cut, never exceed
            from assemble.tokenizer import encoding_for_model

            enc = encoding_for_model(model)
            text = enc.decode(enc.encode(text, disallowed_special=())[:max_tokens])
            completion_tokens = max_tokens
        return Completion(text=text, model=MODEL, prompt_tokens=prompt_tokens,
                          completion_tokens=completion_tokens, usage_reported=False)
