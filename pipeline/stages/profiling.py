"""U2 Query profiling: explicit article references, act cues, mode, goals and complexity. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from legaltext.definitions import find_term
from legaltext.lexicon import AMENDING_STEM, PRO, ActLexicon, find_nregs, is_amending_title, lemma_tokens
from legaltext.named_acts import CASE_ENDING
from legaltext.references import ArticleMention, article_mentions
from legaltext.text import content_lemmas, lemma, words
from pipeline.contracts import ActCue, ArticleRefCue, Intake, QueryProfile
from pipeline.stages.planning import CONSTITUTION_NREG

# Each article a question names is one exact search in U4: a question that names hundreds («ст.1 ст.2 … ст.560»,
# within the 4,000 characters) planned hundreds of searches. The first ARTICLE_REFS_MAX are searched.
ARTICLE_REFS_MAX = 12
_DOC_WORDS = frozenset({"мій", "мого", "моєму", "договір", "документ", "файл", "додаток", "скан", "вкладення"})
_MEMORY_WORDS = frozenset({"раніше", "минулого", "попередньо", "згадував", "казав", "писав"})


# An "abbreviation" that is a whole word — the catalog's «КОНСТИТУЦІЯ», the Constitution's only one-word name (its
# title's other word, «України», names nothing) — names its act in any case: «за Конституцією», «в Конституції»,
# «посилаючись на Конституцію» named no act, so the question was not searched within the Constitution.
WORD_ABBREVIATION_MIN = 6


def _is_word(abbrev: str) -> bool:
    return len(abbrev) >= WORD_ABBREVIATION_MIN and abbrev.isalpha()


@dataclass(frozen=True)
class _CueIndex:
    """Which catalog entries a question's words can name, so that ``_act_cues`` reads those entries only, not all
    ~8,200 of the catalog with every token (~15 ms a run): entry positions by abbreviation (as compared: the short
    ones exactly, the others lower-cased, whole-word ones also by lemma) and by a name form's first word."""

    exact: dict[str, tuple[int, ...]]
    lower: dict[str, tuple[int, ...]]
    lemmas: dict[str, tuple[int, ...]]
    first_words: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, lexicon: ActLexicon) -> _CueIndex:
        maps: tuple[dict[str, list[int]], ...] = ({}, {}, {}, {})
        exact, lower, lemmas, first_words = maps
        for i, entry in enumerate(lexicon.entries):
            for abbrev in entry.abbreviations:
                (exact if len(abbrev) <= 2 else lower).setdefault(
                    abbrev if len(abbrev) <= 2 else abbrev.lower(), []).append(i)
                if _is_word(abbrev):
                    lemmas.setdefault(lemma(abbrev.lower()), []).append(i)
            for form in entry.name_forms:
                first_words.setdefault(form[1] if form[0] == PRO and len(form) > 1 else form[0], []).append(i)
        return cls(*({k: tuple(dict.fromkeys(v)) for k, v in m.items()} for m in maps))

    def abbreviated(self, tokens: list[str]) -> list[int]:
        """Entries one of whose abbreviations may be among ``tokens`` (their positions, in catalog order)."""
        hits: set[int] = set()
        for tok in tokens:
            low = tok.lower()
            for found in (self.exact.get(tok), self.lower.get(low), self.lemmas.get(lemma(low))):
                hits.update(found or ())
        return sorted(hits)

    def named(self, words_: set[str]) -> list[int]:
        """Entries one of whose name forms begins (after «про») with one of ``words_``."""
        return sorted({i for w in words_ for i in self.first_words.get(w, ())})


# «Основний Закон» is the Constitution's other name (its ст. 160 day: «день прийняття Основного Закону»); two
# words, so no catalog alias holds it (a one-word form would make «основна відпустка» name the Constitution).
# Written small and followed by «про» it is the main law on a subject («основний закон про освіту»).
_BASIC_LAW = re.compile(r"(?<![\w])(?:Основн(?:ий|ого|ому|им)\s+Закон(?:у|ом|і)?(?![\w])|"
                        r"основн(?:ий|ого|ому|им)\s+закон(?:у|ом|і)?(?![\w])(?!\s+про\b))")


_SMALL_CODE = re.compile(r"\s*([а-яіїєґ]{2})(?![\w'’ʼ])", re.I)  # «цк» or «ЖК» right after an article number
_BEFORE_UKRAINE = re.compile(r"\s+(?:України|УРСР|УкрРСР)\b")


def _code_form(token: str, index: _CueIndex) -> str:
    """A code's two letters where only a code can stand — right after an article number or before «України» — read
    as the code's «…У» abbreviation when the two letters alone name nothing: «ЖК» is also a housing estate
    («квартира в ЖК «Сонячний»»), so the catalog holds the Housing Code as «ЖКУ» only, and «ст. 71 ЖК України»
    fetched article 71 of every act."""
    if not token.isupper() or token in index.exact:
        return token
    return token + "У" if (token + "У").lower() in index.lower else token


# A code's abbreviation declined as a word: «по КЗоТу», «за КУпАПом» — a case ending in small letters after a capital.
_DECLINED = re.compile(rf"^(?P<abbrev>\w*[А-ЯІЇЄҐ]){CASE_ENDING}$")


def _undeclined(token: str, index: _CueIndex) -> str:
    """The abbreviation a declined token stands for, when the catalog holds it (and not the token as written)."""
    m = _DECLINED.match(token)
    if m is None or len(m["abbrev"]) <= 2 or token.lower() in index.lower:
        return token
    return m["abbrev"] if m["abbrev"].lower() in index.lower else token


def _act_cues(text: str, lexicon: ActLexicon, mentions: list[ArticleMention]) -> list[tuple[ActCue, int]]:
    """Exact cues first: registration numbers, then abbreviations, then title/alias lemma sequences."""
    found: dict[str, tuple[ActCue, int]] = {}

    def add(entry_nreg: str, matched: str, how: str, pos: int) -> None:
        entry = lexicon.get(entry_nreg)
        if entry is None or entry.nreg in found:
            return
        found[entry.nreg] = (ActCue(nreg=entry.nreg, title=entry.title, label=entry.label, matched=matched,
                                    how=how, indexed=entry.indexed), pos)

    for nreg, start, _ in find_nregs(text):
        add(nreg, nreg, "nreg", start)
    for m in _BASIC_LAW.finditer(text):
        add(CONSTITUTION_NREG, m.group(0), "alias", m.start())
    # A two-letter abbreviation counts only as written («ЦК», not the syllable «цк»), except right after an article
    # number, where «ст. 1166 цк» can only name the code
    small = {after.start(1) for m in mentions if (after := _SMALL_CODE.match(text, m.end))}
    index = lexicon.derived("act_cues", lambda: _CueIndex.of(lexicon))
    tokens = []
    for m in re.finditer(r"[0-9A-Za-zА-Яа-яІіЇїЄєҐґ'’ʼ]+", text):
        tok = m.group(0).upper() if m.start() in small else m.group(0)
        if len(tok) == 2 and (m.start() in small or _BEFORE_UKRAINE.match(text, m.end())):
            tok = _code_form(tok, index)
        tok = _undeclined(tok, index)
        tokens.append((tok, m.start()))
    entries = lexicon.entries
    for entry in (entries[i] for i in index.abbreviated([tok for tok, _ in tokens])):
        for abbrev in entry.abbreviations:
            for tok, pos in tokens:
                same = tok == abbrev if len(abbrev) <= 2 else tok.lower() == abbrev.lower()
                if same or (_is_word(abbrev) and lemma(tok.lower()) == lemma(abbrev.lower())):
                    add(entry.nreg, tok, "abbreviation", pos)
    plain = lemma_tokens(text)
    pro = lemma_tokens(text, keep=frozenset({PRO}))  # for "про"-anchored law titles only
    q_plain, pos_plain = tuple(s for s, _ in plain), [p for _, p in plain]
    q_pro, pos_pro = tuple(s for s, _ in pro), [p for _, p in pro]
    for entry in (entries[i] for i in index.named({*q_plain, *q_pro})):
        for form in sorted(entry.name_forms, key=len, reverse=True):  # the fullest name: its words and place
            q_seq, positions = (q_pro, pos_pro) if form[0] == PRO else (q_plain, pos_plain)
            n = len(form)
            for i in range(len(q_seq) - n + 1):
                if q_seq[i:i + n] == form:
                    add(entry.nreg, " ".join(form), "title", positions[i] if i < len(positions) else 0)
                    break
    # A title shared by an indexed act and its repealed or amending namesakes ("державна служба": 889-19 and the
    # 1993 law 3723-12) names the indexed one: the others would only declare a coverage gap the base does not have.
    indexed_names = {cue.matched for cue, _ in found.values() if cue.how == "title" and cue.indexed}
    kept = [cp for cp in found.values() if cp[0].indexed or cp[0].how != "title" or cp[0].matched not in indexed_names]
    return sorted(kept, key=lambda cp: cp[1])


# «законопроєкт» is a bill, not an act: «законопроект про внесення змін до Конституції» named an amending law
_LAW_WORD = r"закон(?!опро[еє]кт)\w*|кодекс\w*"
_ACT_WORD_BEFORE = re.compile(rf"(?:{_LAW_WORD}|конституц\w*)\s+(?:україни\s+)?(?:[«\"]?про\s+)?$", re.I)
ACT_WORD_WINDOW = 30  # chars before a title's words in which "закону", "Кодексу" make them a name


def _names_the_act(text: str, cue: ActCue, pos: int) -> bool:
    """An abbreviation, a number or an alias names the act; a title's words do when the question says they are an
    act's: "закон про звернення громадян", "за Цивільним кодексом", "про відпустки". Without that, "під час
    воєнного стану" or "судовий збір" is what the question is about, not the act it cites."""
    if cue.how != "title":
        return True
    stems = cue.matched.split()
    if AMENDING_STEM in stems[:2]:  # one of thousands of amending laws: a subject, unless quoted
        return _quoted_at(text, pos)
    if any(s.startswith(("кодекс", "конституц")) for s in stems):
        return True
    act_word = bool(_ACT_WORD_BEFORE.search(text[max(0, pos - ACT_WORD_WINDOW):pos])) or _in_law_name(text, pos)
    # «запити про інформацію» are everyday words that happen to open a law's title («Про інформацію», a law the base
    # does not hold): alone they declared a coverage gap in an answer the base holds. A title the base does not
    # hold is named after «закон», in quotes, or written as a title; an indexed act's («повістка про
    # мобілізацію») is searched within it as before.
    if stems[0] == PRO:
        return cue.indexed or act_word or _quoted_at(text, pos) or text[pos:pos + 3] == "Про"
    return act_word


_LAW_PRO_BEFORE = re.compile(rf"(?:{_LAW_WORD})\s+(?:україни\s+)?[«\"]?про\s+(?:[^\s,.;:?!—–«»\"]+\s+){{1,3}}$",
                             re.I)


def _in_law_name(text: str, pos: int) -> bool:
    """The title's words stand a few words into the name «закон про …» gives: «закон про запобігання та протидію
    дискримінації» matched the law's «протидія дискримінації» three words after «про», and the law was searched as a
    topic only."""
    return bool(_LAW_PRO_BEFORE.search(text[max(0, pos - 2 * ACT_WORD_WINDOW):pos]))


def _quoted_at(text: str, pos: int) -> bool:
    return text[max(0, pos - 1):pos] in ("«", '"', "“", "„")


_ACT_HEAD = re.compile(r"\b(?P<head>[Кк]одекс\w*|[Зз]акон(?:у|ом|і|ів|ами|и)?)\b")
_ADJ_BEFORE = re.compile(r"((?:[А-ЯІЇЄҐа-яіїєґ'’ʼ-]+(?:ого|ому|им|ий|ій|ої|ою|ий|ня|ні)\s+){1,2})$")
# "закони про це", "закон про щорічні відпустки": a pronoun or a conjunction after "про" ends the name (whole words
# only: "що" stops "про що", not "про щорічні"); so does a second «про»: «закон про пенсії про страховий стаж» asks
# what the pension law says of the record, and the whole phrase named an amending law on disability pensions.
_TAIL_AFTER = re.compile(
    r"^\s*((?:України\s+)?(?:«[^»]{1,120}»|про(?:\s+(?!(?:про|щодо|стосовно|коли|чи|як|що|у|в|на|для|та|і|а|але|бо|якщо|щоб|"
    r"це|цей|ці|ця|цю|цієї|цій|цих|цими|цього|цьому|цим|той|ту|того|тому|тих|таке|такі|такий|таку|такої|такого|таких|"
    r"все|усе|всі|його|її|їх|нього|неї|них|свою|своє|свого|свої|мою|моє|мого|мої|нашу|вашу|мене|нас|вас|себе|нічого|"
    r"щось)\b)[^\s,.;:?!—–]+){1,4}))")
PHRASE_WINDOW = (50, 30)  # a cue this close (chars before, after) already binds the act word
# Words before "закон"/"кодекс" that ask about or point at an act rather than name one: «яким законом це
# врегульовано?», «відповідно до чинного закону» — no act to resolve.
_NAMELESS = frozenset({"який", "котрий", "цей", "той", "такий", "інший", "відповідний", "чинний", "окремий",
                       "спеціальний", "якийсь", "будь-який", "кожний", "новий", "старий", "наш", "ваш", "мій",
                       "свій", "ніякий", "жодний", "певний", "даний", "зазначений", "вказаний", "який-небудь"})


def _unresolved_phrases(text: str, cue_positions: list[int], skip: tuple[int, int] | None = None) -> list[str]:
    """Act words ("кодексу", "Закон") that no cue accounts for, with the words that qualify them."""
    phrases = []
    for m in _ACT_HEAD.finditer(text):
        p = m.start()
        if skip and skip[0] <= p < skip[1]:
            continue
        if any(p - PHRASE_WINDOW[0] <= pos <= p + PHRASE_WINDOW[1] for pos in cue_positions):
            continue
        # Words before «кодекс» name a code («Митного кодексу»); before «закон» they only say which law the user
        # means — «за українським законом», «суворішим законом», «чого законом» — and no law is named that way (the
        # Constitution's «Основний Закон» is a name of its own, act_names.jsonl).
        before = _ADJ_BEFORE.search(text[max(0, p - 60):p]) if m.group("head").lower().startswith("кодекс") else None
        if before and all(lemma(w) in _NAMELESS for w in words(before.group(1))):
            before = None
        after = _TAIL_AFTER.match(text[m.end():])
        # «закон про внесення змін до …» cut to four words names no one act of the thousands of amending laws
        if after and is_amending_title(after.group(1).removeprefix("України")):
            after = None
        phrase = (before.group(1) if before else "") + m.group("head") + (" " + after.group(1) if after else "")
        if before or after:  # the act word alone, in any case ("якщо в законі не вказано"), names no act
            phrases.append(phrase.strip())
    return list(dict.fromkeys(phrases))


def _first_refs(refs: list[ArticleRefCue]) -> list[ArticleRefCue]:
    """Each reference once, in the question's order, the first ARTICLE_REFS_MAX of them."""
    seen: set[tuple[str, str | None, str | None]] = set()
    unique = []
    for ref in refs:
        if (ref.article, ref.part, ref.act_nreg) not in seen:
            seen.add((ref.article, ref.part, ref.act_nreg))
            unique.append(ref)
    return unique[:ARTICLE_REFS_MAX]


def profile_query(intake: Intake, lexicon: ActLexicon) -> QueryProfile:
    text = intake.normalized
    term = find_term(text)
    mentions = article_mentions(text)
    cues = _act_cues(text, lexicon, mentions)
    if term:  # the words of the asked term name no act (an act named outside the term still counts)
        cues = [(c, pos) for c, pos in cues if not term[1] <= pos < term[2]]
    refs: list[ArticleRefCue] = []
    for m in mentions:
        # An act named right after the reference ("ст. 36 КЗпП") binds to it; else the nearest earlier cue.
        after = [c for c, pos in cues if m.end <= pos <= m.end + 60]
        before = [c for c, pos in cues if pos < m.start]
        candidates = after or before[-1:]
        bound = candidates[0] if candidates else None
        for num in m.numbers:
            refs.append(ArticleRefCue(article=num, part=m.part_no,
                                      act_nreg=bound.nreg if bound else None, matched=m.matched))
    refs = _first_refs(refs)
    vocab = {w.lower() for w in words(text)}
    mentions_docs = bool(vocab & _DOC_WORDS)
    mentions_memory = bool(vocab & _MEMORY_WORDS)
    mode = "memory" if mentions_memory and not cues and not refs else ("mixed" if mentions_docs else "law")
    goals = [g.strip() for g in re.split(r"(?<=\?)\s+|;\s+", text) if len(g.strip()) > 3] or [text]
    keywords = list(dict.fromkeys(content_lemmas(text)))
    score = len(goals) + len(cues) + (len(keywords) > 12)
    complexity = "simple" if score <= 1 else ("moderate" if score <= 3 else "complex")
    unresolved = _unresolved_phrases(text, [pos for _, pos in cues], skip=(term[1], term[2]) if term else None)
    named: list[ActCue] = []
    topic: list[ActCue] = []
    for cue, pos in cues:
        (named if _names_the_act(text, cue, pos) else topic).append(cue)
    return QueryProfile(mode=mode, law_only=mode == "law", act_hints=named, topic_acts=topic, article_refs=refs,
                        goals=goals, keywords=keywords, complexity=complexity,
                        unresolved_act_phrases=unresolved, definition_term=term[0] if term else None)
