"""U4's meaning rerank: the fused articles re-scored by their best sentence's closeness to the question (pure)."""

from __future__ import annotations

from pipeline.stages.retrieval import MEANING_WEIGHT, ChunkPayload, Fused, Ranks, first_chunk_key, rerank_by_meaning


def chunk(article: str, ordinal: int = 0) -> ChunkPayload:
    return ChunkPayload(chunk_key=f"322-08#st{article}#c{ordinal}", act_nreg="322-08", article=article,
                        act_title="Кодекс законів про працю України", article_ref=f"КЗпП ст. {article}",
                        r2_key=f"k{article}", ordinal=ordinal)


def fused(*rows: tuple[str, float]) -> Fused:
    return [([chunk(article, 1)], score, "lexical", Ranks(lexical=i)) for i, (article, score) in enumerate(rows)]


def order(result: Fused) -> list[str]:
    return [chunks[0]["article"] for chunks, *_ in result]


def test_the_first_chunk_carries_the_sentences() -> None:
    assert first_chunk_key("322-08#st40#c3") == "322-08#st40#c0"
    assert first_chunk_key("254к/96-вр#st44#c0") == "254к/96-вр#st44#c0"


def test_an_article_whose_sentence_answers_rises_above_a_better_fused_one() -> None:
    # given КЗпП ст. 47 first by words and ст. 40, whose sentence says it, third
    candidates = fused(("47", 0.18), ("38", 0.12), ("40", 0.10), ("41", 0.09))
    cosines = {"322-08#st47#c0": 0.80, "322-08#st38#c0": 0.81, "322-08#st40#c0": 0.88, "322-08#st41#c0": 0.79}
    # when reranked
    result = rerank_by_meaning(candidates, cosines, limit=3)
    # then ст. 40 leads, the list is cut to the limit, and the ranks the gate reads travel with each article
    assert order(result) == ["40", "47", "38"]
    assert result[0][3] == Ranks(lexical=2)
    assert result[0][1] == 0.10 + MEANING_WEIGHT * 0.18  # the closest gets the whole share of the first score


def test_a_candidate_at_or_below_the_median_gains_nothing() -> None:
    candidates = fused(("1", 0.2), ("2", 0.1), ("3", 0.05))
    cosines = {"322-08#st1#c0": 0.70, "322-08#st2#c0": 0.75, "322-08#st3#c0": 0.90}
    result = rerank_by_meaning(candidates, cosines, limit=3)
    assert {chunks[0]["article"]: score for chunks, score, *_ in result}["1"] == 0.2


def test_without_cosines_to_compare_the_fused_order_stands() -> None:
    candidates = fused(("47", 0.18), ("40", 0.10), ("41", 0.09))
    assert order(rerank_by_meaning(candidates, {}, limit=2)) == ["47", "40"]  # an index without sentence vectors
    assert order(rerank_by_meaning(candidates, {"322-08#st40#c0": 0.9}, limit=3)) == ["47", "40", "41"]
    same = {f"322-08#st{a}#c0": 0.8 for a in ("47", "40", "41")}
    assert order(rerank_by_meaning(candidates, same, limit=3)) == ["47", "40", "41"]


def test_an_article_both_lists_put_first_keeps_its_place() -> None:
    # given the first article first in the lexical and the dense list (the agreement the support gate trusts)
    candidates = [([chunk("61", 1)], 0.18, "dense+lexical", Ranks(lexical=0, dense=0)),
                  *fused(("106", 0.12), ("173-5", 0.10))]
    cosines = {"322-08#st61#c0": 0.80, "322-08#st106#c0": 0.85, "322-08#st173-5#c0": 0.90}
    # then the meaning reorders only what follows it, and the first keeps a score no other reaches
    result = rerank_by_meaning(candidates, cosines, limit=3)
    assert order(result) == ["61", "173-5", "106"]
    assert result[0][1] >= result[1][1] > 0.18
