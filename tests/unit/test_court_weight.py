"""U4 weighs down the procedural codes of the courts that do not hear the question's dispute (pure)."""

from __future__ import annotations

from pipeline.stages.retrieval import OTHER_COURT_WEIGHT, ChunkPayload, Fused, Ranks, weigh_courts

TITLES = {"2747-15": "Кодекс адміністративного судочинства України",
          "1618-15": "Цивільний процесуальний кодекс України",
          "1798-12": "Господарський процесуальний кодекс України",
          "435-15": "Цивільний кодекс України"}


def fused(*rows: tuple[str, str, float]) -> Fused:
    return [([ChunkPayload(chunk_key=f"{nreg}#st{article}#c0", act_nreg=nreg, article=article,
                           act_title=TITLES[nreg], article_ref=f"{nreg} ст. {article}", r2_key="k", ordinal=0)],
             score, "lexical", Ranks(lexical=i)) for i, (nreg, article, score) in enumerate(rows)]


def order(result: Fused) -> list[str]:
    return [f"{chunks[0]['act_nreg']}#{chunks[0]['article']}" for chunks, *_ in result]


# retrieval's order for a fee question: the three codes' twin articles, then the Civil Code
CANDIDATES = fused(("2747-15", "133", 0.30), ("1798-12", "129", 0.28), ("1618-15", "136", 0.25),
                   ("435-15", "625", 0.20))


def test_a_persons_dispute_puts_the_civil_procedure_code_before_its_twins() -> None:
    result = weigh_courts(CANDIDATES, "civil", OTHER_COURT_WEIGHT)

    assert order(result) == ["1618-15#136", "435-15#625", "2747-15#133", "1798-12#129"]
    assert result[0][1] == 0.25 and result[2][1] == 0.30 * OTHER_COURT_WEIGHT
    assert result[0][3] == Ranks(lexical=2)  # the ranks the gate reads travel with the article


def test_a_dispute_with_a_public_body_keeps_the_administrative_code_first() -> None:
    assert order(weigh_courts(CANDIDATES, "administrative", OTHER_COURT_WEIGHT))[:2] == ["2747-15#133", "435-15#625"]


def test_at_full_weight_nothing_moves() -> None:
    assert weigh_courts(CANDIDATES, "civil", 1.0) is CANDIDATES
