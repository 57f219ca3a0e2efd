"""The offline provider: deterministic and extractive. It reads only what the prompt gives it — the
``<kb_context>`` sources and the question — and answers with the sentences of the whole evidence that answer the
question best (its words, weighted by rarity; the figure a "скільки" question asks for), the best one first,
citing each in the canonical form. It never cites a source it was not given, never quotes a sentence that mentions
an article outside its sources, a chapter title or a repealed article's stub."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from html import unescape

from legaltext.chunking import FINAL_PROVISIONS, is_repealed_stub, split_ref
from legaltext.citations import find_citations
from legaltext.definitions import announces_terms, clean_term, definition_term, extract_terms, term_key
from legaltext.lay_terms import lay_phrases, with_statutory_words
from legaltext.named_acts import named_labels
from legaltext.procedure import code_court, court_of
from legaltext.sentences import closeness, conduct, split_sentences, with_brackets_closed, without_notes
from legaltext.text import RELEASE_LEMMA, content_lemmas, content_readings, is_title_phrase, question_lemmas
from llm.providers.asked_article import absent_articles, asked_first, parts_of
from llm.tokenizer import count_tokens, encoding_for_model
from pipeline.coverage import gap_sentence
from pipeline.messages import Completion, Message

logger = logging.getLogger(__name__)
MODEL = "offline-extractive-1"
MAX_SOURCES = 3  # law sources quoted in one answer
MAX_SENTENCES_PER_SOURCE = 2
MAX_QUOTES = 4  # the lead and the details together
# A detail must weigh at least this share of the lead's score: the fourth-ranked article that shares one common
# word with the question is not part of the answer (the old writer quoted the top three whatever they said).
DETAIL_MIN_SHARE = 0.35
# U4's first article is quoted among the details when the weighing left it out, its best sentence weighs this share
# of the lead's and the quotes and sources have room (bench/writer_replay.py: dev unchanged, test and fresh +1 answer
# citing a gold article each)
FIRST_SOURCE_MIN_SHARE = 0.2
CLIP_CHARS = 400

_SOURCE = re.compile(r'<source ref="(?P<ref>[^"]*)"(?: kind="(?P<kind>[^"]*)")?[^>]*>\n(?P<body>.*?)\n</source>',
                     re.S)
MAX_CONTEXT_SOURCES = 2  # the user's documents and memory quoted beside the law
QUOTED_CONTEXT_KINDS = ("doc", "memory")  # an earlier turn informs the search, it is not the user's material
_KB = re.compile(r"<kb_context>\n(?P<kb>.*)\n</kb_context>", re.S)  # the only place sources come from
_GAP = re.compile(r'<coverage_gap(?: reason="(?P<reason>[^"]*)")?[^>]*>(?P<names>.*?)</coverage_gap>', re.S)
_QUESTION = re.compile(r"^Питання:\s*(?P<q>.+)$", re.S)
_CLAUSES = re.compile(r"(?<=[,:])\s+")
_STATEMENT_END = (".", ";", ":", "!", "?", "…")
DEFINITIONS_CONTEXT = "Визначення термінів"  # read every "X - Y" sentence as a possible definition item
# Not statements: a repealed article's stub ("{Статтю 81 виключено …}", legaltext.chunking.is_repealed_stub) and a
# chapter or section title.
_TITLE = re.compile(r"^(?:глава|розділ|підрозділ|параграф|§)\s*[0-9IVXLCІ]+", re.I)
# A question asking for a figure ("скільки днів", "який строк", "розмір штрафу", "з якого віку") prefers a sentence
# holding one. Read from the words as written: the analyser takes «віку» for «віка», «року» for «рок».
_FIGURE_ASKED = re.compile(r"\b(?:скільк\w*|строк\w*|термін\w*|розмір\w*|тривал\w*|вік|віку|віком|днів|день|дня|дні|"
                           r"місяц\w*|рок[иуіо]\w*|рік|годин\w*|відсот\w*|штраф\w*|мінімальн\w*|максимальн\w*|"
                           r"сум[аиуо]\w*)\b", re.I)
_FIGURE = re.compile(r"\d|\b(?:од(?:ин|на|ного)|дв[аоіу]\w*|тр[иь]\w*|чотир\w*|п'ят\w*|шіст\w*|сім\w*|"
                     r"вісім\w*|дев'ят\w*|десят\w*|двадцят\w*|тридцят\w*|сорок\w*|сто\b|половин\w*|"
                     r"подвійн\w*|потрійн\w*|півтор\w*|третин\w*|чверт\w*)", re.I)
FIGURE_BONUS = 0.5  # in units of the best-matching word's weight
# A norm of martial law («У період дії воєнного стану допускається звільнення … у період його тимчасової
# непрацездатності») is the exception to a code's rule in the same words. Unless the question speaks of the war, the
# rule leads and the exception follows it as a detail: its score is multiplied by WARTIME_EXCEPTION_FACTOR.
_WARTIME_SENTENCE = re.compile(r"^(?:у|в|під\s+час|протягом|на)\s+(?:період\s+)?(?:умовах\s+)?(?:дії\s+)?"
                               r"воєнного\s+стану", re.I)
_WARTIME_ASKED = re.compile(r"воєнн|війн|війсь|бойов|обстріл|мобіліз|окупац|евакуац|ЗСУ|ТЦК", re.I)
# 0.9 let the exception lead paraphrases of the same question («Мене хочуть звільнити, а я зараз на лікарняному»,
# «Чи можуть звільнити мене під час лікарняного?»); at 0.5 the rule leads them all, and the dev prompts' replay is
# identical at 0.9, 0.7 and 0.5 (no dev answer has the two side by side).
WARTIME_EXCEPTION_FACTOR = 0.5
# The four procedural codes share their sentences nearly word for word; the one whose court hears the question's
# dispute (legaltext/procedure.py) answers it, the others' sentences weigh this much. Writer replay over the dev
# prompts, first citation gold: 1 → 0.401, 0.9 → 0.405, 0.8 → 0.409, 0.6 / 0.5 / 0.4 → 0.416 (cites gold 0.634 →
# 0.642), 0.25 → 0.416 (0.638).
OTHER_COURT_FACTOR = 0.6
# A sentence whose main clause denies the rule («Відпустка … не надається, якщо дитина перебуває на державному
# утриманні») shares the rule's words and adds its condition's: it outscored the rule it excepts and led «Коротко»
# for «Скільки днів відпустки по догляду за дитиною до трьох років?». Unless the question itself says «не» (it may
# ask for the exception), such a sentence weighs this much.
NEGATED_RULE_FACTOR = 0.6
_NEGATED_RULE = re.compile(r"^[^,;:]*\bне\s+(?:нада|пошир|застосову|виплачу|нарахову)(?:ється|ються)\b.*?"
                           r"\b(?:якщо|у\s+разі|в\s+разі|коли)\b", re.I)
_NEGATION_ASKED = re.compile(r"\bне\b", re.I)
# A question that names an act («за Конституцією», «по закону про звернення громадян») asks what that act says: when
# the evidence holds it, the other acts' sentences weigh this much (legaltext/named_acts.py; 1 turns it off). Writer
# replay over the dev prompts (9 questions name an act): 0.7 and 0.5 change no lead; 0.3 leads «Чи обов'язково
# служити в армії за Конституцією?» with КУ ст. 65 instead of the military-service law (first citation gold 0.444 →
# 0.447, cites gold 0.665 → 0.669), and two answers' details move into the named act.
NAMED_ACT_FACTOR = 0.3


# What a user whose question found no law can do: a question of no words the law uses, in another language, or
# with no situation in it (gate NO_RELEVANT_LAW) is answered by nothing in the base.
ASK_AGAIN = "Опишіть, будь ласка, свою ситуацію українською: що сталося, хто її учасники і що ви хочете з'ясувати."


def _cites_only(sentence: str, ref: str, allowed: list[str], labels: dict[str, str]) -> bool:
    """Quoted law often points elsewhere ("відповідно до статті 20 цього Закону"); a sentence is quotable only if
    every article it mentions is one of the given sources, so the writer never smuggles in an unverifiable one.
    The source's own ref goes first, so "цього Закону" binds to the act being quoted."""
    prefix = f"{ref}. "
    found = find_citations(prefix + sentence, labels, evidence=allowed)
    return all(c.article_ref in allowed for c in found if c.start >= len(prefix))


# A sentence pointing to an article outside the evidence was never quoted, though the pointer is often an aside:
# «Звільнення вагітних жінок … (до шести років - частина шоста статті 179 ) … з ініціативи роботодавця не
# допускається» is КЗпП ст. 184's answer to «Чи можуть звільнити вагітну жінку?». The parenthesis or clause holding
# the pointer is now left out as «…» (the rest quoted as it stands); 0 keeps such sentences out.
FOREIGN_POINTER_CUT = 1


def _without_foreign(sentence: str, ref: str, allowed: list[str], labels: dict[str, str]) -> str | None:
    """The sentence with each parenthesis or clause that names an article outside ``allowed`` cut to «…»; None
    when nothing quotable is left."""
    prefix = f"{ref}. "
    found = [c for c in find_citations(prefix + sentence, labels, evidence=allowed)
             if c.start >= len(prefix) and c.article_ref not in allowed]
    if not found:
        return None
    text, bound = sentence, len(sentence)
    for c in sorted(found, key=lambda c: -c.start):
        start, end = c.start - len(prefix), c.end - len(prefix)
        if end > bound:  # inside what a later pointer's cut already took
            continue
        opened, closed = text.rfind("(", 0, start), text.find(")", end)
        if opened >= 0 and ")" not in text[opened:start] and closed >= 0 and "(" not in text[end:closed]:
            lo, hi = opened, closed + 1
        else:
            lo = max(text.rfind(",", 0, start), text.rfind(";", 0, start)) + 1
            ends = [i for i in (text.find(",", end), text.find(";", end)) if i >= 0]
            hi = min(ends) if ends else len(text)
        text, bound = f"{text[:lo].rstrip()} … {text[hi:].lstrip()}", lo
    text = re.sub(r"\s+…\s+([,;.])", r" …\1", text).strip()
    if len(content_lemmas(text)) < 4 or not is_statement(text):
        return None
    return text if _cites_only(text, ref, allowed, labels) else None


def _defines(sentence: str, asked: str | None) -> bool:
    """The sentence is the item that defines the asked term ("12) деалкоголізація - процес …"), or defines it the way
    the codes do («Трудовим договором є угода між працівником і роботодавцем (роботодавцем - фізичною особою) …»:
    read as an item, the dash inside its brackets hid that, and «Що таке трудовий договір?» led with the student
    contract's definition instead of КЗпП ст. 21's)."""
    return bool(asked) and any(t.key == asked for context in (DEFINITIONS_CONTEXT, None)
                               for t in extract_terms(sentence, context))


# An editor's note in braces is about the text, not law (legaltext.sentences.without_notes): never quoted, and it
# ends the sentence before it, so what is quoted stays the statute's own words, verbatim. 0 quotes notes as text.
EDITORIAL_NOTES_CUT = 1


def _without_notes(body: str) -> str:
    return without_notes(body) if EDITORIAL_NOTES_CUT else body


def is_statement(sentence: str) -> bool:
    """A sentence a writer may quote as what the law says: not a repealed stub, not a chapter title."""
    s = sentence.strip().lstrip("{[(").strip()
    if _TITLE.match(s) or (s.isupper() and len(s) > 3):
        return False
    return not is_repealed_stub(s)


# An evidence chunk may begin inside a list or a sentence (a long article is cut into chunks): its first lines are
# items whose opening stands in another chunk («звільнення домашнього працівника.» of КЗпП ст. 43-1's «…
# допускається у випадках:») or the tail of a sentence. Such a line is quoted after «… », which says it continues
# something; one too short to say anything alone (fewer than ORPHAN_MIN_LEMMAS content words: «звільнення
# домашнього працівника» led an answer about a dismissal for absence) is not quoted. A longer one often is the answer
# («г) для будівництва і обслуговування жилого будинку … у селах - не більше 0,25 гектара», ЗК ст. 121). 0 quotes
# every such line as it stands.
ORPHAN_ITEMS_CUT = 1
ORPHAN_MIN_LEMMAS = 5
# A title in an article's running text (legaltext.text.is_title_phrase) is not quoted as a statement; 0 quotes it.
TITLES_CUT = 1


def _orphan(sentence: str, header: str | None) -> bool:
    return header is None and sentence.lstrip()[:1].islower()


def _too_short_alone(sentence: str, header: str | None) -> bool:
    return bool(ORPHAN_ITEMS_CUT) and _orphan(sentence, header) and len(content_lemmas(sentence)) < ORPHAN_MIN_LEMMAS


@dataclass(frozen=True)
class _Quote:
    ref: str
    sentence: str
    score: float
    rank: int  # the source's position in the evidence
    pos: int  # the sentence's position in its source
    header: str | None = None  # the words a list item continues ("Не підлягають призову … військовозобов'язані:")
    also: tuple[str, ...] = ()  # other sources that say this very sentence (a code and its special law often do)
    bonus: float = 0.0  # of ``score``, what only orders it (the article the question names): not its weight
    defining: bool = False  # an item of a list of defined terms: it says what it says alone

    @property
    def refs(self) -> tuple[str, ...]:
        return (self.ref, *self.also)


STEM_CHARS = 6  # "звільнити" and "звільнення" are two lemmas of one idea: sentences are matched on stems


def _unit(lemma_: str) -> str:
    # a release («звільнення від», legaltext.text.RELEASE_LEMMA) is not a dismissal: it is not cut to the stem
    return lemma_ if lemma_ == RELEASE_LEMMA else lemma_[:STEM_CHARS]


# The evidence's order is retrieval's judgement: a sentence of the n-th source ÷ (1 + SOURCE_RANK_DECAY · n). Once U4
# met lay questions with questions (session 30) its order deserved more trust: eval/natural dev, cites a gold article
# / first citation gold, 0.1 0.798 / 0.603, 0.2 0.817 / 0.623, 0.25 0.809 / 0.627, 0.3 0.809 / 0.630, 0.35 0.805 /
# 0.638, 0.5 0.798 / 0.630 (README "Retrieval quality", session 30). Replayed again on session 35's retrieval (the lay
# questions of session 34, the Constitution's reorder prior), with MEANING_WEIGHT 1.25: 0.3 0.840 / 0.708, 0.4 0.837 /
# 0.716; with MEANING_WEIGHT 1: 0.35 0.829 / 0.704, 0.4 0.829 / 0.712, 0.5 0.821 / 0.712.
SOURCE_RANK_DECAY = 0.4


# A lay phrase and the statute's words for it are one thing the user asked about, counted once: a sentence holding
# both («звільнення» and «розірвання трудового договору» for «звільнити») scored every word of both, so it outweighed
# the sentence holding the question's other idea («тимчасова непрацездатність» for «на лікарняному»): the
# sick-leave question led with КЗпП ст. 38's «не вправі звільнити його за поданою раніше заявою» instead of ст. 40's
# prohibition, and the longer the statute's wording of an idea, the more it weighed. Now the statute's whole phrase
# stands in for the lay words: as many words as the user wrote, each at the phrase's mean rarity, counted only beyond
# the lay words the sentence itself holds. Writer replay over the 257 dev prompts: cites a gold article 0.615 →
# 0.619, first citation 0.397 either way; 0 restores the sum (README "Retrieval quality", session 15).
LAY_PHRASE_ONCE = 1


def _ideas(lemmas: list[str], own: set[str],
           readings: list[tuple[str, ...]]) -> list[tuple[set[str], list[tuple[str, ...]]]]:
    """Each idea of the question the thesaurus knows another wording for: its lay words (stems) and the statute's
    phrases for them, each counted only whole — «тимчасово вилучене майно» shares a word with «тимчасова
    непрацездатність», not a meaning. Lay phrases sharing a word are one idea, their phrases alternatives."""
    ideas: list[tuple[set[str], list[tuple[str, ...]]]] = []
    for key, legal in lay_phrases(lemmas, readings):
        said = {_unit(t) for t in key}
        phrase = tuple(dict.fromkeys(u for u in (_unit(t) for t in legal) if u not in own))
        if not phrase:
            continue
        idea = next((i for i in ideas if i[0] & said), None)
        if idea is None:
            ideas.append((said, [phrase]))
        else:
            idea[0].update(said)
            idea[1].append(phrase)
    return ideas


# A question asking whether something is allowed («Він має на це право?», «Чи можна…», «Чи зобов'язаний…») is
# answered by a rule of either sign: «має право», «не допускається», «забороняється», «зобов'язаний». Its modal
# word is one idea, held by any sentence that states a rule, weighed by how rare such sentences are among the
# candidates; as a plain word, «право» favoured «Працівник має право розірвати трудовий договір» (КЗпП ст. 38)
# over the prohibition that answers «Мене звільнили, поки я був на лікарняному. Хіба роботодавець має на це право?»
# (ст. 40). 0 reads the modal word as any other.
MODAL_IDEA = 1
_MODAL_LEMMAS = frozenset({"право", "можний", "вправа", "зобов'язаний", "повинний", "дозволятися", "заборонятися"})
_MODAL_ASKED = re.compile(r"\b(?:ма(?:є|ють|ю|в|ла|ли|ємо|єте)\b(?:\s+\S+){0,2}?\s+право|можна|вправі|"
                          r"зобов'язан\w*|повин\w*|дозволено|заборонено|законно)\b", re.I)
# …asked as a yes-or-no question: «Хто має першочергове право купити?» asks who, and «право» is its subject.
_WH_WORD = re.compile(r"\b(?:хто|кого|кому|що|чого|як|як(?:ий|а|е|і|ого|ому|ій|им|у|их|ими)|скільки|коли|де|куди|"
                      r"звідки|чому|навіщо|доки)\b", re.I)
_RULE = re.compile(r"\b(?:ма(?:є|ють)\s+право|має\s+права|мають\s+права|вправі|мож(?:е|уть)|можливо|допуска\w+|"
                   r"забороня\w+|заборонено|зобов'язан\w+|повин\w+|підляга\w+|дозволя\w+|не\s+може|"
                   r"не\s+мають?\s+права|гарантується)\b", re.I)


def _asks_if_allowed(question: str) -> bool:
    """The question's last sentence asks whether something is allowed, not who, what or how much."""
    asked = [s for s in re.split(r"(?<=[.!?])\s+", question.strip()) if s.strip()]
    last = asked[-1] if asked else ""
    return bool(_MODAL_ASKED.search(last)) and not _WH_WORD.search(last)


SANCTION_WORDS = 0  # 1: an offence's sanction weighed with its conduct (see _Scorer)
# …unless the question asks what the punishment is («за крадіжку дають мінімум п'ять років тюрми?», «який штраф
# за …», «що мені за це буде?», «яка відповідальність»): then the sanction is what answers, and the conduct alone
# let КК ст. 102's terms for minors, holding «позбавлення волі» and «років», lead over ст. 185's «Крадіжка, вчинена
# … в умовах воєнного … стану, - карається позбавленням волі на строк від п'яти до восьми років». 0: the conduct
# alone, whatever is asked.
SANCTION_ASKED = 1
_SANCTION_ASKED = re.compile(r"\b(?:покаран\w*|покарають|покарати|карається|тюрм\w*|в'язниц\w*|ґрат\w*|"
                             r"посадять|посадити|посадили|сидіти|відсиджу\w*|ув'язнен\w*|позбавлен\w*\s+волі|"
                             r"штраф\w*|оштраф\w*|дають|дадуть|загрожує|світить|відповідальн\w*|"
                             r"що\s+(?:\w+\s+)?буде|що\s+(?:\w+\s+)?за\s+це\s+буде)", re.I)


# What a sentence names as its exception («крім воєнного стану», «за винятком випадків …») is what it does not say
# the rule of: «Те саме діяння, вчинене в умовах особливого періоду, крім воєнного стану» (КК ст. 419, a soldier's
# offence outside wartime) matched «воєнний стан» in a question about theft in wartime and led its answer. A word
# held only inside such a clause does not count for the sentence. 0: every word counts.
EXCEPTION_CUT = 1
_EXCEPTION = re.compile(r"\b(?:крім|окрім|за\s+винятком)\s[^,;:()–—]*", re.I)


def _without_exceptions(sentence: str) -> str:
    return _EXCEPTION.sub(" ", sentence) if EXCEPTION_CUT else sentence


def _offence_form(question: str) -> Callable[[str], str]:
    """How an offence's sentence is read for this question: whole when the punishment is asked, else its conduct."""
    if SANCTION_WORDS or (SANCTION_ASKED and _SANCTION_ASKED.search(question)):
        return str
    return conduct


class _Scorer:
    """How much a sentence answers the question: the question's words it holds, each weighted by its rarity among
    the candidate sentences — "працівник" is in every labour article, "непрацездатності" marks the one that answers —
    and for each lay phrase the statute's whole phrase in its place."""

    def __init__(self, question: str, sentences: list[str]) -> None:
        read = content_readings(question, question=True)  # each word's readings: a lay phrase may need its second
        modal = bool(MODAL_IDEA) and _asks_if_allowed(question)
        if modal:
            read = [r for r in read if r[0] not in _MODAL_LEMMAS]
        own = [r[0] for r in read]
        self.own = {_unit(t) for t in own}
        self.ideas = _ideas(own, self.own, read)
        self.figure = bool(_FIGURE_ASKED.search(question))
        # an offence's sanction («карається позбавленням волі на строк від двох до п'яти років») is worded alike in
        # every article of its code: its words would weigh the longest offences, not the one asked about
        form = _offence_form(question)
        self.lemmas = [{_unit(t) for t in content_lemmas(_without_exceptions(form(s)))} for s in sentences]
        n = len(sentences) or 1
        # an idea's lay words are the question's own: only its phrases add words to weigh
        known = {*self.own, *(t for _, phrases in self.ideas for p in phrases for t in p)}
        df = Counter(t for lem in self.lemmas for t in lem if t in known)
        self.idf = {t: math.log(1 + n / (1 + df[t])) for t in known}
        # the sentences holding the asked idea: any rule, when the question asks whether something is allowed
        self.rules = [modal and bool(_RULE.search(s)) for s in sentences]
        self.rule_idf = math.log(1 + n / (1 + sum(self.rules)))

    def score(self, i: int, sentence: str) -> float:
        held = self.lemmas[i]
        matched = held & self.own
        value = sum(self.idf[t] for t in matched)
        for said, phrases in self.ideas:
            whole = [p for p in phrases if held.issuperset(p)]
            if not whole:
                continue
            if LAY_PHRASE_ONCE:  # an idea said both ways counts once: the lay words, or the phrase in their place
                phrase = max(len(said) * sum(self.idf[t] for t in p) / len(p) for p in whole)
                value += max(0.0, phrase - sum(self.idf[t] for t in said & matched))
            else:
                value += sum(self.idf[t] for t in {t for p in whole for t in p} - matched)
        if self.rules[i]:
            value += self.rule_idf
        if value and self.figure and _FIGURE.search(sentence):
            value += FIGURE_BONUS * max(self.idf.values(), default=0.0)
        return value


# The question's meaning beside its words: a lay question often shares no word with the sentence that answers it
# («побив мене» / «тілесні ушкодження»). A sentence's closeness to the question (cosine of their multilingual-e5
# vectors: 0 at the candidates' median, 1 at the closest) is added, times MEANING_WEIGHT, to its word score scaled to
# the best one. Chosen on eval/natural dev by replaying the writer over the stored prompts of 256 runs: first
# citation gold 0.293 → 0.363 and cites gold 0.477 → 0.527 at weight 1 (README "Retrieval quality"). It costs ~1.3 s
# of e5 an answer on this 2-core machine, less as the sentence cache fills. Session 35, with SOURCE_RANK_DECAY 0.4 (dev
# cites gold / first citation gold, before 0.829 / 0.697 at 1.0 and 0.3): 1.25 0.837 / 0.716, 1.5 0.837 / 0.716, 1.0
# 0.829 / 0.712; checked on probes 0.856 / 0.660 -> 0.866 / 0.660, fresh 0.667 / 0.500 -> 0.667 / 0.507, special_laws
# 0.800 / 0.622 -> 0.811 / 0.644, codes_sparse 0.733 / 0.478 -> 0.744 / 0.456 (README "Retrieval quality", session 35).
MEANING_WEIGHT = 1.25
# Sentences embedded per answer, in the evidence's order (the rest keep their word score), and the characters of
# each: 64 × 400 chose best on dev; 32 × 240 (~0.55 s less an answer on this CPU) kept the first citation but cited a
# gold article less often (0.492), and the first 4 or 6 sentences of every source instead lost the first citation
# (0.320, 0.336).
MEANING_MAX_SENTENCES = 64
MEANING_CHARS = 400
# question, sentences → cosine of each; wired by engine/apps.py (this layer sits below the embedding models)
SentenceSimilarity = Callable[[str, list[str]], Sequence[float]]
_similarity: SentenceSimilarity | None = None


def set_sentence_similarity(similarity: SentenceSimilarity | None) -> None:
    global _similarity  # one process-wide wiring, set at start-up
    _similarity = similarity


def _with_meaning(question: str, sentences: list[str], words: list[float]) -> list[float]:
    """The word scores, each scaled to the best, plus the meaning's share; the word scores alone without a model."""
    similarity = _similarity
    form = _offence_form(question)
    head = [form(s)[:MEANING_CHARS] for s in sentences[:MEANING_MAX_SENTENCES]]
    if similarity is None or MEANING_WEIGHT <= 0 or len(head) < 2:
        return words
    # The model knows «лікарняний» no better than the words do: the statute's words for the question's lay phrases
    # join it (dev: cites gold 0.512 → 0.527, first citation 0.363 either way; the sick-leave question leads with
    # the prohibition of КЗпП ст. 40 instead of ст. 38's «не вправі звільнити його за поданою раніше заявою»).
    try:
        cosines = list(similarity(with_statutory_words(question), head))
    except Exception as exc:  # the model is optional to an answer: without it the words still choose
        logger.warning("sentence meaning unavailable; words alone choose", extra={
            "error": f"{type(exc).__name__}: {exc}"[:300]})
        return words
    close = closeness(cosines)
    best = max(words, default=0.0) or 1.0
    return [word / best + MEANING_WEIGHT * (close[i] if i < len(close) else 0.0) for i, word in enumerate(words)]


# An item's number may carry a superscript the source flattened with spaces («6 -1 ) при укладенні …», КЗпП ст. 24):
# read as a bare «1 -1 ) домашніх працівників» it led an answer without the list it continues (КЗпП ст. 232).
_ITEM_NUMBER = r"\d+(?:\s*-\s*\d+)?\s*\)"
# "11) які мають …", "а) …", "— …", "які …"
_ITEM = re.compile(rf"^(?:{_ITEM_NUMBER}|[а-яіїєґ]\)|[-—–•]\s|[а-яіїєґ'’])")
_INLINE_LIST = re.compile(rf":\s+(?:{_ITEM_NUMBER}|[а-яіїєґ]\))\s")
HEADER_CHARS = 240


def _with_headers(sentences: list[str]) -> list[tuple[str, str | None]]:
    """Each sentence with the words its list continues: statutes enumerate ("… не підлягають призову
    військовозобов'язані:" then "11) які мають дружину …;"), and an item quoted alone answers nothing. The list ends
    with the sentence that closes with a full stop."""
    out: list[tuple[str, str | None]] = []
    header: str | None = None
    for s in sentences:
        out.append((s, header if header and _ITEM.match(s) else None))
        inline = _INLINE_LIST.search(s)  # "… стягнення: 1) зауваження;" — the list opens inside the sentence
        if s.rstrip().endswith(":"):
            header = s
        elif s.rstrip().endswith((".", "!", "?")):
            header = None
        elif inline:
            header = s[:inline.start() + 1]
    return out


def _quoted(q: _Quote, keep: set[str]) -> str:
    """The sentence as quoted: a list item after the words it continues, cut to the end that leads into it."""
    body = _clip(q.sentence, keep)
    if not q.header:
        # a line that continues what the evidence does not show says so
        # (a defined term's item is no continuation: «близькі особи - члени сім'ї …» says what it means alone)
        return f"… {body}" if ORPHAN_ITEMS_CUT and _orphan(body, None) and not q.defining else body
    header = q.header.rstrip(" :")
    if len(header) > HEADER_CHARS:
        header = "… " + header[-HEADER_CHARS:].split(" ", 1)[-1]
    return f"{header}: {body}"


# A statute's sentence often states its case first and its rule last, after a dash: «Скаргу … може бути подано
# протягом десяти днів …, а щодо постанов …, зафіксовані в автоматичному режимі, … - протягом десяти днів з дня
# набрання постановою законної сили» (КУпАП ст. 289), «Крадіжка, вчинена …, - карається позбавленням волі на строк від
# …». Cut around the clauses that hold the question's words, the quote kept the case and lost the term or the
# penalty it exists for. The rule after the sentence's first such dash (up to DISPOSITION_CHARS) now stays, after «…»
# when the clauses before it had to be cut. 0: the clauses around the question's words alone.
DISPOSITION_CHARS = 200
# «…, - карається …», «… - тягне за собою …»: not «осіб - громадян України» (a name) nor «на посадових осіб - від …»
_DISPOSITION = re.compile(r",\s+[-–—]\s+(?=\S)|\s+[-–—]\s+(?=(?:тяг|кара)\w)", re.I)


def _clip(sentence: str, keep: set[str] | None = None, limit: int = CLIP_CHARS) -> str:
    """A long sentence is cut around the clauses that hold the question's words (and the figure they come with),
    never blindly at its end, where the amount of a fine often stands; the rule after its dash stays."""
    sentence = sentence.rstrip(" ;:,.")
    if len(sentence) <= limit:
        return sentence
    folded = _fold_brackets(sentence, limit, keep or set())
    if len(folded) <= limit:
        return folded
    case, rule = _disposition(sentence)
    if rule and len(rule) <= DISPOSITION_CHARS:
        return f"{_clip_clauses(case, keep, limit - len(rule) - 3)} - {rule}"
    return _clip_clauses(sentence, keep, limit)


def _disposition(sentence: str) -> tuple[str, str]:
    """The sentence's case and its rule, split at its first such dash outside brackets past its first quarter (a
    definition's «X - це …» is not a case and a rule); ("", "") when it has none."""
    if not DISPOSITION_CHARS:
        return "", ""
    for cut in _DISPOSITION.finditer(sentence):
        before = sentence[:cut.start()]
        if cut.start() >= len(sentence) // 4 and before.count("(") == before.count(")"):
            return before, sentence[cut.end():]
    return "", ""


# A window that leaves out the sentence's first clause leaves out who does what: «… погодженим з виборним органом
# …, але не рідше двох разів на місяць …» led an answer on unpaid wages without «Заробітна плата виплачується
# працівникам регулярно …». A first clause up to CLAUSE_HEAD_CHARS long is quoted before the window, «…» between
# them, as a lawyer quotes. 0: the window alone.
CLAUSE_HEAD_CHARS = 160


def _clip_clauses(sentence: str, keep: set[str] | None, limit: int) -> str:
    """The window of whole clauses, grown from the one that holds most of the question's words, that fits; led by
    the sentence's first clause when the window starts later."""
    if len(sentence) <= limit:
        return sentence
    clauses = _CLAUSES.split(sentence)
    window = _window(clauses, keep, limit)
    head = clauses[0]
    if window.startswith("… ") and CLAUSE_HEAD_CHARS and len(head) <= CLAUSE_HEAD_CHARS and len(clauses) > 2:
        return f"{head} {_window(clauses[1:], keep, limit - len(head) - 1)}"  # the window says «…» if it skips
    return window


def _window(clauses: list[str], keep: set[str] | None, limit: int) -> str:
    weight = [len(set(content_lemmas(c)) & (keep or set())) + (0.5 if _FIGURE.search(c) else 0) for c in clauses]
    best = max(range(len(clauses)), key=lambda i: (weight[i], -i))
    lo = hi = best
    while True:  # grow the window towards the heavier neighbour while it fits
        options = [j for j in (lo - 1, hi + 1) if 0 <= j < len(clauses)]
        fits = [j for j in options if len(" ".join(clauses[min(lo, j):max(hi, j) + 1])) <= limit]
        if not fits:
            break
        j = max(fits, key=lambda j: (weight[j], -abs(j - best)))
        lo, hi = min(lo, j), max(hi, j)
    lo = _out_of_bracket(clauses, lo, best)
    text = " ".join(clauses[lo:hi + 1])
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0]
    cut = hi < len(clauses) - 1 or len(text) < len(" ".join(clauses[lo:hi + 1]))
    # a cut inside a bracket closes it: «(крім випадків … воєнного стану …)», not an opening that never ends
    opened = text.count("(") - text.count(")")
    return ("… " if lo > 0 else "") + text.rstrip(" ;:,.") + (" …" + ")" * max(opened, 0) if cut else "")


def _out_of_bracket(clauses: list[str], lo: int, best: int) -> int:
    """A window that would open inside a bracket («… обраними і уповноваженими трудовим колективом), але …») opens
    after the clause that closes it, unless the clause the window grew from is inside the bracket too."""
    depth = sum(c.count("(") - c.count(")") for c in clauses[:lo])
    k = lo
    while depth > 0 and k < best:
        depth += clauses[k].count("(") - clauses[k].count(")")
        k += 1
    return k if depth <= 0 else lo


# A long bracket (a list of reasons or exceptions inside the rule: КЗпП ст. 38's «(переїзд на нове місце проживання;
# переведення …; вступ до закладу освіти; …)», ~450 characters) is where a long sentence is cut: to the items that
# hold the question's words (else its first) and «…», the rule around it whole. Cut by clauses instead, the quote
# kept the bracket's opening and lost the rule after it («… роботодавець повинен розірвати трудовий договір у строк,
# про який просить працівник»). 0: cut by clauses only.
BRACKET_FOLD = 1
BRACKET_STEM = 5  # letters a question's word and a bracket's word share to count as one («переїжджаю», «переїзд»)


def _fold_brackets(sentence: str, limit: int, keep: set[str]) -> str:
    """The sentence with its longest brackets, while it is longer than ``limit``, cut to the items that hold the
    question's words (``keep``), or to the first, and «…»; a bracket that cannot be shortened ends the folding."""
    if not BRACKET_FOLD:
        return sentence
    stems = _stems(keep)
    for _ in range(sentence.count("(")):  # each fold shortens a distinct bracket
        if len(sentence) <= limit:
            break
        longest_first = sorted(_brackets(sentence), key=lambda span: span[0] - span[1])
        folds = ((lo, hi, _fold_items(sentence[lo + 1:hi], stems)) for lo, hi in longest_first)
        fold = next(((lo, hi, items) for lo, hi, items in folds if len(items) < hi - lo - 1), None)
        if fold is None:
            break
        lo, hi, items = fold
        sentence = f"{sentence[:lo + 1]}{items}{sentence[hi:]}"
    return sentence


def _fold_items(inner: str, stems: set[str]) -> str:
    """A bracket's items (split at «;», else at «,») cut to those holding ``stems`` (or the first), «…» for the rest."""
    sep = ";" if ";" in inner else ","
    items = [item.strip() for item in inner.split(sep)]
    if len(items) < 2:
        return inner
    wanted = [k for k, item in enumerate(items) if _stems(content_lemmas(item)) & stems] or [0]
    out: list[str] = []
    for k in wanted:
        if k > 0 and k - 1 not in wanted:
            out.append("…")
        out.append(items[k])
    if wanted[-1] < len(items) - 1:
        out.append("…")
    return " ".join(x + sep if x != "…" and nxt not in ("…", None) else x
                    for x, nxt in zip(out, [*out[1:], None], strict=True))


def _stems(lemmas: Iterable[str]) -> set[str]:
    return {lemma[:BRACKET_STEM] for lemma in lemmas if len(lemma) >= BRACKET_STEM}


def _brackets(sentence: str) -> list[tuple[int, int]]:
    """The outermost bracket pairs: (position of «(», position of its «)»)."""
    spans, depth, start = [], 0, 0
    for i, ch in enumerate(sentence):
        if ch == "(":
            start, depth = (i, 1) if depth == 0 else (start, depth + 1)
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i))
    return spans


def _without_heading(body: str) -> tuple[str, str]:
    """A channel block opens with a heading line that says whose material it is; it names the quote."""
    heading, _, text = body.partition("\n")
    return heading.strip(), text


def _heading_line(body: str) -> str | None:
    """A law block opens with the article's heading when it has one: a title, not a statement to quote."""
    first = body.lstrip().split("\n", 1)[0].strip()
    return first if "\n" in body.strip() and not first.endswith(_STATEMENT_END) else None


def _after_heading(sentences: list[str], heading: str | None) -> list[str]:
    """The block's sentences without its heading, whole or read as several sentences: «Мінімальна заробітна плата.
    Індексація заробітної плати» (КЗпП ст. 95) was quoted as two statements, «Індексація заробітної плати» leading
    the related norms of «ст. 999 КЗпП»."""
    if heading is None:
        return sentences
    pieces = [heading] if heading in sentences[:1] else split_sentences(heading)
    return sentences[len(pieces):] if sentences[:len(pieces)] == pieces else [s for s in sentences if s != heading]


_ORCH_OPTIONS = re.compile(r"<orch_options>(?P<options>.*?)</orch_options>", re.S)


def _question(messages: list[Message]) -> str:
    for m in reversed(messages):
        match = _QUESTION.match(m.content.strip()) if m.role == "user" else None
        if match:
            return match.group("q").strip()
    return ""


def _candidates(sources: list[tuple[str, str]], question: str, asked: str | None,
                quotable: Callable[[str, str], bool],
                trimmed: Callable[[str, str], str | None] | None = None) -> list[_Quote]:
    """Every quotable statement of every law source (or its ``trimmed`` form), scored; the item defining an asked
    term first."""
    headed = [(ref, body, _heading_line(body)) for ref, body in sources]
    rows = []
    parts: list[str | None] = []
    for rank, (ref, body, heading) in enumerate(headed):
        text = _without_notes(body)
        own = with_brackets_closed(_after_heading(split_sentences(text), heading))
        for pos, ((s, header), part) in enumerate(zip(_with_headers(own), parts_of(text, own), strict=True)):
            if (not is_statement(s) or (TITLES_CUT and header is None and is_title_phrase(s))
                    or (_too_short_alone(s, header) and not _defines(s, asked))):
                continue
            form = s if quotable(ref, s) else trimmed(ref, s) if trimmed else None
            if form is not None:
                rows.append((rank, ref, pos, form, header))
                parts.append(part)
    sentences = [s for *_, s, _ in rows]
    scorer = _Scorer(question, sentences)
    scores = _with_meaning(question, sentences, [scorer.score(i, s) for i, s in enumerate(sentences)])
    scores, bonus = asked_first(question, scores, [(ref, pos, part) for (_, ref, pos, *_), part
                                                    in zip(rows, parts, strict=True)])
    wartime_asked = bool(_WARTIME_ASKED.search(question))
    negation_asked = bool(_NEGATION_ASKED.search(question))
    court = court_of(question)
    other_court = {ref for ref, _ in sources if code_court(split_ref(ref)[0]) not in (None, court)}
    named_acts = named_labels(question, {split_ref(ref)[0] for ref, _ in sources})
    named = {ref for ref, _ in sources if split_ref(ref)[0] in named_acts}
    header_quotable: dict[tuple[str, str], bool] = {}  # the items of one list share its opening: checked once
    glossaries = {ref for ref, _, heading in headed if heading and announces_terms(heading)}
    quotes = []
    for i, (rank, ref, pos, s, header) in enumerate(rows):
        score = scores[i] / (1 + SOURCE_RANK_DECAY * rank) + (100.0 if _defines(s, asked) else 0.0)
        if not wartime_asked and _WARTIME_SENTENCE.match(header or s):
            score *= WARTIME_EXCEPTION_FACTOR
        if ref in other_court:
            score *= OTHER_COURT_FACTOR
        if not negation_asked and _NEGATED_RULE.match(s):
            score *= NEGATED_RULE_FACTOR
        if named and ref not in named:
            score *= NAMED_ACT_FACTOR
        opening = header
        if header is not None:
            if (ref, header) not in header_quotable:
                header_quotable[ref, header] = quotable(ref, header)
            # a defining item ("2) деалкоголізація - процес …") stands alone: its list's opening is boilerplate; an
            # item of any other list keeps it, dash or not (КУ ст. 129's «8) … - на касаційне оскарження …» led an
            # answer on appeals without «Основними засадами судочинства є:»)
            if not header_quotable[ref, header] or (announces_terms(header)
                                                    and extract_terms(s, DEFINITIONS_CONTEXT)):
                header = None
        defining = header is None and _defines_a_term(s, ref in glossaries, opening)
        quotes.append(_Quote(ref, s, score + bonus[i], rank, pos, header, bonus=bonus[i], defining=defining))
    return sorted(quotes, key=lambda q: (-q.score, q.rank, q.pos))


def _defines_a_term(sentence: str, in_glossary: bool, opening: str | None) -> bool:
    """An item of a list of defined terms — of an article headed «Визначення термінів», or under an opening that
    announces them — that defines one."""
    glossary = in_glossary or (opening is not None and announces_terms(opening))
    return glossary and bool(extract_terms(sentence, DEFINITIONS_CONTEXT))


def _completed(q: _Quote, quotes: list[_Quote]) -> _Quote:
    """An opening ("… не підлягають призову військовозобов'язані:") says nothing until its list does: it is quoted
    through its best item, which carries it as the header."""
    if not q.sentence.rstrip().endswith(":"):
        return q
    return next((i for i in quotes if i.header == q.sentence and i.ref == q.ref), q)


def _choose(quotes: list[_Quote]) -> list[_Quote]:
    """The lead (the best sentence of the whole evidence) and the details that weigh enough beside it."""
    if not quotes:
        return []
    lead = quotes[0]
    if lead.score <= 0:  # nothing shares a word with the question: the first statement of the best source
        return [_completed(min(quotes, key=lambda q: (q.rank, q.pos)), quotes)]
    chosen = [_completed(lead, quotes)]
    per_source = Counter([lead.ref])
    for q in quotes[1:]:
        twin = next((i for i, c in enumerate(chosen) if (c.sentence, c.header) == (q.sentence, q.header)), None)
        if twin is not None:  # the same words in another act: cited beside the first, not quoted again, whatever
            if q.ref not in chosen[twin].refs:  # weighed its act down (a court's or a named act's factor)
                chosen[twin] = replace(chosen[twin], also=(*chosen[twin].also, q.ref))
            continue
        if len(chosen) >= MAX_QUOTES or q.score - q.bonus < DETAIL_MIN_SHARE * (lead.score - lead.bonus):
            continue  # the rest are details no more, but a twin of a chosen sentence may still follow
        new_source = q.ref not in per_source
        if per_source[q.ref] >= MAX_SENTENCES_PER_SOURCE or (new_source and len(per_source) >= MAX_SOURCES):
            continue
        q = _completed(q, quotes)
        if any(c.sentence == q.sentence and c.ref == q.ref for c in chosen):
            continue  # an opening completed by the item already chosen
        chosen.append(q)
        per_source[q.ref] += 1
    return _with_first_source(chosen, quotes)


def _with_first_source(chosen: list[_Quote], quotes: list[_Quote]) -> list[_Quote]:
    """U4's first article, quoted by its best sentence among the details when the weighing left it out but that
    sentence still weighs ``FIRST_SOURCE_MIN_SHARE`` of the lead."""
    best = next((q for q in quotes if q.rank == 0), None)
    if not FIRST_SOURCE_MIN_SHARE or not chosen or best is None or any(best.ref in c.refs for c in chosen):
        return chosen
    lead = chosen[0]
    if best.score - best.bonus < FIRST_SOURCE_MIN_SHARE * (lead.score - lead.bonus):
        return chosen
    if len(chosen) >= MAX_QUOTES or len({c.ref for c in chosen}) >= MAX_SOURCES:
        return chosen
    return [*chosen, _completed(best, quotes)]


@dataclass
class _Prompt:
    """What the writer reads of a prompt: the question, the term it asks about, the law sources it may cite, the
    user's material it may quote as theirs, and the coverage-gap notes."""

    question: str
    asked: str | None  # the term key of a definition question
    sources: list[tuple[str, str]]  # (ref, body) of the law blocks
    context: list[tuple[str, str]]  # (heading, body) of the user's documents and memory
    gaps: list[re.Match[str]]
    allowed: list[str] = field(init=False)  # the refs it may cite
    labels: dict[str, str] = field(init=False)  # their acts' labels, for citation parsing

    def __post_init__(self) -> None:
        self.allowed = [ref for ref, _ in self.sources]
        self.labels = {split_ref(ref)[0]: split_ref(ref)[0] for ref in self.allowed}

    def quotable(self, ref: str, sentence: str) -> bool:
        return _cites_only(sentence, ref=ref, allowed=self.allowed, labels=self.labels)

    def trimmed(self, ref: str, sentence: str) -> str | None:
        return _without_foreign(sentence, ref, self.allowed, self.labels) if FOREIGN_POINTER_CUT else None

    def names_no_article(self, _: str, sentence: str) -> bool:
        return not find_citations(sentence, self.labels, evidence=self.allowed)


def _read(messages: list[Message], joined: str) -> _Prompt:
    question = unescape(_question(messages))
    term = definition_term(question)
    # Sources are read from the <kb_context> alone (a question or a persona holding a <source> block is not one);
    # only law sources, the blocks of kind lldbi (no kind: the golden markup), are cited. The user's documents and
    # memory are quoted as theirs, never as a basis (a contract clause is not a norm), and after the law: an
    # earlier turn or a document never leads the answer.
    kb = _KB.search(joined)
    found = list(_SOURCE.finditer(kb.group("kb"))) if kb else []
    return _Prompt(
        question=question, asked=term_key(clean_term(term)) if term else None,
        sources=[(unescape(m.group("ref")), m.group("body")) for m in found if m.group("kind") in (None, "lldbi")],
        context=[_without_heading(unescape(m.group("body"))) for m in found
                 if m.group("kind") in QUOTED_CONTEXT_KINDS][:MAX_CONTEXT_SOURCES],
        gaps=list(_GAP.finditer(joined)))


def _absent_name(number: str) -> str:
    """What the absent-article note calls the unit: an act's final provisions have a name, not a number (and not
    their printed name, which U11 would read as a citation)."""
    return "прикінцевих і перехідних норм акта" if number == FINAL_PROVISIONS else f"статті під номером {number}"


def _law_lines(prompt: _Prompt, chosen: list[_Quote], keep: set[str]) -> list[str]:
    if not prompt.sources:
        line = "У базі знань не знайдено норм, які відповідають на це питання; відповідь без джерел я не надаю."
        # with an act named but missing the gap sentence said why; otherwise the question itself gave nothing to find
        return [line if prompt.gaps else f"{line} {ASK_AGAIN}"]
    if not chosen:
        return ["Коротко: питання регулюють норми, наведені в підставах."]
    # With the act or the named article missing, what follows is related law, not the answer: say so.
    absent = absent_articles(prompt.question, prompt.allowed)
    opener = "Пов'язані норми, які є в базі знань" if prompt.gaps or absent else "Коротко"
    # worded so that no citation can be read from it: U11 would find an article the evidence does not hold
    notes = [f"Зверніть увагу: {_absent_name(num)} ({label}) серед знайдених норм немає, тому нижче — лише "
             "пов'язані норми." for label, num in absent]
    lines = [*notes, f"{opener}: {_quoted(chosen[0], keep)} ({'; '.join(chosen[0].refs)})."]
    details = sorted(chosen[1:], key=lambda q: (q.rank, q.pos))
    if details:
        lines.append("Детальніше:\n" + "\n".join(f"— {_quoted(q, keep)} ({'; '.join(q.refs)})." for q in details))
    return lines


def _material_lines(prompt: _Prompt, keep: set[str]) -> list[str]:
    """The best sentence of each of the user's documents and memory items, as theirs. A sentence that names an
    article is not repeated: outside the law sources U11 would see a citation without evidence, inside them the
    user's words would stand beside the article as if its own."""
    mine = []
    for heading, body in prompt.context:
        own = _candidates([(heading, body)], prompt.question, None, prompt.names_no_article)
        if own and own[0].score > 0:
            mine.append(f"— «{_clip(own[0].sentence, keep)}» ({heading}).")
    return ["З ваших матеріалів:\n" + "\n".join(mine)] if mine else []


def compose_answer(messages: list[Message]) -> str:
    # The layered path carries the KB in the system turn (seed 004); the legacy path in a user turn.
    joined = "\n".join(m.content for m in messages if m.role in ("system", "user"))
    orch = _ORCH_OPTIONS.search(joined)
    if orch:  # an ORCH choice: deterministically keep the rule's preference, which is listed first
        return orch.group("options").split("|")[0].strip()
    prompt = _read(messages, joined)
    lines: list[str] = [gap_sentence(unescape(g.group("reason") or ""), [unescape(g.group("names")).strip()])
                        for g in prompt.gaps]
    keep = set(question_lemmas(prompt.question))
    chosen = _choose(_candidates(prompt.sources, prompt.question, prompt.asked, prompt.quotable, prompt.trimmed))
    lines += _law_lines(prompt, chosen, keep)
    lines += _material_lines(prompt, keep)
    if prompt.sources:
        cited = list(dict.fromkeys(ref for q in chosen for ref in q.refs)) or prompt.allowed[:MAX_SOURCES]
        lines.append("Підстави: " + "; ".join(cited) + ".")
    return "\n\n".join(lines)


class OfflineProvider:
    name = "offline"

    def complete(self, *, model: str, messages: list[Message], max_tokens: int) -> Completion:
        text = compose_answer(messages)
        prompt_tokens = sum(count_tokens(m.content, model) for m in messages)
        completion_tokens = count_tokens(text, model)
        if completion_tokens > max_tokens:  # respect max_tokens like a real model would: cut, never exceed
            enc = encoding_for_model(model)
            text = enc.decode(enc.encode(text, disallowed_special=())[:max_tokens])
            completion_tokens = max_tokens
        return Completion(text=text, model=MODEL, prompt_tokens=prompt_tokens,
                          completion_tokens=completion_tokens, usage_reported=False)
