"""Which of the evidence's acts a question names, from a source's label (legaltext/named_acts.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from legaltext.named_acts import named_labels


def names_act(question: str, label: str) -> bool:
    """Whether the question names the act a source's label stands for."""
    return bool(named_labels(question, [label]))


NAMED = [
    pytest.param("Чи обов'язково служити в армії за Конституцією?", "КУ", id="constitution-instrumental"),
    pytest.param("Скільки років є, щоб подати в суд на боржника за Цивільним кодексом?", "ЦК",
                 id="civil-code-read-two-ways"),
    pytest.param("Що про це каже Цивільний процесуальний кодекс?", "ЦПК", id="procedure-code"),
    pytest.param("Згідно з Кримінальним кодексом, з якого віку відповідальність?", "КК", id="criminal-code"),
    pytest.param("Що каже Трудовий кодекс про відпустку?", "КЗпП", id="labour-code-colloquial"),
    pytest.param("Скільки днів на оплату штрафу по КУпАП?", "КУпАП", id="abbreviation-as-written"),
    pytest.param("А по кзпп як?", "КЗпП", id="long-abbreviation-any-case"),
    pytest.param("Що каже ст. 185 ККУ?", "КК", id="the-abbreviation-people-write"),
    pytest.param("ст. 130 КпАП", "КУпАП", id="another-abbreviation-of-the-offences-code"),
    pytest.param("По КЗоТу чи можна звільнити?", "КЗпП", id="the-russian-abbreviation-declined"),
    pytest.param("Який штраф за КУпАПом?", "КУпАП", id="an-abbreviation-declined"),
    pytest.param("За Житловим кодексом чи можна виселити?", "Житловий Кодекс України", id="code-by-its-title"),
    pytest.param("По закону про звернення громадян скільки мають відповідати?", "Закон «Про звернення громадян»",
                 id="law-after-the-word-law"),
    pytest.param("А за законом про відпустки?", "Закон «Про відпустки»", id="one-word-title"),
    pytest.param("Що каже закон про військовий обов'язок?", "Закон «Про військовий обов'язок і військову службу»",
                 id="law-by-its-first-words"),
]

NOT_NAMED = [
    pytest.param("Що вирішує Конституційний Суд?", "КУ", id="constitutional-court-is-not-the-constitution"),
    pytest.param("Скільки років є, щоб подати в суд за Цивільним кодексом?", "ЦПК", id="civil-is-not-procedure"),
    pytest.param("Що каже Кримінальний процесуальний кодекс?", "КК", id="procedure-is-not-the-criminal-code"),
    pytest.param("Що каже Трудовий кодекс про відпустку?", "Закон «Про відпустки»",
                 id="a-topic-after-про-is-not-a-law"),
    pytest.param("Мої звернення громадяни ігнорують", "Закон «Про звернення громадян»", id="title-words-without-law"),
    pytest.param("Хочу знати, що таке цк", "ЦК", id="short-abbreviation-only-as-written"),
    pytest.param("Що каже КУпАПов?", "КУпАП", id="not-a-case-ending"),
    pytest.param("Що каже закон про захист прав споживачів?", "Закон «Про захист персональних даних»",
                 id="another-law-with-the-same-first-word"),
    pytest.param("Чи можна звільнити працівника?", "", id="no-label"),
]


@pytest.mark.parametrize(("question", "label"), NAMED)
def test_a_question_names_the_act_of_the_label(question: str, label: str) -> None:
    assert names_act(question, label)


@pytest.mark.parametrize(("question", "label"), NOT_NAMED)
def test_a_question_does_not_name_the_act_of_the_label(question: str, label: str) -> None:
    assert not names_act(question, label)


UPPER = "АБВГҐДЕЄЖЗИІЇЙКЛМНОПРСТУФХЦЧШЩЮЯ"


@given(abbreviation=st.text(alphabet=UPPER, min_size=2, max_size=6),
       before=st.sampled_from(["", "За ", "Що каже ", "(", "«"]), after=st.sampled_from(["", "?", " ст. 5", ",", "»"]))
def test_an_abbreviation_written_as_a_word_names_its_act(abbreviation: str, before: str, after: str) -> None:
    assert names_act(f"{before}{abbreviation}{after}", abbreviation)


@given(abbreviation=st.text(alphabet=UPPER, min_size=2, max_size=6), letter=st.sampled_from(list("аоеиі")))
def test_an_abbreviation_inside_a_longer_word_names_nothing(abbreviation: str, letter: str) -> None:
    assert not names_act(f"Що таке {abbreviation}{letter}{abbreviation.lower()}?", abbreviation)
