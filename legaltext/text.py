"""Pure text helpers for Ukrainian legal text: normalisation, word splitting, lemmas, article references."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from legaltext.tables import read_pairs

_WORD = re.compile(r"[0-9A-Za-zÏïА-Яа-яЁёІіЇїЄєҐґ'’ʼ-]+")
_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'", "`": "'", "‘": "'"})
# Latin letters drawn like Cyrillic ones. A keyboard without «і» (the Russian layout) or a phone's autocorrect puts
# the Latin «i» in Ukrainian words — «звiльнити», «лiкарняний» — which the analyser then does not know, so the
# question loses the very words it asks about. Only inside a word that also holds a Cyrillic letter, and only when
# each of its Latin letters has a Cyrillic twin: «QR-код», «III-Б», «OLX» stay as written.
_LOOK_ALIKES = "aceiopxyïkACEIOPXYÏKBHMT"
_HOMOGLYPHS = str.maketrans(_LOOK_ALIKES, "асеіорхуїкАСЕІОРХУЇКВНМТ")
_TWINNED = frozenset(_LOOK_ALIKES)
_CYRILLIC = re.compile(r"[А-Яа-яЁёІіЇїЄєҐґ]")
_LATIN = re.compile(r"[A-Za-zÏï]")

# Words that carry no legal meaning in a question; kept short on purpose (lemmas, lower case).
STOPWORDS = frozenset(
    """і й та а але або чи що як який яка яке які де коли скільки чому хто що-небудь це цей ця ці той
    та також в у на до з із зі від для про по при за під над між через без не ні так бути мати могти
    якщо то ж же лише тільки ще вже свій його її їх він вона воно вони я ти ми ви себе весь кожний
    стаття частина пункт закон україна кодекс""".split()
)
# Lemmas that only frame a question or greet («Що робити?», «Чи можна?», «Чи законно?», «Допоможіть, будь ласка»,
# «Добрий день»): a question made of them alone tells no situation to look the law up for (recovery/gate.py).
QUESTION_FRAMES = frozenset(
    """робити зробити можний можна законно законний право треба потрібно правильно слід варта варто дозволити
    обов'язково допомогти підказати порадити пояснити сказати спитати запитати хотіти питання ласка дякувати
    привіт добрий день вечір ранок щось взагалі тоді далі потім""".split()
)
# Forms the analyser reads as another word: «його» → «йога», «мене», «мені» → «мен», «тому» → «том», «бути» →
# «бута». They are dropped as written, before their lemma could pass for a content word (in every question told in
# the first person «мен» matched the rare statute that says «мені»).
STOP_FORMS = STOPWORDS | frozenset(
    """мене мені мною нас нам нами вас вам вами його нього йому ньому ним її неї їй ній нею них їм ними тому
    бути вона чому""".split()
)


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    return re.sub(r"\s+", " ", text).strip()


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, 15.1): characters a renderer shows as nothing
# — zero-width space and joiners, the BOM, bidi marks and isolates, variation selectors, the soft hyphen, tags —
# among them the Hangul fillers, which are letters (Lo) that draw nothing. With U+2800 BRAILLE PATTERN BLANK, a
# symbol (So) that draws an empty cell.
_BLANK = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]")
# What a reader sees: letters, numbers, punctuation and symbols. Not whitespace of any script (Z*), control and
# format characters (Cc, Cf), combining marks with nothing to sit on (M*), unassigned or private code points.
_VISIBLE_CATEGORIES = frozenset("LNPS")


def has_visible_text(text: str) -> bool:
    """True when ``text`` shows anything to a reader: a question made only of zero-width characters, combining
    marks, the BOM or the whitespace of other scripts is as empty as ``""`` (and reached U1 as a question)."""
    return any(unicodedata.category(c)[0] in _VISIBLE_CATEGORIES for c in _BLANK.sub("", text))


def _unmixed_part(part: str) -> str:
    if not (_CYRILLIC.search(part) and _LATIN.search(part)):
        return part
    return part.translate(_HOMOGLYPHS) if all(c in _TWINNED for c in _LATIN.findall(part)) else part


def unmixed(text: str) -> str:
    """``text`` with the Latin look-alike letters of its mixed-script words written in Cyrillic («звiльнити» →
    «звільнити»); every other character as it was."""
    return _WORD.sub(lambda m: "-".join(_unmixed_part(p) for p in m.group().split("-")), text)


def words(text: str) -> list[str]:
    return [w.strip("-'").lower() for w in _WORD.findall(unmixed(normalize(text))) if w.strip("-'")]


class _Tag(Protocol):
    POS: str | None

    def __contains__(self, grammeme: object) -> bool: ...


class _Parse(Protocol):
    normal_form: str
    tag: _Tag


class _Analyzer(Protocol):
    """What we use of pymorphy3's MorphAnalyzer (pymorphy3 ships no type hints)."""

    def parse(self, word: str) -> list[_Parse]: ...

    def word_is_known(self, word: str) -> bool: ...


@lru_cache(maxsize=1)
def _morph() -> _Analyzer:
    import pymorphy3  # loaded on first use: the dictionaries take a while and many processes never lemmatise

    analyzer: _Analyzer = pymorphy3.MorphAnalyzer(lang="uk")
    return analyzer


# Where Ukrainian spelling puts an apostrophe (after a labial or р, before я, ю, є, ї): people often type none.
_APOSTROPHE_SLOT = re.compile(r"(?<=[бпвмфр])(?=[яюєї])")


def _with_apostrophe(word: str) -> str:
    """«зобовязаний» as «зобов'язаний»: an unknown word the dictionary knows with an apostrophe in one of its slots;
    any other word as it is (a known word is never changed)."""
    if "'" in word or not _APOSTROPHE_SLOT.search(word) or _morph().word_is_known(word):
        return word
    for slot in _APOSTROPHE_SLOT.finditer(word):
        fixed = f"{word[:slot.start()]}'{word[slot.start():]}"
        if _morph().word_is_known(fixed):
            return fixed
    return word


# A collective numeral counts what its cardinal counts: the statute's «троє і більше дітей» is the user's «трьох
# дітей», yet the analyser reads «троє» first as «троя» (Troy) and «двоє» as a lemma of its own, so the writer, which
# matches first readings, never met the mobilisation law's item on fathers of three. No act here names Troy.
_CARDINALS = {"двоє": "два", "троє": "три", "троя": "три", "четверо": "чотири", "п'ятеро": "п'ять",
              "шестеро": "шість", "семеро": "сім", "обоє": "обидва"}


def lemma(word: str) -> str:
    """The analyser's first reading of ``word`` (``readings``)."""
    return readings(word)[0]


@lru_cache(maxsize=200_000)
def readings(word: str) -> tuple[str, ...]:
    """Every lemma the analyser can read ``word`` as, its first reading first. The analyser scores a word's
    parses alike, so ``lemma`` takes the first and splits one word's forms («посада» → «посада», «посаду» →
    «посад»; «рік» → «ріка», «року» → «рок»; «селі» → «сель»); the lexical signal indexes every reading, so two
    forms of one word always share the right one."""
    if word.isdigit() or len(word) < 3:
        return (word,)
    parses = _morph().parse(_with_apostrophe(word))
    return tuple(dict.fromkeys(_CARDINALS.get(str(p.normal_form), str(p.normal_form)) for p in parses))


_LETTERS = "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя"
# Letters a writer of Ukrainian swaps most (Russian habits, a keyboard's neighbouring layout): tried before any
# other single replacement.
_SWAPS = {"и": "іы", "і": "иї", "ї": "і", "е": "єэ", "є": "е", "г": "ґ", "ґ": "г", "ы": "и", "э": "е", "ё": "е"}
SLIP_MIN_CHARS = 5  # shorter unknown words are abbreviations more often than slips («тцк», «сбор»)


def _slip_tiers(word: str) -> list[list[str]]:
    """Single edits of ``word``, most likely first: an apostrophe, a doubled letter, a swapped pair of look-alike
    letters, two letters transposed, then any other replacement, deletion or insertion. The first letter stays."""
    cut = [(word[:i], word[i:]) for i in range(1, len(word) + 1)]
    apostrophe = [a + "'" + b for a, b in cut if b]
    doubled = [a + b[0] + b for a, b in cut if b] + [a + a[-1] + b[1:] for a, b in cut if b]
    swapped = [a + c + b[1:] for a, b in cut if b for c in _SWAPS.get(b[0], "")]
    transposed = [a + b[1] + b[0] + b[2:] for a, b in cut if len(b) > 1]
    other = ([a + c + b[1:] for a, b in cut if b for c in _LETTERS if c != b[0]]
             + [a + b[1:] for a, b in cut if b] + [a + c + b for a, b in cut for c in _LETTERS])
    return [apostrophe, doubled, swapped, transposed, other]


@lru_cache(maxsize=20_000)
def spelled(word: str) -> str:
    """A question's word with a typing slip mended: «поясненя» → «пояснення», «прізвіще» → «прізвище»,
    «чиновнік» → «чиновник». Only an unknown Cyrillic word of ``SLIP_MIN_CHARS`` letters or more, and only when
    the likeliest kind of edit that yields a known word yields exactly one; otherwise the word as typed."""
    if len(word) < SLIP_MIN_CHARS or "-" in word or not all(c in _LETTERS or c in "'ыэё" for c in word):
        return word
    morph = _morph()
    if morph.word_is_known(_with_apostrophe(word)):
        return word
    for tier in _slip_tiers(word):
        known = {w for w in tier if w != word and morph.word_is_known(w)}
        if known:
            return known.pop() if len(known) == 1 else word
    return word


SURZHYK_FILE = Path(__file__).with_name("surzhyk.tsv")


def read_surzhyk(path: Path) -> dict[str, str]:
    """The file's forms (``surzhyk.tsv``: its header says how to write one; ``legaltext.tables.read_pairs``)."""
    return read_pairs(path, shape="form<TAB>Ukrainian form", one_word_keys=True)


@lru_cache(maxsize=1)
def _surzhyk() -> dict[str, str]:
    return read_surzhyk(SURZHYK_FILE)


def _in_case_of(typed: str, word: str) -> str:
    """``word`` in the letter case of ``typed``: all capitals, a first capital, or as it is."""
    if typed.isupper() and len(typed) > 1:
        return word.upper()
    return word[0].upper() + word[1:] if typed[0].isupper() else word


def ukrainian_words(text: str) -> str:
    """``text`` with each Russian or surzhyk form of ``surzhyk.tsv`` written in Ukrainian («уволили» →
    «звільнили»), its capital kept; every other character as it was."""
    table = _surzhyk()

    def ukrainian(m: re.Match[str]) -> str:
        found = table.get(m.group().lower())
        return _in_case_of(m.group(), found) if found else m.group()

    return _WORD.sub(ukrainian, text)


def _mended_word(word: str) -> str:
    fixed = spelled(word.lower())
    return word if fixed == word.lower() else _in_case_of(word, fixed)


def mended(text: str) -> str:
    """``text`` with each word's typing slip mended as ``spelled`` mends it (a capital kept), every other character
    as it was: the text a model embeds, which reads «поясненя» as no word at all."""
    return _WORD.sub(lambda m: "-".join(_mended_word(p) if p else p for p in m.group().split("-")), text)


# The courtesies a message opens and closes with («Доброго дня! Підкажіть, будь ласка, …», «… Заздалегідь дякую!»):
# no word of them is law, and the model that embeds the question reads them as part of what is asked.
_OPENING = re.compile(
    r"^(?:(?:(?:доброго|добрий|доброї)\s+(?:дня|день|вечора|вечір|ранку|ранок|доби)|вітаю|привіт|здрастуйте|"
    r"здравствуйте|доброго\s+здоров['’ʼ]я|шановн\w+(?:\s+(?:юрист|адвокат|консультант|пан)\w*)?|"
    r"(?:підкажіть|допоможіть|порадьте|скажіть|поясніть)(?:[,\s]+будь\s+ласка)?|будь\s+ласка|"
    r"(?:у\s+мене|маю)\s+(?:таке\s+|одне\s+)?(?:питання|запитання))(?=[\s!.,:;—–-])[\s!.,:;—–-]*)+", re.I)
_CLOSING = re.compile(
    r"(?<=[.!?…])(?:\s*(?:(?:заздалегідь\s+|щиро\s+|дуже\s+)?дякую(?:\s+за\s+(?:відповідь|допомогу|пораду|"
    r"увагу))?|(?:буду\s+)?(?:дуже\s+)?вдячн\w+(?:\s+за\s+(?:відповідь|допомогу|пораду))?|"
    r"дуже\s+потрібна\s+(?:ваша\s+)?(?:порада|допомога|відповідь))[\s!.)…]*)+$", re.I)


def without_courtesies(text: str) -> str:
    """``text`` without the greeting and the request it opens with and the thanks it closes with; the text as it
    was when nothing else is left (a greeting alone is still what the user wrote)."""
    rest = _CLOSING.sub("", _OPENING.sub("", text)).strip()
    return rest if _WORD.search(rest) else text


_LOWER_CYRILLIC = re.compile(r"[а-яіїєґ]")


def as_question(text: str) -> str:
    """``text`` begun with a capital and ended with «?» where it has neither («чи можуть звільнити на лікарняному» →
    «Чи можуть звільнити на лікарняному?»): the model that embeds a question reads a lower-case one, cut off without
    its mark, as another text. Only a first Cyrillic letter is raised and only a text ending in a letter or a digit
    gains the mark; every other character as it was."""
    if not text:
        return text
    if _LOWER_CYRILLIC.match(text):
        text = text[0].upper() + text[1:]
    return f"{text}?" if text[-1].isalnum() else text


def question_words(text: str) -> list[str]:
    """A question's words as a reader takes them: slips mended (``spelled``), and a compound the dictionary does
    not know («фірма-покупець», «мама-пенсіонерка») followed by its parts."""
    out = []
    for w in words(text):
        w = spelled(w)
        out.append(w)
        if "-" in w and not _morph().word_is_known(w):
            out.extend(p for p in w.split("-") if len(p) >= 3)
    return out


def _meaningful(word: str, first: str) -> bool:
    return word not in STOP_FORMS and first not in STOPWORDS and (len(first) >= 3 or first.isdigit())


# «Звільнення від» is release, not dismissal: «звільнення від кримінальної відповідальності», «підлягає звільненню від
# роботи із збереженням середнього заробітку», «звільняються від сплати». The stems are one lemma's, so a question
# about dismissal («Чи можна звільнити вагітну жінку?») matched КЗпП ст. 178's release from work as well as ст. 184's
# prohibition, and КК's exemptions from punishment filled labour answers. A word of these stems followed by «від»
# is read as one lemma of its own, RELEASE_LEMMA, verb or noun alike: a question about release still meets it.
RELEASE_STEMS = ("звільн",)
RELEASE_LEMMA = "звільнення_від"


def _released(read: tuple[str, ...], following: str | None) -> tuple[str, ...]:
    return (RELEASE_LEMMA,) if following == "від" and read[0].startswith(RELEASE_STEMS) else read


def content_readings(text: str, *, question: bool = False) -> list[tuple[str, ...]]:
    """For each meaningful word, in order, the lemmas it may be (``readings``). A word whose first reading is a
    stopword is dropped, as in ``content_lemmas``; so are readings that are stopwords or too short. A word of
    RELEASE_STEMS before «від» is its release sense."""
    out = []
    seq = question_words(text) if question else words(text)
    for i, w in enumerate(seq):
        read = readings(w)
        if _meaningful(w, read[0]):
            read = _released(read, seq[i + 1] if i + 1 < len(seq) else None)
            out.append(tuple(r for r in read if r not in STOPWORDS and (len(r) >= 3 or r.isdigit())))
    return out


def question_lemmas(text: str) -> list[str]:
    """``content_lemmas`` of a question read by ``question_words``."""
    return [read[0] for read in content_readings(text, question=True)]


def content_lemmas(text: str) -> list[str]:
    """Lemmas of the meaningful words, in order (duplicates kept: term frequency matters)."""
    return [read[0] for read in content_readings(text)]


# The statute names an action by its verbal noun — «не допускається звільнення», «строк оскарження», «порядок
# відшкодування» — where a person asks with the verb: «чи можуть звільнити», «як оскаржити». The lemmas differ, so
# BM25 never joined them (КЗпП ст. 40's prohibition did not hold the question's «звільнити»). A verb's noun is formed
# regularly: the stem with «-ння» after «а»/«я» (розірвати → розірвання), «-ення» for «-ити»/«-іти»/«-ути» with the
# consonant alternations (оскаржити → оскарження, позбавити → позбавлення, засудити → засудження), «-ття»
# (прийняти → прийняття). Only candidates the dictionary knows as that noun are kept: no guessed word reaches the
# index. A whole derivational family (every corpus lemma sharing the first six letters) lowered eval/natural dev; the
# verbal noun alone raised it (README "Retrieval quality", session 19).
_ALTERNATIONS = (("ст", ("щ",)), ("зд", ("ждж",)), ("т", ("ч",)), ("д", ("дж",)), ("с", ("ш",)), ("з", ("ж",)))
_LABIALS = "бвмпф"


def _noun_candidates(verb: str) -> list[str]:
    stem = verb[:-2]  # «звільни», «розірва», «поверну»
    out = [stem + "ття"] + ([stem + "ння"] if stem[-1] in "ая" else [])
    if stem[-1] in "иіяу":
        base = stem[:-1]
        bases = [base] + [base[:-len(tail)] + alt for tail, alts in _ALTERNATIONS if base.endswith(tail)
                          for alt in alts]
        if base[-1:] in _LABIALS:
            bases.append(base + "л")
        out += [b + "ення" for b in bases]
    return out


@lru_cache(maxsize=20_000)
def verbal_nouns(lemma: str) -> tuple[str, ...]:
    """The nouns naming the action of the verb ``lemma`` («звільнити» → «звільнення»; «звернутися» → «звернення»);
    () for any other word."""
    verb = lemma[:-2] if lemma.endswith("тися") else lemma
    if not verb.endswith("ти") or len(verb) < 5:
        return ()
    morph = _morph()
    return tuple(c for c in dict.fromkeys(_noun_candidates(verb)) if morph.word_is_known(c)
                 and any(str(p.normal_form) == c and "NOUN" in p.tag for p in morph.parse(c)))


# A title set in the running text of an article («Інші заохочувальні та компенсаційні виплати.» between the parts of
# Закон «Про оплату праці» ст. 2, «Загальні положення про правочини» before a chapter) is a short noun phrase:
# adjectives before their noun, nothing that predicates («Усі об'єднання громадян рівні перед законом» has an
# adjective after its noun; «Заява повинна бути вмотивованою» a verb).
TITLE_PHRASE_MAX_WORDS = 6
_TITLE_POS = frozenset({"NOUN", "ADJF", "CONJ", "NUMR", "PREP", "NPRO"})
_NOT_TITLE = re.compile(r"[-–—:;,()\d]")


def is_title_phrase(text: str) -> bool:
    """``text`` reads as a title, not a statement: at most TITLE_PHRASE_MAX_WORDS words, capitalised, no
    punctuation inside, nouns with the adjectives, numerals, conjunctions and prepositions before them, no verb."""
    phrase = text.strip().rstrip(".")
    if not phrase[:1].isupper() or _NOT_TITLE.search(phrase):
        return False
    seq = words(phrase)
    if not seq or len(seq) > TITLE_PHRASE_MAX_WORDS:
        return False
    noun = False
    for word in seq:
        parses = _morph().parse(word)
        if (parses[0].tag.POS not in _TITLE_POS or any(_finite(p.tag) for p in parses)
                or (noun and any(_predicates(p.tag) for p in parses))):
            return False
        noun = noun or parses[0].tag.POS == "NOUN"
    return noun


def _finite(tag: _Tag) -> bool:
    """A verb in a tense («діє», read first as a noun's form): the phrase says something."""
    return tag.POS == "VERB" and any(t in tag for t in ("pres", "past", "futr"))


def _predicates(tag: _Tag) -> bool:
    """An adjective in the nominative after its noun says something of it («об'єднання … рівні»)."""
    return tag.POS == "ADJF" and "nomn" in tag
