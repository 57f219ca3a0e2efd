"""The DocList catalog load (knowledge/ingest/catalog.py): acts, aliases and the name crossrefs, whose
noise is filtered, and the resolution that the loaded names make possible."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from engine.ports import load_lexicon
from knowledge.ingest.catalog import catalog_load
from knowledge.ingest.jsonl import IngestError
from knowledge.models import Act
from knowledge.selectors import doclist_resolve
from pipeline.contracts import ACT_FOUND_IN_CATALOG_NOT_INDEXED, AMBIGUOUS_ACT_MATCH, SpecialistProfile
from pipeline.stages.intake import intake
from pipeline.stages.profiling import profile_query


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    jsonl(tmp_path / "acts_catalog.jsonl", [
        {"nreg": "435-15", "title": "Цивільний кодекс України", "abbreviations": ["ЦК"]},
        {"nreg": "1540-06", "title": None, "abbreviations": []},  # the old Civil Code, untitled in the catalog
        {"nreg": "2811-20", "title": None, "abbreviations": []},
        {"nreg": "1023-12", "title": None, "abbreviations": []},
    ])
    jsonl(tmp_path / "act_aliases.jsonl", [
        {"alias": "ПКУ", "nreg": "2755-17", "full_name": "Податковий кодекс України"}])
    jsonl(tmp_path / "act_name_crossrefs.jsonl", [
        {"nreg": "2811-20", "kind": "official_number", "form": "2811-IX", "count": 3},
        {"nreg": "2811-20", "kind": "official_number", "form": "17-IX", "count": 9},  # another act's number
        {"nreg": "1023-12", "kind": "quoted_title", "form": "Про захист прав споживачів", "count": 17},
        {"nreg": "1540-06", "kind": "code_or_constitution_name", "form": "Цивільного кодексу Української РСР",
         "count": 9},
        {"nreg": "1540-06", "kind": "code_or_constitution_name", "form": "Цивільного кодексу України", "count": 5},
        {"nreg": "435-15", "kind": "code_or_constitution_name", "form": "процесуального кодексу України",
         "count": 7},  # a capture cut mid-name
        {"nreg": "435-15", "kind": "code_or_constitution_name",
         "form": "Кодексу застосовуються такі терміни та означення", "count": 3},
        {"nreg": "9999-99", "kind": "quoted_title", "form": "Про акт поза каталогом", "count": 4},
    ])
    return tmp_path


def test_usable_crossrefs_are_kept_and_noise_is_dropped(db: Any, catalog_dir: Path) -> None:
    # when
    call_command("ingest_catalog", "--dir", str(catalog_dir), stdout=None)
    # then
    acts = {a.nreg: a for a in Act.objects.all()}
    assert "9999-99" not in acts  # a crossref never invents an act
    assert acts["2755-17"].title == "Податковий кодекс України" and "ПКУ" in acts["2755-17"].abbreviations
    assert acts["2811-20"].official_numbers == ["2811-IX"]
    assert acts["1023-12"].title == "Про захист прав споживачів"
    assert acts["1540-06"].aliases == ["цивільного кодексу української рср"]  # not today's Civil Code name
    assert acts["435-15"].aliases == []


def test_the_loaded_names_resolve(db: Any, catalog_dir: Path) -> None:
    catalog_load(acts_path=catalog_dir / "acts_catalog.jsonl", aliases_path=catalog_dir / "act_aliases.jsonl",
                 crossrefs_path=catalog_dir / "act_name_crossrefs.jsonl")
    assert [c.nreg for c in doclist_resolve(query="Закон № 2811-IX").candidates[:1]] == ["2811-20"]
    assert [c.nreg for c in doclist_resolve(query="Цивільного кодексу України").candidates[:1]] == ["435-15"]
    assert doclist_resolve(query="Цивільного кодексу УРСР").reason == ACT_FOUND_IN_CATALOG_NOT_INDEXED
    assert doclist_resolve(query="кодекс").reason == AMBIGUOUS_ACT_MATCH


def test_loading_twice_changes_nothing(db: Any, catalog_dir: Path) -> None:
    paths = {"acts_path": catalog_dir / "acts_catalog.jsonl", "aliases_path": catalog_dir / "act_aliases.jsonl",
             "crossrefs_path": catalog_dir / "act_name_crossrefs.jsonl"}
    catalog_load(**paths)
    before = list(Act.objects.values_list("nreg", "title", "abbreviations", "aliases", "official_numbers"))
    Act.objects.filter(nreg="435-15").update(indexed=True)
    catalog_load(**paths)
    assert list(Act.objects.values_list("nreg", "title", "abbreviations", "aliases", "official_numbers")) == before
    assert Act.objects.get(nreg="435-15").indexed  # the catalog keeps what ingestion marked


def test_bad_catalog_input_gets_a_sentence(db: Any, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="give --dir"):
        call_command("ingest_catalog")
    with pytest.raises(CommandError, match="not a folder"):
        call_command("ingest_catalog", "--dir", str(tmp_path / "nope"))
    bad = tmp_path / "acts.jsonl"
    bad.write_text('{"title": "без номера"}\n')
    with pytest.raises(IngestError, match="needs an nreg"):
        catalog_load(acts_path=bad, aliases_path=None)


def test_official_titles_fill_only_missing_titles_and_beat_a_mined_one(db: Any, catalog_dir: Path) -> None:
    # given: our titles file names an untitled act, a titled one, an act the catalog does not have, and an act whose
    # title a crossref would otherwise fill
    jsonl(catalog_dir / "act_titles.jsonl", [
        {"nreg": "2811-20", "title": "Про авторське право і суміжні права"},
        {"nreg": "435-15", "title": "Інша назва"},
        {"nreg": "9999-99", "title": "Про акт поза каталогом"},
        {"nreg": "1023-12", "title": "Про захист прав споживачів (перевірена назва)"},
    ])
    # when
    call_command("ingest_catalog", "--dir", str(catalog_dir), stdout=None)
    # then
    acts = {a.nreg: a.title for a in Act.objects.all()}
    assert acts["2811-20"] == "Про авторське право і суміжні права"
    assert acts["435-15"] == "Цивільний кодекс України"  # the catalog's own title stays
    assert "9999-99" not in acts  # a titles file never invents an act
    assert acts["1023-12"] == "Про захист прав споживачів (перевірена назва)"  # checked before mined
    assert [c.nreg for c in doclist_resolve(query="Закон про авторське право і суміжні права").candidates[:1]] == [
        "2811-20"]


def test_a_title_record_without_a_title_is_refused(db: Any, tmp_path: Path) -> None:
    acts = jsonl(tmp_path / "acts.jsonl", [{"nreg": "2136-20", "title": None}])
    titles = jsonl(tmp_path / "act_titles.jsonl", [{"nreg": "2136-20", "title": " "}])
    with pytest.raises(IngestError, match="2136-20 has no title"):
        catalog_load(acts_path=acts, aliases_path=None, titles_path=titles)
    assert not Act.objects.exists()  # nothing half-written


def test_the_shipped_titles_name_the_untitled_core_acts(db: Any) -> None:
    from knowledge.ingest.shipped import CORPUS_DIR, TITLES_FILE

    rows = [json.loads(line) for line in (CORPUS_DIR / TITLES_FILE).read_text(encoding="utf-8").splitlines()]
    assert {r["nreg"] for r in rows} >= {"2136-20", "2866-15", "3166-17", "5207-17"}
    assert all(r["title"].startswith("Про ") and r["source"].endswith(r["nreg"]) for r in rows)


def test_the_names_people_use_become_aliases_of_known_acts(db: Any, tmp_path: Path) -> None:
    acts = jsonl(tmp_path / "acts.jsonl", [{"nreg": "580-19", "title": "Про Національну поліцію"}])
    names = jsonl(tmp_path / "act_names.jsonl", [{"nreg": "580-19", "alias": "Про поліцію"},
                                                 {"nreg": "9999-99", "alias": "Про щось інше"}])

    catalog_load(acts_path=acts, aliases_path=None, names_path=names)

    assert Act.objects.get(nreg="580-19").aliases == ["про поліцію"]
    assert not Act.objects.filter(nreg="9999-99").exists()  # a name never invents an act


def test_a_name_taken_out_of_the_names_file_leaves_with_the_next_whole_load(db: Any, catalog_dir: Path) -> None:
    # given a whole load (every file of the folder) that named the appeals law by a short form an everyday phrase
    # holds («рішення про звернення стягнення»)
    jsonl(catalog_dir / "acts_catalog.jsonl", [{"nreg": "393/96-ВР", "title": "Про звернення громадян"}])
    names = jsonl(catalog_dir / "act_names.jsonl", [{"nreg": "393/96-ВР", "alias": "Про звернення"},
                                                    {"nreg": "393/96-ВР", "alias": "Про звернення громадян України"}])
    call_command("ingest_catalog", "--dir", str(catalog_dir), stdout=None)
    assert "про звернення" in Act.objects.get(nreg="393/96-ВР").aliases
    # when the next release's file no longer has it
    jsonl(names, [{"nreg": "393/96-ВР", "alias": "Про звернення громадян України"}])
    call_command("ingest_catalog", "--dir", str(catalog_dir), stdout=None)
    # then the table holds what the files give now: the other aliases stay, that one is gone
    act = Act.objects.get(nreg="393/96-ВР")
    assert act.aliases == ["про звернення громадян україни"]
    # and a load of the same files again writes nothing
    stamp = act.updated_at
    call_command("ingest_catalog", "--dir", str(catalog_dir), stdout=None)
    assert Act.objects.get(nreg="393/96-ВР").updated_at == stamp


def test_a_one_word_name_is_refused_and_nothing_is_written(db: Any, tmp_path: Path) -> None:
    acts = jsonl(tmp_path / "acts.jsonl", [{"nreg": "80731-10", "title": "Кодекс України про адміністративні "
                                                                         "правопорушення"}])
    names = jsonl(tmp_path / "act_names.jsonl", [{"nreg": "80731-10", "alias": "адмінкодекс"}])
    with pytest.raises(IngestError, match="80731-10 must have two words"):
        catalog_load(acts_path=acts, aliases_path=None, names_path=names)
    assert not Act.objects.exists()


def test_the_abbreviations_people_write_become_abbreviations_of_known_acts(db: Any, tmp_path: Path) -> None:
    acts = jsonl(tmp_path / "acts.jsonl", [{"nreg": "2341-14", "title": "Кримінальний кодекс України",
                                            "abbreviations": ["КК"]}])
    names = jsonl(tmp_path / "act_names.jsonl", [{"nreg": "2341-14", "abbreviation": "ККУ"},
                                                 {"nreg": "9999-99", "abbreviation": "ЩОСЬ"}])

    catalog_load(acts_path=acts, aliases_path=None, names_path=names)

    assert Act.objects.get(nreg="2341-14").abbreviations == ["КК", "ККУ"]
    assert not Act.objects.filter(nreg="9999-99").exists()


def test_a_codes_one_word_name_is_an_abbreviation_matched_in_any_case(db: Any, tmp_path: Path) -> None:
    # «адмінкодекс» is one word no everyday phrase holds: refused as an alias (one word matches too much), it is
    # written as the code's abbreviation, which U2 reads by its lemma («за адмінкодексом», «ст. 122 адмінкодексу»)
    acts = jsonl(tmp_path / "acts.jsonl", [{"nreg": "80731-10", "title": "Кодекс України про адміністративні "
                                            "правопорушення", "abbreviations": ["КУпАП"]}])
    names = jsonl(tmp_path / "act_names.jsonl", [{"nreg": "80731-10", "abbreviation": "адмінкодекс"}])

    catalog_load(acts_path=acts, aliases_path=None, names_path=names)

    assert Act.objects.get(nreg="80731-10").abbreviations == ["КУпАП", "адмінкодекс"]
    lexicon = load_lexicon()
    entry = lexicon.get("80731-10")
    assert entry is not None and entry.label == "КУпАП"  # the label stays
    for question in ("Який штраф за адмінкодексом?", "Що каже ст. 122 адмінкодексу?"):
        section = intake(question=question, specialist=SpecialistProfile(slug="demo"), max_chars=4000,
                         now=datetime.now(UTC))
        assert [c.nreg for c in profile_query(section, lexicon).act_hints] == ["80731-10"], question


@pytest.mark.parametrize("abbreviation", ["К", "КК", "Кримінальний кодекс", "К1У", "Кодексу", "укодекс"])
def test_an_abbreviation_too_short_or_not_a_word_is_refused(db: Any, tmp_path: Path, abbreviation: str) -> None:
    acts = jsonl(tmp_path / "acts.jsonl", [{"nreg": "2341-14", "title": "Кримінальний кодекс України"}])
    names = jsonl(tmp_path / "act_names.jsonl", [{"nreg": "2341-14", "abbreviation": abbreviation}])
    with pytest.raises(IngestError, match="must be one word of 3 to 6 letters"):
        catalog_load(acts_path=acts, aliases_path=None, names_path=names)
    assert not Act.objects.exists()


def test_the_shipped_names_name_their_core_acts(db: Any) -> None:
    """Each name in ``act_names.jsonl``, loaded over the whole shipped catalog, names its act in a question."""
    from knowledge.ingest.shipped import CORPUS_DIR, NAMES_FILE

    catalog_load(acts_path=CORPUS_DIR / "acts_catalog.jsonl.gz", aliases_path=None, names_path=CORPUS_DIR / NAMES_FILE)
    lexicon = load_lexicon()
    rows = [json.loads(line) for line in (CORPUS_DIR / NAMES_FILE).read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 15
    for row in rows:
        if "abbreviation" in row:  # written as people write it: «ст. 185 ККУ»
            question = f"Що каже ст. 5 {row['abbreviation']}?"
        else:
            act = "закон " if row["alias"].startswith("Про ") else ""
            question = f"Що каже {act}{row['alias'].lower()} про це?"
        section = intake(question=question, specialist=SpecialistProfile(slug="demo"), max_chars=4000,
                         now=datetime.now(UTC))
        assert row["nreg"] in [c.nreg for c in profile_query(section, lexicon).act_hints], question


def test_an_amending_laws_quote_of_the_act_it_amends_is_that_acts_title_not_its_alias(db: Any, tmp_path: Path) -> None:
    # given an amending law listed before the act it amends, which the catalog has untitled, and the crossrefs
    # that quote the amended act's title in both
    acts = jsonl(tmp_path / "acts.jsonl", [
        {"nreg": "1593-15", "title": 'Про внесення змін до Закону України "Про Державний бюджет України на 2004 рік"'},
        {"nreg": "1344-15", "title": None}])
    crossrefs = jsonl(tmp_path / "crossrefs.jsonl", [
        {"nreg": "1593-15", "kind": "quoted_title", "form": "Про Державний бюджет України на 2004 рік", "count": 4},
        {"nreg": "1344-15", "kind": "quoted_title", "form": "Про Державний бюджет України на 2004 рік", "count": 9}])
    # when the catalog is loaded once, from an empty table
    catalog_load(acts_path=acts, aliases_path=None, crossrefs_path=crossrefs)
    # then the quote titles the act it names and is no name of the amending law («закон про державний бюджет на 2004
    # рік» would have named the amendment); a second load found the title first and agreed only then
    assert Act.objects.get(nreg="1344-15").title == "Про Державний бюджет України на 2004 рік"
    assert Act.objects.get(nreg="1593-15").aliases == []
