"""The offline writer quotes law, and law points elsewhere ("статтею 20 цього Закону"): it must not carry an
article the verifier cannot find among its sources into the draft."""

from __future__ import annotations

from assemble.prompt import SourceBlock, legacy_messages
from legaltext.citations import find_citations
from llm.providers.offline import compose_answer
from pipeline.contracts import SpecialistProfile

PROFILE = SpecialistProfile(slug="demo")
LABELS = {"КЗпП": "322-08", "Закон «Про відпустки»": "504/96-ВР"}
LEAVE = SourceBlock(
    "Закон «Про відпустки» ст. 6", "k6", None,
    "Щорічна основна відпустка надається працівникам тривалістю не менш як 24 календарних дні. "
    "Щорічна основна відпустка збільшується у випадках, передбачених статтею 20 цього Закону. "
    "Щорічна основна відпустка надається пропорційно відпрацьованому часу.")
LABOUR = SourceBlock(
    "КЗпП ст. 75", "k75", None,
    "Щорічна основна відпустка надається тривалістю 24 календарні дні, а у випадках, передбачених статтею 12 "
    "Закону України «Про відпустки», — довше.")


def answer(*blocks: SourceBlock, question: str = "Скільки днів триває щорічна основна відпустка?") -> str:
    return compose_answer(legacy_messages(profile=PROFILE, blocks=list(blocks), question=question))


def test_a_pointer_to_an_article_outside_the_sources_is_never_quoted() -> None:
    text = answer(LEAVE, LABOUR)

    assert "статтею 20" not in text and "статтею 12" not in text
    # КЗпП ст. 75's only sentence points at an article outside the sources: it is quoted without the clause that
    # points, and only the sources are cited
    assert "а у випадках, …, — довше (КЗпП ст. 75)" in text
    assert {c.article_ref for c in find_citations(text, LABELS)} == {"Закон «Про відпустки» ст. 6", "КЗпП ст. 75"}
    assert "24 календарних дні" in text


def test_a_sentence_pointing_at_another_source_may_be_quoted() -> None:
    among = SourceBlock("Закон «Про відпустки» ст. 20", "k20", None, "Тривалість відпустки збільшується.")

    # asked about the sentence that points there (the writer weighs meaning: asked about the length, it may lead
    # with another sentence)
    text = answer(LEAVE, among, question="У яких випадках збільшується щорічна основна відпустка?")

    assert "статтею 20 цього Закону" in text
    refs = {c.article_ref for c in find_citations(text, LABELS)}
    assert refs == {"Закон «Про відпустки» ст. 6", "Закон «Про відпустки» ст. 20"}


def test_when_no_sentence_is_quotable_the_answer_still_names_its_sources() -> None:
    only_pointers = SourceBlock("КЗпП ст. 75", "k75", None, "Див. статтю 12 Закону України «Про відпустки».")

    text = answer(only_pointers)

    assert "статтю 12" not in text and text.rstrip().endswith("Підстави: КЗпП ст. 75.")


def test_a_sentence_two_acts_say_word_for_word_is_quoted_once_and_cited_to_both() -> None:
    """КЗпП ст. 75 and Закон «Про відпустки» ст. 6 share their sentences: the answer said each twice, once per act."""
    said_twice = ("Щорічна основна відпустка надається працівникам тривалістю не менш як 24 календарних дні. "
                  "Особам віком до вісімнадцяти років надається щорічна основна відпустка тривалістю 31 календарний "
                  "день.")
    law = SourceBlock("Закон «Про відпустки» ст. 6", "k6", None, said_twice)
    code = SourceBlock("КЗпП ст. 75", "k75", None, said_twice)

    text = answer(law, code)

    assert text.count("24 календарних дні") == 1 and text.count("31 календарний день") == 1
    assert "(Закон «Про відпустки» ст. 6; КЗпП ст. 75)" in text
    assert {c.article_ref for c in find_citations(text, LABELS)} == {"Закон «Про відпустки» ст. 6", "КЗпП ст. 75"}
    assert text.rstrip().endswith("Підстави: Закон «Про відпустки» ст. 6; КЗпП ст. 75.")


def test_an_offence_is_quoted_with_its_sanction() -> None:
    """«Що йому за це буде?» is answered by the sanction, and the sanction means nothing without the conduct: the
    writer quoted «Умисне легке тілесне ушкодження -» alone, the dash dangling (legaltext/sentences.py)."""
    injury = SourceBlock(
        "КК ст. 125", "k125", None,
        "1. Умисне легке тілесне ушкодження -\nкарається штрафом до п'ятдесяти неоподатковуваних мінімумів доходів "
        "громадян або громадськими роботами на строк до двохсот годин.")

    text = answer(injury, question="Сусід завдав мені легке тілесне ушкодження. Що йому за це буде?")

    assert "Умисне легке тілесне ушкодження - карається штрафом до п'ятдесяти" in text
    assert "ушкодження - (КК ст. 125)" not in text and "ушкодження -\n" not in text
