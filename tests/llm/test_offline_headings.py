"""A lay idea whose statutory phrase is split between an article's heading and its text. The thesaurus gives
«інтимні фото» as «поширення конфіденційної інформації про особу» (КК ст. 182's text) and «недоторканність
приватного життя» (its heading): the offline writer reads each sentence under its article's heading, so the
sentence that holds half the phrase and the heading the rest answers the idea (llm/providers/offline.py,
PHRASE_IN_HEADING)."""

from __future__ import annotations

import pytest

from assemble.prompt import SourceBlock
from legaltext.sentences import split_sentences
from llm.providers import offline

PRIVACY = SourceBlock(
    "КК ст. 182", "k182", "Порушення недоторканності приватного життя",
    "1. Незаконне збирання, зберігання, використання, знищення, поширення конфіденційної інформації про особу або "
    "незаконна зміна такої інформації, крім випадків, передбачених іншими статтями цього Кодексу, - караються "
    "штрафом від п'ятисот до однієї тисячі неоподатковуваних мінімумів доходів громадян або виправними роботами на "
    "строк до двох років.")
# what retrieval ranked above it: the same words about other things
PETITIONS = SourceBlock(
    "Закон «Про звернення громадян» ст. 10", "k10", "Заборона розголошення відомостей, що містяться у зверненнях",
    "Не допускається розголошення одержаних із звернень відомостей про особисте життя громадян без їх згоди. "
    "Не допускається з'ясування даних про особу громадянина, які не стосуються звернення.")
THREAT = SourceBlock(
    "ЦК ст. 1164", "k1164", "Наслідки неусунення загрози життю, здоров'ю, майну фізичної особи",
    "1. У разі неусунення загрози життю, здоров'ю, майну фізичної особи або майну юридичної особи заінтересована "
    "особа має право вимагати: 1) вжиття невідкладних заходів щодо усунення загрози; 2) відшкодування завданої "
    "шкоди; 3) заборони діяльності, яка створює загрозу.")
OTHERS = [SourceBlock(f"ЦК ст. {n}", f"k{n}", heading, text) for n, heading, text in (
    (526, "Загальні умови виконання зобов'язання",
     "Зобов'язання має виконуватися належним чином відповідно до умов договору та вимог цього Кодексу."),
    (1046, "Договір позики", "За договором позики одна сторона передає у власність другій стороні грошові кошти."),
)]
QUESTION = "Мене шантажують інтимними фото. Куди звертатися?"


def word_scores(*blocks: SourceBlock) -> dict[str, float]:
    """Each block's first sentence scored on words alone, read under its heading."""
    sentences = [split_sentences(b.text)[0] for b in blocks]
    scorer = offline._Scorer(QUESTION, sentences, [b.heading for b in blocks])
    return {b.article_ref: scorer.score(i, s) for i, (b, s) in enumerate(zip(blocks, sentences, strict=True))}


def test_a_phrase_half_in_the_heading_answers_the_idea() -> None:
    # when
    scores = word_scores(PETITIONS, THREAT, PRIVACY, *OTHERS)
    # then КК ст. 182 holds the idea; the sentences sharing a word or two of it do not
    assert scores["КК ст. 182"] > 0
    assert max(v for k, v in scores.items() if k != "КК ст. 182") < scores["КК ст. 182"]


def test_read_without_its_heading_the_sentence_loses_the_idea(monkeypatch: pytest.MonkeyPatch) -> None:
    # what the rule changes: the sentence alone never holds the whole phrase
    monkeypatch.setattr(offline, "PHRASE_IN_HEADING", 0)
    assert word_scores(PETITIONS, THREAT, PRIVACY, *OTHERS)["КК ст. 182"] == 0


def test_a_heading_alone_never_holds_the_idea() -> None:
    # given a sentence under the same heading that says none of the phrase: the heading does not make it answer
    bare = SourceBlock("КК ст. 182", "k182", PRIVACY.heading,
                       "Примітка. Істотною шкодою у цій статті вважається така шкода, яка в сто і більше разів "
                       "перевищує неоподатковуваний мінімум доходів громадян.")
    assert word_scores(bare, THREAT)["КК ст. 182"] == 0


def test_a_word_of_the_phrase_under_a_heading_holding_the_rest_is_not_the_idea() -> None:
    # given «шантаж» → «вимагання погроза розголошення відомостей»: a heading holding three of the four words
    # above a sentence holding the fourth
    aside = SourceBlock("КК ст. 1", "k1", "Погроза розголошення відомостей",
                        "Вимагання карається позбавленням волі на строк до трьох років.")
    # then the heading does not complete it (PHRASE_SHARE_IN_SENTENCE: half the phrase in the sentence itself)
    assert word_scores(aside, THREAT)["КК ст. 1"] == 0
