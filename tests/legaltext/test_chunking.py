"""Article chunking (legaltext/chunking.py): bounded chunks that keep their article reference and lose no text."""

from __future__ import annotations

import itertools

import pytest

from legaltext.chunking import Article, Chunk, act_label, article_ref, split_article

SENTENCES = [f"Частина {i} — працівник має право на щорічну оплачувану відпустку тривалістю {20 + i} днів."
             for i in range(1, 16)]


def article(text: str, *, title: str = "Кодекс законів про працю України", abbrev: str | None = "КЗпП",
            number: str = "75") -> Article:
    return Article(act_nreg="322-08", act_title=title, act_abbrev=abbrev, article=number, heading=None, text=text)


def shared_edge(prev: str, nxt: str) -> int:
    """How many characters at the start of ``nxt`` repeat the end of ``prev``."""
    return max((k for k in range(1, min(len(prev), len(nxt)) + 1) if prev.endswith(nxt[:k])), default=0)


def test_a_short_article_is_one_chunk_with_its_normalised_text() -> None:
    # given
    art = article("  Щорічна   основна відпустка надається працівникам.\nТривалість —  24 дні. ")
    # when
    chunks = split_article(art, max_chars=1000, overlap_chars=100)
    # then
    assert chunks == [Chunk(art, 0, "Щорічна основна відпустка надається працівникам.\nТривалість — 24 дні.")]
    assert chunks[0].chunk_key == "322-08#st75#c0"


@pytest.mark.parametrize(("max_chars", "overlap"), [(200, 0), (200, 60), (350, 120), (100, 40)])
def test_a_long_article_is_cut_into_bounded_chunks_of_the_same_article(max_chars: int, overlap: int) -> None:
    # given
    art = article(" ".join(SENTENCES))
    # when
    chunks = split_article(art, max_chars=max_chars, overlap_chars=overlap)
    # then
    assert len(chunks) > 1
    assert all(len(c.text) <= max_chars for c in chunks)
    assert all(c.article.article_ref == "КЗпП ст. 75" for c in chunks)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_key for c in chunks}) == len(chunks)


@pytest.mark.parametrize(("max_chars", "overlap"), [(200, 0), (200, 60), (350, 120)])
def test_no_text_is_lost_every_sentence_lands_whole_in_some_chunk(max_chars: int, overlap: int) -> None:
    # given sentences each shorter than the bound
    art = article(" ".join(SENTENCES))
    # when
    chunks = split_article(art, max_chars=max_chars, overlap_chars=overlap)
    # then
    for sentence in SENTENCES:
        assert any(sentence in c.text for c in chunks), sentence


def test_overlap_carries_the_tail_of_the_previous_chunk() -> None:
    # given
    art = article(" ".join(SENTENCES))
    # when
    chunks = split_article(art, max_chars=250, overlap_chars=100)
    # then every continuation starts with a piece of its predecessor's end, never longer than the overlap
    for prev, nxt in itertools.pairwise(chunks):
        edge = shared_edge(prev.text, nxt.text)
        assert 0 < edge <= 100, (prev.text, nxt.text)
        assert prev.text[-edge - 1] == " "  # the carried tail starts on a whole word


def test_without_overlap_a_chunk_starts_where_the_previous_one_ended() -> None:
    art = article(" ".join(SENTENCES))
    chunks = split_article(art, max_chars=250, overlap_chars=0)
    assert " ".join(c.text for c in chunks) == " ".join(SENTENCES)


def test_a_paragraph_break_is_a_cut_point() -> None:
    # given two paragraphs without sentence punctuation, together longer than the bound
    art = article("Перша частина статті\nДруга частина статті")
    # when
    chunks = split_article(art, max_chars=25, overlap_chars=0)
    # then
    assert [c.text for c in chunks] == ["Перша частина статті", "Друга частина статті"]


def test_a_single_huge_sentence_is_cut_hard_at_the_bound() -> None:
    # given one "sentence" with no boundary at all
    text = "А" * 450
    # when
    chunks = split_article(article(text), max_chars=200, overlap_chars=0)
    # then
    assert [len(c.text) for c in chunks] == [200, 200, 50]
    assert "".join(c.text for c in chunks) == text


def test_a_non_positive_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        split_article(article("Текст."), max_chars=0, overlap_chars=0)


@pytest.mark.parametrize(
    ("title", "abbrev", "label"),
    [
        pytest.param("Кодекс законів про працю України", "КЗпП", "КЗпП", id="abbreviation-wins"),
        pytest.param("Про відпустки", None, "Закон «Про відпустки»", id="pro-title-becomes-zakon"),
        pytest.param("Конституція України", None, "Конституція України", id="plain-title"),
    ],
)
def test_act_label_names_the_act_in_citations(title: str, abbrev: str | None, label: str) -> None:
    assert act_label(title, abbrev) == label
    assert article(".", title=title, abbrev=abbrev, number="6").article_ref == f"{label} ст. 6"


def test_article_ref_is_the_canonical_citation_form() -> None:
    assert article_ref("КЗпП", "2-1") == "КЗпП ст. 2-1"
