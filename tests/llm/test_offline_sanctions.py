"""How the offline writer reads a law's sentence against the question: an offence's sanction with its conduct when
the question asks what the punishment is (the sanction is what answers it), its conduct alone otherwise (a sanction
is worded alike in every article of its code); and never by the words of what the sentence excepts."""

from __future__ import annotations

import pytest

from llm.providers import offline

THEFT_QUESTION = "Чи правда, що зараз, поки воєнний стан, за крадіжку дають мінімум п'ять років тюрми?"
THEFT = ("Крадіжка, вчинена у великих розмірах чи в умовах воєнного або надзвичайного стану, - карається "
         "позбавленням волі на строк від п'яти до восьми років.")
MINORS = ("Покарання у виді позбавлення волі особам, які не досягли до вчинення злочину вісімнадцятирічного віку, "
          "може бути призначене на строк від шести місяців до десяти років.")
OTHERS = [
    "Кримінальна відповідальність настає за вчинення кримінального правопорушення особою, яка досягла віку.",
    "Умисне легке тілесне ушкодження - карається штрафом до п'ятдесяти неоподатковуваних мінімумів доходів громадян.",
]


@pytest.mark.parametrize(("question", "asks"), [
    (THEFT_QUESTION, True),
    ("Скільки років дають за продаж наркотиків, якщо людина попалася вперше?", True),
    ("Який штраф за куріння на зупинці?", True),
    ("Вночі до мене в хату вліз грабіжник, я вдарив його сокирою. Мене тепер посадять?", True),
    ("Яке покарання за водіння в нетверезому стані?", True),
    ("Чи можна притягнути його до кримінальної відповідальності?", True),
    ("Що буде, якщо не прийти в ТЦК за повісткою?", True),
    ("Що мені за це буде?", True),
    ("Що буде з моєю пенсією, якщо я переїду?", True),  # read whole: no offence holds «пенсія»
    ("Мене перевели на іншу посаду без згоди. Це законно?", False),
    ("Чи можна звільнити вагітну жінку?", False),
])
def test_which_questions_ask_the_punishment(question: str, asks: bool) -> None:
    assert (offline._offence_form(question) is str) is asks


def _theft_lead(scorer: offline._Scorer, sentences: list[str]) -> float:
    return scorer.score(0, sentences[0]) - scorer.score(1, sentences[1])


def test_the_punishment_asked_is_read_in_the_offences_sanction(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the words alone (the meaning model's tip depends on the CPU's arithmetic): the theft article's sanction
    («позбавленням волі … від п'яти … років») counts for the question's «п'ять років тюрми»; read up to its sanction
    it held only «крадіжка … воєнного … стану», and in the evidence of this question (КК ст. 102's five items on
    minors' terms beside it) lost the lead to them."""
    sentences = [THEFT, MINORS, *OTHERS]
    with_rule = offline._Scorer(THEFT_QUESTION, sentences)
    monkeypatch.setattr(offline, "SANCTION_ASKED", 0)
    without_rule = offline._Scorer(THEFT_QUESTION, sentences)

    assert {"позбав", "воло", "рік"} <= with_rule.lemmas[0]
    assert not {"позбав", "воло", "рік"} & without_rule.lemmas[0]
    assert _theft_lead(with_rule, sentences) > _theft_lead(without_rule, sentences) + 1


def test_a_question_not_asking_the_punishment_reads_the_conduct_alone() -> None:
    question = "Чи є крадіжкою, якщо я взяв річ сусіда під час воєнного стану на п'ять днів?"
    sentences = [THEFT, MINORS, *OTHERS]
    scorer = offline._Scorer(question, sentences)
    assert not {"позбав", "воло"} & scorer.lemmas[0]


OUTSIDE_WARTIME = ("Те саме діяння, вчинене в умовах особливого періоду, крім воєнного стану, - карається "
                   "позбавленням волі на строк від п'яти до восьми років.")
IN_WARTIME = ("Діяння, передбачене частиною першою цієї статті, вчинене в умовах воєнного стану, - карається "
              "позбавленням волі на строк від п'яти до десяти років.")
NO_DISMISSAL = ("Не допускається звільнення працівника з ініціативи роботодавця в період його тимчасової "
                "непрацездатності (крім звільнення за пунктом 5 частини першої цієї статті).")


def test_what_a_sentence_excepts_is_not_what_it_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """«крім воєнного стану» says the rule is not about wartime: those words do not count for the sentence; a word
    it also holds outside the exception («звільнення») still does."""
    question = "Яке покарання за таке діяння, якщо його вчинено під час воєнного стану?"
    sentences = [OUTSIDE_WARTIME, IN_WARTIME, NO_DISMISSAL]
    scorer = offline._Scorer(question, sentences)
    assert not {"воєнни", "стан"} & scorer.lemmas[0]
    assert {"воєнни", "стан"} <= scorer.lemmas[1]
    assert "звільн" in scorer.lemmas[2]
    assert scorer.score(1, IN_WARTIME) > scorer.score(0, OUTSIDE_WARTIME)

    monkeypatch.setattr(offline, "EXCEPTION_CUT", 0)
    uncut = offline._Scorer(question, sentences)
    assert {"воєнни", "стан"} <= uncut.lemmas[0]
