"""The act lexicon kept in a file (engine/lexicon_store.py): a fresh process reads back what an earlier one built,
and a change to the catalog builds a new one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import ports
from knowledge.models import Act


def _fresh_process() -> None:
    ports._lexicon_cache.clear()  # what a new process starts with


def test_a_fresh_process_reads_the_lexicon_an_earlier_one_stored(db: Any, settings: Any, tmp_path: Path) -> None:
    # given a catalog and a lexicon built from it by one process
    settings.LEXICON_CACHE_DIR = tmp_path
    Act.objects.create(nreg="322-08", nreg_key="322-08", title="Кодекс законів про працю України",
                       abbreviations=["КЗпП"], indexed=True)
    _fresh_process()
    built = ports.load_lexicon()
    stored = list(tmp_path.glob("lexicon-*.pickle"))
    assert len(stored) == 1
    # when another process loads it
    _fresh_process()
    again = ports.load_lexicon()
    # then it reads the same lexicon back from the file
    assert again == built and again.get("322-08") is not None and again.get("322-08") == built.get("322-08")
    assert list(tmp_path.glob("lexicon-*.pickle")) == stored


def test_a_catalog_change_builds_and_stores_a_new_lexicon(db: Any, settings: Any, tmp_path: Path) -> None:
    settings.LEXICON_CACHE_DIR = tmp_path
    Act.objects.create(nreg="322-08", nreg_key="322-08", title="Кодекс законів про працю України")
    _fresh_process()
    ports.load_lexicon()
    before = list(tmp_path.glob("lexicon-*.pickle"))
    # when the catalog gains an act
    Act.objects.create(nreg="504/96-ВР", nreg_key="504/96-вр", title="Про відпустки")
    _fresh_process()
    lexicon = ports.load_lexicon()
    # then the new act is in it, and only the new file is kept
    assert lexicon.get("504/96-вр") is not None
    after = list(tmp_path.glob("lexicon-*.pickle"))
    assert len(after) == 1 and after != before


def test_an_unreadable_file_is_rebuilt(db: Any, settings: Any, tmp_path: Path) -> None:
    settings.LEXICON_CACHE_DIR = tmp_path
    Act.objects.create(nreg="322-08", nreg_key="322-08", title="Кодекс законів про працю України")
    _fresh_process()
    ports.load_lexicon()
    [stored] = tmp_path.glob("lexicon-*.pickle")
    stored.write_bytes(b"not a pickle")
    _fresh_process()
    assert ports.load_lexicon().get("322-08") is not None


def test_a_fresh_process_gets_the_stems_citations_bind_act_names_by_with_the_lexicon(
        db: Any, settings: Any, tmp_path: Path) -> None:
    from legaltext import citations

    settings.LEXICON_CACHE_DIR = tmp_path
    title = "Про відпустки"
    Act.objects.create(nreg="504/96-ВР", nreg_key="504/96-вр", title=title, indexed=True)
    _fresh_process()
    ports.load_lexicon()  # the first process stems the names and stores them beside the lexicon
    expected = citations.name_stems([title])
    # when a fresh process, which has stemmed nothing, loads the lexicon
    citations._stems.clear()
    _fresh_process()
    ports.load_lexicon()
    # then the names' stems are known before any citation is looked for, and they are the ones stemming gives
    assert citations._stems.get(title) == expected[title] != ()
    found = citations.find_citations("Закон «Про відпустки» ст. 6", {"Закон «Про відпустки»": "504/96-ВР"},
                                     titles={title: "504/96-ВР"})
    assert [(c.act_nreg, c.article) for c in found] == [("504/96-ВР", "6")]


def test_the_stored_lexicon_carries_its_label_index(db: Any, settings: Any, tmp_path: Path) -> None:
    # given a lexicon built and stored by one process
    settings.LEXICON_CACHE_DIR = tmp_path
    Act.objects.create(nreg="322-08", nreg_key="322-08", title="Кодекс законів про працю України",
                       abbreviations=["КЗпП"], indexed=True)
    Act.objects.create(nreg="504/96-ВР", nreg_key="504/96-вр", title="Про відпустки")
    _fresh_process()
    built = ports.load_lexicon().label_index()
    # when another process reads it back
    _fresh_process()
    lexicon = ports.load_lexicon()
    # then its label index came with it (no rebuild: the same object on every ask), equal to a fresh build
    assert "_label_index" in vars(lexicon)
    assert lexicon.label_index() is lexicon.label_index()
    assert {k: e.nreg for k, e in lexicon.label_index().items()} == {k: e.nreg for k, e in built.items()}
    assert lexicon.label_index() == lexicon._build_label_index()
    assert {"КЗпП", "Закон «Про відпустки»"} <= set(lexicon.label_index())


def test_a_fresh_process_gets_the_lemmatised_thesaurus_with_the_lexicon(
        db: Any, settings: Any, tmp_path: Path) -> None:
    from legaltext import lay_terms

    settings.LEXICON_CACHE_DIR = tmp_path
    Act.objects.create(nreg="322-08", nreg_key="322-08", title="Кодекс законів про працю України", indexed=True)
    _fresh_process()
    ports.load_lexicon()  # the first process lemmatises the thesaurus and stores it beside the lexicon
    built = lay_terms.entries()
    held = dict(lay_terms._held)
    try:
        # when a fresh process, which has lemmatised no phrase, loads the lexicon
        lay_terms._held.clear()
        _fresh_process()
        ports.load_lexicon()
        # then the thesaurus is the stored one (not lemmatised again), equal to what lemmatising gives
        assert "entries" in lay_terms._held and lay_terms._held["entries"] is not built
        assert lay_terms.entries() == built == lay_terms._lemmatised()
        assert lay_terms.statutory_words(["лікарняний"]) != []
    finally:
        lay_terms._held.clear()
        lay_terms._held.update(held)
