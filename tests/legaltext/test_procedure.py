"""Which procedural code a question's dispute goes by: the other side it names decides the court."""

from __future__ import annotations

import pytest

from legaltext.procedure import code_court, court_of


@pytest.mark.parametrize(("question", "court"), [
    ("В який суд подавати позов на людину, яка винна мені гроші і живе в іншому місті?", "civil"),
    ("Позов до роботодавця про зарплату: чи можна розглянути спрощено?", "civil"),
    ("Хочу розлучитися, чоловік живе в іншій області. Куди подавати?", "civil"),
    ("Хочу оскаржити в суді наказ міськради, яким мені відмовили у видачі дозволу.", "administrative"),
    ("Патрульний виписав мені постанову за порушення ПДР. Скільки днів є, щоб подати позов?", "administrative"),
    ("Пенсійний фонд відмовив у перерахунку пенсії, подаю до суду.", "administrative"),
    ("Через незаконне рішення податкової я втратив клієнтів. Чи можна судитися?", "administrative"),
    ("Наше ТОВ програло справу. Скільки днів маємо на апеляцію?", "commercial"),
    ("Я ФОП, фірма-покупець не оплатила поставку за договором. Куди звертатися?", "commercial"),
    ("Мене підозрюють у крадіжці. Чи може слідчий провести обшук без ухвали?", "criminal"),
    ("У відділку мене били, щоб я підписав зізнання. Чи можуть його використати?", "criminal"),
    # or the question names the procedure itself, as an exam does
    ("Які наслідки має відмова особи від одержання судової повістки в адміністративному процесі?", "administrative"),
    ("У якому складі адміністративний суд розглядає справу?", "administrative"),
    # the criminal words come first: a case the prosecutor brings, whoever else the question names
    ("Прокурор оскаржує вирок, а поліцейський свідчив проти мене.", "criminal"),
])
def test_the_other_side_a_question_names_decides_the_court(question: str, court: str) -> None:
    assert court_of(question) == court


@pytest.mark.parametrize("question", [
    "Адміністрація школи не дає відпустку.",  # an employer, not a body of public power
    "Продавець — юридична особа — не повертає гроші за товар.",  # a consumer's claim is civil
    "Сусід затопив квартиру. Хто платить за ремонт?",
    "Який адміністративний штраф за їзду без прав?",  # an offence's fine is not the administrative court's case
])
def test_an_employer_a_seller_or_a_neighbour_is_a_civil_dispute(question: str) -> None:
    assert court_of(question) == "civil"


@pytest.mark.parametrize(("label", "court"), [
    ("КАС", "administrative"), ("Кодекс адміністративного судочинства України", "administrative"),
    ("ГПК", "commercial"), ("Господарський процесуальний кодекс України", "commercial"),
    ("КПК", "criminal"), ("Кримінальний процесуальний кодекс України", "criminal"),
    ("ЦПК", "civil"), ("Цивільний процесуальний кодекс України", "civil"),
    ("ЦК", None), ("КК", None), ("КЗпП", None), ("Закон «Про судовий збір»", None),
])
def test_a_procedural_code_is_known_by_its_label(label: str, court: str | None) -> None:
    assert code_court(label) == court
