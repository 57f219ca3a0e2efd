"""A long statute sentence states its case first and its rule after a dash («…, - протягом десяти днів …», «…, -
карається …»). Cut around the clauses holding the question's words, the quote kept the case and dropped the term or
the penalty the sentence exists for: the camera-fine question quoted КУпАП ст. 289 without «протягом десяти днів з дня
набрання постановою законної сили». The rule after the dash now stays in the quote."""

from __future__ import annotations

import pytest

from assemble.prompt import SourceBlock, legacy_messages
from legaltext.text import question_lemmas
from llm.providers import offline
from pipeline.contracts import SpecialistProfile

TERM = "протягом десяти днів з дня набрання постановою законної сили"
APPEAL = ("Скаргу на постанову по справі про адміністративне правопорушення може бути подано протягом десяти днів з "
          "дня винесення постанови, а щодо постанов по справі про адміністративні правопорушення у сфері забезпечення "
          "безпеки дорожнього руху, зафіксовані в автоматичному режимі, безпеки на автомобільному транспорті, "
          "зафіксовані за допомогою засобів фото- і кінозйомки, відеозапису, у тому числі в автоматичному режимі, "
          "постанов у справі про адміністративні правопорушення, передбачені статтею 132 -2 цього Кодексу, та/або "
          "про порушення правил зупинки, стоянки, паркування транспортних засобів, зафіксовані в режимі фотозйомки "
          f"(відеозапису), - {TERM}.")
CAMERA = "Штраф прийшов з камери, яка фіксує в автоматичному режимі. Скільки днів маю, щоб оскаржити постанову?"
FINE = "тягне за собою накладення штрафу в розмірі двадцяти п’яти неоподатковуваних мінімумів доходів громадян"
NO_LICENCE = ("Керування транспортним засобом особою, яка не має при собі або не пред’явила у спосіб, який дає "
              "можливість поліцейському прочитати та зафіксувати дані, що містяться в посвідченні водія відповідної "
              "категорії, реєстраційному документі на транспортний засіб, а також полісі (договорі) обов’язкового "
              "страхування цивільно-правової відповідальності власників наземних транспортних засобів (страхового "
              f"сертифіката \"Зелена картка\") - {FINE}.")
NAMES = ("Заява містить найменування сторін, їх місцезнаходження (для юридичних осіб) або місце проживання чи "
         "перебування (для фізичних осіб), поштовий індекс, ідентифікаційний код юридичної особи в Єдиному державному "
         "реєстрі підприємств і організацій України - учасників третейського розгляду, реєстраційний номер облікової "
         "картки платника податків (для фізичних осіб - громадян України), відомі номери засобів зв’язку, адреси "
         "електронної пошти, відомості про наявність або відсутність електронного кабінету.")


def test_the_term_after_the_dash_stays_in_a_cut_quote() -> None:
    clipped = offline._clip(APPEAL, set(question_lemmas(CAMERA)))
    assert clipped.endswith(f"… - {TERM}")
    assert "в автоматичному режимі" in clipped and len(clipped) <= offline.CLIP_CHARS


def test_without_it_the_cut_lost_the_term(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "DISPOSITION_CHARS", 0)
    assert TERM not in offline._clip(APPEAL, set(question_lemmas(CAMERA)))


@pytest.mark.parametrize("question", ["Забув удома поліс страхування, що мені буде?",
                                      "Забув удома посвідчення водія, а тут зупинили поліцейські. Що буде?"])
def test_the_fine_stays_whatever_part_of_the_case_was_asked(question: str) -> None:
    clipped = offline._clip(NO_LICENCE, set(question_lemmas(question)))
    assert clipped.endswith(FINE) and len(clipped) <= offline.CLIP_CHARS


def test_a_dash_inside_a_name_or_a_bracket_is_no_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    assert offline._disposition(NAMES.rstrip(".")) == ("", "")
    keep = set(question_lemmas("Що треба вказати в заяві про електронний кабінет?"))
    clipped = offline._clip(NAMES, keep)
    monkeypatch.setattr(offline, "DISPOSITION_CHARS", 0)
    assert clipped == offline._clip(NAMES, keep)


def test_the_answer_quotes_the_term() -> None:
    block = SourceBlock("КУпАП ст. 289", "k289", "Строк оскарження постанови по справі про адміністративне "
                        "правопорушення", APPEAL)
    messages = legacy_messages(profile=SpecialistProfile(slug="demo"), blocks=[block], question=CAMERA)
    assert TERM in offline.compose_answer(messages)


@pytest.mark.parametrize(("sentence", "figure"), [
    ("робота в надурочний час оплачується в подвійному розмірі годинної ставки", True),
    ("у півтора рази більше", True),
    ("не менше третини строку покарання", True),
    ("за згодою третьої особи", False),
    ("роботодавець повинен вести облік надурочних робіт", False),
])
def test_a_multiple_or_a_fraction_is_a_figure(sentence: str, figure: bool) -> None:
    assert bool(offline._FIGURE.search(sentence)) is figure


def test_a_cut_inside_a_bracket_closes_it() -> None:
    sentence = ("У зв'язку з веденням бойових дій у районах, в яких розташоване підприємство, установа, організація, "
                "та "
                "існування загрози для життя і здоров'я працівника він може розірвати трудовий договір за власною "
                "ініціативою у строк, зазначений у його заяві (крім випадків примусового залучення до суспільно "
                "корисних робіт в умовах воєнного стану, залучення до виконання робіт на об'єктах критичної "
                "інфраструктури).")
    clipped = offline._clip(sentence, set(question_lemmas("Біля заводу йдуть бої. Мене можуть звільнити за прогул?")))
    assert clipped.count("(") == clipped.count(")") and clipped.endswith("…)")
    assert "у строк, зазначений у його заяві" in clipped and len(clipped) <= offline.CLIP_CHARS + 1
