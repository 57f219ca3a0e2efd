"""U4's first article in the answer. The writer weighs every sentence of the evidence by the question's words and
meaning; where another article shares more of the question's words («погром», «відповідальність»), the article
retrieval put first could be left out although its sentence is the rule asked about. It is kept among the details
when its best sentence still weighs a share of the lead (``FIRST_SOURCE_MIN_SHARE``)."""

from __future__ import annotations

import pytest

from assemble.prompt import SourceBlock, legacy_messages
from legaltext.citations import find_citations
from llm.providers import offline
from pipeline.contracts import SpecialistProfile

PROFILE = SpecialistProfile(slug="demo")
SHIPPED_SHARE = offline.FIRST_SOURCE_MIN_SHARE
LABELS = {"КК": "2341-14", "КУ": "254к/96-вр"}
QUESTION = "Компанія п'яних влаштувала погром у барі, один ще й махав ножем на людей. Яка за таке відповідальність?"
EVIDENCE = [
    SourceBlock("КК ст. 296", "k296", "Хуліганство",
                "1. Хуліганство, тобто грубе порушення громадського порядку з мотивів явної неповаги до суспільства, "
                "що супроводжується особливою зухвалістю чи винятковим цинізмом, - карається штрафом від однієї "
                "тисячі до двох тисяч неоподатковуваних мінімумів доходів громадян."),
    SourceBlock("КУ ст. 61", "k61", None,
                "Ніхто не може бути двічі притягнений до юридичної відповідальності одного виду за одне й те саме "
                "правопорушення. Юридична відповідальність особи має індивідуальний характер."),
    SourceBlock("КК ст. 295", "k295", "Заклики до вчинення дій, що загрожують громадському порядку",
                "Публічні заклики до погромів, підпалів, знищення майна, захоплення будівель чи споруд, що "
                "загрожують громадському порядку, - караються штрафом до п'ятдесяти неоподатковуваних мінімумів "
                "доходів громадян."),
    SourceBlock("КК ст. 294", "k294", "Масові заворушення",
                "Організація масових заворушень, що супроводжувалися насильством над особою, погромами, підпалами, "
                "знищенням майна, - карається позбавленням волі на строк від восьми до п'ятнадцяти років."),
]


def cited(share: float, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setattr(offline, "FIRST_SOURCE_MIN_SHARE", share)
    text = offline.compose_answer(legacy_messages(profile=PROFILE, blocks=EVIDENCE, question=QUESTION))
    return list(dict.fromkeys(c.article_ref for c in find_citations(text, LABELS)))


def test_the_first_article_of_the_evidence_is_quoted_when_other_words_lead(monkeypatch: pytest.MonkeyPatch) -> None:
    assert SHIPPED_SHARE > 0
    # without the rule the words «погром» and «відповідальність» take every place and the hooliganism article is out
    assert "КК ст. 296" not in cited(0.0, monkeypatch)
    # with it, that article is quoted among the details, and the rest stay
    with_rule = cited(SHIPPED_SHARE, monkeypatch)
    assert "КК ст. 296" in with_rule and set(cited(0.0, monkeypatch)) <= set(with_rule)
