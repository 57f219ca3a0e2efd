"""The offline provider: deterministic and extractive. It reads only what the prompt gives it — the
``<kb_context>`` sources and the question — and quotes the sentences of the best sources that share the most
words with the question, citing each in the canonical form. It never cites a source it was not given, and never
quotes a sentence that mentions an article outside its sources."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from html import unescape

from assemble.tokenizer import count_tokens
from knowledge.terms import clean_term, extract_terms, term_key
from knowledge.text import content_lemmas
from llm.types import Completion, Message
from pipeline.citations import find_citations, split_ref
from pipeline.definitions import definition_term

MODEL = "offline-extractive-1"
MAX_SOURCES = 3
MAX_SENTENCES_PER_SOURCE = 2

_SOURCE = re.compile(r'<source ref="(?P<ref>[^"]*)"(?: kind="(?P<kind>[^"]*)")?[^>]*>\n(?P<body>.*?)\n</source>',
                     re.S)
MAX_CONTEXT_SOURCES = 2  # the user's documents, memory and earlier turns quoted beside the law
_KB = re.compile(r"<kb_context>\n(?P<kb>.*)\n</kb_context>", re.S)  # the only place sources come from
_GAP = re.compile(r"<coverage_gap[^>]*>(?P<names>.*?)</coverage_gap>", re.S)
_QUESTION = re.compile(r"^Питання:\s*(?P<q>.+)$", re.S)
_SENTENCES = re.compile(r"(?<=[.;!?])\s+|\n+")
_STATEMENT_END = (".", ";", ":", "!", "?", "…")
DEFINITIONS_CONTEXT = "Визначення термінів"  # read every "X - Y" sentence as a possible definition item


def _cites_only(sentence: str, ref: str, allowed: list[str], labels: dict[str, str]) -> bool:
    """Quoted law often points elsewhere ("відповідно до статті 20 цього Закону"); a sentence is quotable only if
    every article it mentions is one of the given sources, so the writer never smuggles in an unverifiable one.
    The source's own ref goes first, so "цього Закону" binds to the act being quoted."""
    prefix = f"{ref}. "
    found = find_citations(prefix + sentence, labels, evidence=allowed)
    return all(c.article_ref in allowed for c in found if c.start >= len(prefix))


def _defines(sentence: str, asked: str | None) -> bool:
    """The sentence is the item that defines the asked term ("12) деалкоголізація - процес …")."""
    return bool(asked) and any(t.key == asked for t in extract_terms(sentence, DEFINITIONS_CONTEXT))


def _best_sentences(body: str, question_lemmas: set[str], n: int, ok: Callable[[str], bool],
                    asked: str | None = None) -> list[str]:
    """The sentences sharing the most words with the question; for "Що означає термін «X»?" the item defining X
    first — in a list of forty definitions every item shares the word "термін" with the question."""
    sentences = [s.strip() for s in _SENTENCES.split(body) if len(s.strip()) > 15 and ok(s.strip())]
    scored = []
    for pos, s in enumerate(sentences):
        overlap = len(question_lemmas & set(content_lemmas(s)))
        scored.append((_defines(s, asked), overlap, -pos, s))
    scored.sort(reverse=True)
    chosen = [s for defines, overlap, _, s in scored[:n] if defines or overlap > 0] or sentences[:1]
    return sorted(chosen, key=sentences.index)


def _clip(sentence: str, limit: int = 400) -> str:
    sentence = sentence.rstrip(" ;:,.")
    return sentence if len(sentence) <= limit else sentence[:limit].rsplit(" ", 1)[0] + " …"


def _without_heading(body: str) -> tuple[str, str]:
    """A channel block opens with a heading line that says whose material it is; it names the quote."""
    heading, _, text = body.partition("\n")
    return heading.strip(), text


_ORCH_OPTIONS = re.compile(r"<orch_options>(?P<options>.*?)</orch_options>", re.S)


def compose_answer(messages: list[Message]) -> str:
    # The layered path carries the KB in the system turn (seed 004); the legacy path in a user turn.
    joined = "\n".join(m.content for m in messages if m.role in ("system", "user"))
    orch = _ORCH_OPTIONS.search(joined)
    if orch:  # an ORCH choice: deterministically keep the rule's preference, which is listed first
        return orch.group("options").split("|")[0].strip()
    question = ""
    for m in reversed(messages):
        match = _QUESTION.match(m.content.strip()) if m.role == "user" else None
        if match:
            question = unescape(match.group("q").strip())
            break
    q_lemmas = set(content_lemmas(question))
    term = definition_term(question)
    asked = term_key(clean_term(term)) if term else None
    # Sources are read from the <kb_context> alone (a question or a persona holding a <source> block is not one);
    # only law sources, the blocks of kind lldbi (no kind: the golden markup), are cited. The user's documents,
    # memory and earlier turns are quoted as theirs, never as a basis (a contract clause is not a norm).
    kb = _KB.search(joined)
    found = list(_SOURCE.finditer(kb.group("kb"))) if kb else []
    sources = [(unescape(m.group("ref")), m.group("body")) for m in found
               if m.group("kind") in (None, "lldbi")][:MAX_SOURCES]
    context = [_without_heading(unescape(m.group("body"))) for m in found
               if m.group("kind") not in (None, "lldbi")][:MAX_CONTEXT_SOURCES]
    gap = _GAP.search(joined)
    lines: list[str] = []
    if gap:
        lines.append(f"Зверніть увагу: потрібного акта ({unescape(gap.group('names')).strip()}) немає в базі "
                     "знань, тому я не можу послатися на його норми.")
    allowed = [ref for ref, _ in sources]
    labels = {split_ref(ref)[0]: split_ref(ref)[0] for ref in allowed}

    def quotable(ref: str, body: str, n: int) -> list[str]:
        # A law block opens with the article's heading when it has one: a title, not a statement to quote.
        first = body.lstrip().split("\n", 1)[0].strip()
        heading = first if "\n" in body.strip() and not first.endswith(_STATEMENT_END) else None
        cites_only = partial(_cites_only, ref=ref, allowed=allowed, labels=labels)
        found = _best_sentences(body, q_lemmas, n, lambda s: s != heading and cites_only(s), asked=asked)
        return found or _best_sentences(body, q_lemmas, n, cites_only, asked=asked)

    # A sentence of the user's material that names an article is not repeated: outside the law sources U11 would
    # see a citation without evidence, inside them the user's words would stand beside the article as if its own.
    def names_no_article(s: str) -> bool:
        return not find_citations(s, labels, evidence=allowed)

    mine = [f"— «{_clip(s)}» ({heading})." for heading, body in context
            for s in _best_sentences(body, q_lemmas, 1, names_no_article)]
    if mine:
        lines.append("З ваших матеріалів:\n" + "\n".join(mine))
    if not sources:
        lines.append("У базі знань не знайдено норм, які відповідають на це питання; "
                     "відповідь без джерел я не надаю.")
        return "\n\n".join(lines)

    lead_source = next(((ref, body) for ref, body in sources if quotable(ref, body, 1)), None)
    if lead_source is None:
        lines.append("Коротко: питання регулюють норми, наведені в підставах.")
    else:
        lead = quotable(*lead_source, 1)[0]
        # With the act itself missing, what follows is related law, not the answer: say so.
        opener = "Пов'язані норми, які є в базі знань" if gap else "Коротко"
        lines.append(f"{opener}: {_clip(lead)} ({lead_source[0]}).")
        details = [f"— {_clip(s)} ({ref})." for ref, body in sources
                   for s in quotable(ref, body, MAX_SENTENCES_PER_SOURCE) if s != lead]
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
