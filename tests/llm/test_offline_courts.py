"""Which act leads the answer. The procedural codes say the same things in nearly the same words; the offline writer
leads with the code whose court hears the question's dispute (legaltext/procedure.py). A question that names an act
is answered from it (legaltext/named_acts.py)."""

from __future__ import annotations

import pytest

from assemble.prompt import SourceBlock, legacy_messages
from legaltext.citations import basis_first, find_citations
from llm.providers import offline
from pipeline.contracts import SpecialistProfile

PROFILE = SpecialistProfile(slug="demo")
LABELS = {"КАС": "2747-15", "ЦПК": "1618-15", "ЦК": "435-15", "КУ": "254к/96-вр",
          "Закон «Про військовий обов'язок і військову службу»": "2232-12"}
# Nearly the same sentence in two codes (КАС ст. 133 and ЦПК ст. 136 differ more in the statute): nothing in the
# words tells them apart, only the court.
ADMINISTRATIVE = SourceBlock(
    "КАС ст. 133", "k133", None,
    "Суд, враховуючи майновий стан сторони, може своєю ухвалою відстрочити або розстрочити сплату судового збору "
    "на визначений строк.")
CIVIL = SourceBlock(
    "ЦПК ст. 136", "k136", None,
    "Суд, враховуючи майновий стан сторони, може своєю ухвалою відстрочити або розстрочити сплату судового збору "
    "на визначений строк у порядку, передбаченому законом.")
SUBSTANTIVE = SourceBlock(
    "ЦК ст. 625", "k625", None,
    "Боржник не звільняється від відповідальності за неможливість виконання ним грошового зобов'язання.")

# the rest of the evidence, as retrieval gives it: the writer weighs meaning against the candidates' median
OTHERS = [SourceBlock(f"ЦК ст. {n}", f"k{n}", None, text) for n, text in (
    (526, "Зобов'язання має виконуватися належним чином відповідно до умов договору та вимог цього Кодексу."),
    (530, "Якщо у зобов'язанні встановлений строк його виконання, то воно підлягає виконанню у цей строк."),
    (610, "Порушенням зобов'язання є його невиконання або виконання з порушенням умов, визначених змістом "
          "зобов'язання."),
    (1046, "За договором позики одна сторона передає у власність другій стороні грошові кошти."),
)]


def first_cited(question: str, *blocks: SourceBlock) -> str:
    evidence = [*blocks, *OTHERS]
    text = offline.compose_answer(legacy_messages(profile=PROFILE, blocks=evidence, question=question))
    return basis_first(find_citations(text, LABELS))[0].article_ref


@pytest.mark.parametrize(("question", "lead"), [
    ("Не маю з чого заплатити судовий збір за позов до сусіда. Можна попросити суд відстрочити його?", "ЦПК ст. 136"),
    ("Не маю з чого заплатити судовий збір за позов до податкової. Можна попросити суд відстрочити його?",
     "КАС ст. 133"),
])
def test_the_code_of_the_court_that_hears_the_dispute_leads(question: str, lead: str) -> None:
    # in either order of the evidence
    assert first_cited(question, ADMINISTRATIVE, CIVIL, SUBSTANTIVE) == lead
    assert first_cited(question, CIVIL, ADMINISTRATIVE, SUBSTANTIVE) == lead


def test_without_the_court_the_evidence_order_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the rule changes: with the other court's code at full weight, a dispute with a neighbour led with the
    administrative code when retrieval put it first."""
    monkeypatch.setattr(offline, "OTHER_COURT_FACTOR", 1.0)
    question = "Не маю з чого заплатити судовий збір за позов до сусіда. Можна попросити суд відстрочити його?"

    assert first_cited(question, ADMINISTRATIVE, CIVIL, SUBSTANTIVE) == "КАС ст. 133"


def test_a_substantive_code_is_never_weighed_down() -> None:
    question = "Чи звільняється боржник від відповідальності, якщо не може сплатити борг?"

    assert first_cited(question, ADMINISTRATIVE, CIVIL, SUBSTANTIVE) == "ЦК ст. 625"


# «Чи обов'язково служити в армії за Конституцією?»: the military-service law shares more of its words, the
# Constitution is what the question names.
CONSTITUTION = SourceBlock(
    "КУ ст. 65", "u65", None,
    "Захист Вітчизни, незалежності та територіальної цілісності України, шанування її державних символів є "
    "обов'язком громадян України.\nГромадяни відбувають військову службу відповідно до закону.")
SERVICE_LAW = SourceBlock(
    "Закон «Про військовий обов'язок і військову службу» ст. 1", "m1", None,
    "Військовий обов'язок громадян України встановлюється з метою підготовки громадян до служби в армії та "
    "виконання військового обов'язку: служба в армії є обов'язковою для придатних до неї громадян.")


def test_the_act_the_question_names_leads() -> None:
    question = "Чи обов'язково служити в армії за Конституцією?"

    assert first_cited(question, SERVICE_LAW, CONSTITUTION).startswith("КУ ст. 65")


def test_without_a_named_act_the_words_decide() -> None:
    question = "Чи обов'язково служити в армії?"

    assert first_cited(question, SERVICE_LAW, CONSTITUTION).startswith("Закон «Про військовий обов'язок")


def test_without_the_rule_the_named_act_loses_to_more_shared_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "NAMED_ACT_FACTOR", 1.0)

    assert first_cited("Чи обов'язково служити в армії за Конституцією?", SERVICE_LAW,
                          CONSTITUTION).startswith("Закон «Про військовий обов'язок")
