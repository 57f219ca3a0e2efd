"""Ingestion at scale (knowledge/ingest/laws.py): streamed in whole-article batches, resumable after an
interruption without duplicates, both corpus formats, long articles bounded."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from knowledge import index
from knowledge.ingest.corpus import final_provisions, own_text, read_articles
from knowledge.ingest.jsonl import IngestError
from knowledge.ingest.laws import laws_ingest

COLLECTION = "lldbi_ingest_test"
TERMS = "lldbi_ingest_test_terms"


def scale_rows(n_acts: int, per_act: int) -> list[dict[str, Any]]:
    """Records in the scale file's format: the heading rides in ``title`` as "Стаття N. <heading>"."""
    return [{"act_nreg": f"{900 + a}-99", "act_title": f"Про тестовий акт номер {a}", "article": str(i),
             "title": f"Стаття {i}. Порядок зберігання документів {a}-{i}",
             "text": f"Документи зберігаються протягом {i} років у сховищі {a}. " * (1 + i % 3)}
            for a in range(n_acts) for i in range(1, per_act + 1)]


def write_gz(path: Path, rows: list[dict[str, Any]]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


@pytest.fixture
def own_collection(settings: Any, db: Any) -> Any:
    settings.LLDBI_COLLECTION = COLLECTION
    settings.LLDBI_TERMS_COLLECTION = TERMS
    client = index.get_client()
    for name in (COLLECTION, TERMS):
        if client.collection_exists(name):
            client.delete_collection(name)
    yield client
    for name in (COLLECTION, TERMS):  # a command closes the client it used: open a fresh one
        if index.get_client().collection_exists(name):
            index.get_client().delete_collection(name)


def test_an_interrupted_ingest_continues_where_it_stopped_without_duplicates(own_collection: Any,
                                                                            tmp_path: Path) -> None:
    # given a gzipped scale-format corpus of 12 articles
    path = write_gz(tmp_path / "scale.jsonl.gz", scale_rows(n_acts=3, per_act=4))
    # when the first run stops after two batches of (at least) 3 chunks
    first = laws_ingest(path=path, batch_size=3, max_batches=2, show_progress=False)
    # then only those batches are in the collection
    assert first.stopped_early
    assert first.batches == 2
    assert index.count(own_collection, COLLECTION) == first.upserted < 12
    # when the ingest is run again to the end
    second = laws_ingest(path=path, batch_size=3, show_progress=False)
    # then it skipped what was there, wrote the rest, and every chunk is present exactly once
    assert second.skipped_existing == first.upserted
    assert second.upserted == 12 - first.upserted
    payloads = [p for p, _ in index.scan(own_collection, COLLECTION)]
    assert len(payloads) == 12
    assert len({p["chunk_key"] for p in payloads}) == 12
    # and a third run writes nothing
    assert laws_ingest(path=path, batch_size=3, show_progress=False).upserted == 0


def test_one_dense_vector_per_article_and_lexical_vectors_for_every_chunk(own_collection: Any, settings: Any,
                                                                         tmp_path: Path) -> None:
    # given one long article that splits into several chunks
    settings.CHUNK_MAX_CHARS = 200
    row = scale_rows(1, 1)[0] | {"text": "Перше речення про строки зберігання документів. " * 20}
    path = write_gz(tmp_path / "long.jsonl.gz", [row])
    # when
    laws_ingest(path=path, show_progress=False, update_catalog=False)
    # then
    points = sorted(index.scan(own_collection, COLLECTION), key=lambda pv: pv[0]["ordinal"])
    assert len(points) > 2
    assert [index.DENSE in v for _, v in points] == [True] + [False] * (len(points) - 1)
    assert all(v[index.LEXICAL].indices for _, v in points)
    assert all(p["heading"] == "Порядок зберігання документів 0-1" for p, _ in points)


def test_an_article_is_capped_at_the_chunk_bound(own_collection: Any, settings: Any, tmp_path: Path) -> None:
    settings.CHUNK_MAX_CHARS = 100
    settings.ARTICLE_MAX_CHUNKS = 3
    row = scale_rows(1, 1)[0] | {"text": "Речення про строки зберігання. " * 60}
    report = laws_ingest(path=write_gz(tmp_path / "huge.jsonl.gz", [row]), show_progress=False,
                         update_catalog=False)
    assert report.chunks == report.upserted == 3


def test_the_core_format_keeps_its_heading(tmp_path: Path) -> None:
    path = tmp_path / "core.jsonl"
    path.write_text(json.dumps({"act_nreg": "322-08", "act_title": "Кодекс законів про працю України",
                                "act_abbrev": "КЗпП", "article": "36", "article_heading": "Підстави припинення",
                                "text": "Підставами припинення трудового договору є …"}, ensure_ascii=False))
    [article] = list(read_articles(path))
    assert (article.heading, article.act_abbrev, article.article) == ("Підстави припинення", "КЗпП", "36")


@pytest.mark.parametrize("fmt", ["core", "scale"])
def test_a_number_cut_into_the_heading_is_moved_back(tmp_path: Path, fmt: str) -> None:
    # given КУпАП's «Стаття 188-46-1» as the source files carry it: article «188», heading «-46-1 . …»
    def rec(article: str, heading: str, text: str) -> dict[str, Any]:
        head = ({"article_heading": heading} if fmt == "core" else {"title": f"Стаття {article}. {heading}"})
        return {"act_nreg": "80731-10", "act_title": "Кодекс України про адміністративні правопорушення",
                "article": article, "text": text, **head}
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        rec("188", "Незаконна передача заборонених предметів", "Прихована від огляду передача …"),
        rec("188", "-46-1 . Незаконне здійснення лобіювання", "Здійснення лобіювання особою …"),
        rec("172", "- 9 - 2. Порушення законодавства у сфері оцінки впливу на довкілля", "Порушення процедури …")]))
    got = [(a.article, a.heading, a.occurrence) for a in read_articles(path)]
    # then each is its own article with its own heading, and none repeats another's number
    assert got == [("188", "Незаконна передача заборонених предметів", 1),
                   ("188-46-1", "Незаконне здійснення лобіювання", 1),
                   ("172-9-2", "Порушення законодавства у сфері оцінки впливу на довкілля", 1)]


@pytest.mark.parametrize(("text", "own"), [
    # the next chapter's heading and title (ЦК ст. 1215), a paragraph's (ГПК), one line with its number's full stop
    ("Спадкуванням є перехід прав та обов'язків (спадщини) від фізичної особи, яка померла, до інших осіб.\n"
     "Глава 84\n\nЗАГАЛЬНІ ПОЛОЖЕННЯ ПРО СПАДКУВАННЯ",
     "Спадкуванням є перехід прав та обов'язків (спадщини) від фізичної особи, яка померла, до інших осіб."),
    ("Суд приймає пояснення завчасно до початку розгляду справи по суті.\n§ 2. Заяви з процесуальних питань",
     "Суд приймає пояснення завчасно до початку розгляду справи по суті."),
    ("Рада затверджує регламент.\nГлава 1.\n\nПовноваження сільських, селищних, міських рад",
     "Рада затверджує регламент."),
    # a title in capitals may hold «ЧАСТИНІ»
    ("Постанова надсилається для виконання.\nГлава 33\n\nПРОВАДЖЕННЯ ПО ВИКОНАННЮ ПОСТАНОВИ В ЧАСТИНІ "
     "ВІДШКОДУВАННЯ МАЙНОВОЇ ШКОДИ", "Постанова надсилається для виконання."),
    # the signatures of an act's last article, with the Presidium's titles, and the initials spaced
    ("Застосовуються правила міжнародного договору.\nГолова Президії Верховної Ради\n\nУкраїнської РСР\n"
     "О.ВАТЧЕНКО\nСекретар Президії Верховної Ради\n\nУкраїнської РСР\nМ.ХОМЕНКО",
     "Застосовуються правила міжнародного договору."),
    ("13. Кабінету Міністрів України поінформувати Верховну Раду України.\nЛ. КУЧМА",
     "13. Кабінету Міністрів України поінформувати Верховну Раду України."),
    # a subsection's heading above its first chapter's (ЦК ст. 1167 ends «Підрозділ 1 ФІЗИЧНА ОСОБА Глава 4 …»)
    ("Моральна шкода відшкодовується одноразово.\nПідрозділ 1\n\nФІЗИЧНА ОСОБА\nГлава 4\n\n"
     "ЗАГАЛЬНІ ПОЛОЖЕННЯ ПРО ОСІБ\n§ 1. Поняття", "Моральна шкода відшкодовується одноразово."),
], ids=["chapter", "paragraph", "numbered-title", "title-in-capitals", "presidium", "president", "stacked"])
def test_what_the_source_glued_after_an_article_is_cut(text: str, own: str) -> None:
    assert own_text(text) == own


@pytest.mark.parametrize("text", [
    "Положення цього розділу застосовуються до всіх договорів.\nРозділ II цього Кодексу застосовується також до "
    "спадкування",  # a line that refers to a division is the article's text
    "Строк становить:\nГлава 5 містить правила;\nзастосовується відповідно",  # lines that end sentences
    "Президент України є главою держави і виступає від її імені.",  # a title of office, no signer
    "Глава 3\n\nЗАГАЛЬНІ ПОЛОЖЕННЯ",  # nothing else: kept whole rather than emptied
], ids=["reference", "sentences", "office", "only-a-heading"])
def test_an_articles_own_lines_are_kept(text: str) -> None:
    assert own_text(text) == text


def test_the_reader_gives_an_article_its_own_text(tmp_path: Path) -> None:
    path = tmp_path / "glued.jsonl"
    path.write_text(json.dumps({"act_nreg": "2947-14", "act_title": "Сімейний кодекс України", "article": "251",
                                "text": "Патронат припиняється за рішенням суду.\nГлава 20\n\nПАТРОНАТ НАД ДІТЬМИ"},
                               ensure_ascii=False))
    assert [a.text for a in read_articles(path)] == ["Патронат припиняється за рішенням суду."]


@pytest.mark.parametrize(("text", "own", "final", "title"), [
    # the heading the source kept (ЦК ст. 1308), with its chapter's line above it (КЗпП ст. 265)
    ("1. Спадковий договір може бути розірвано судом.\nПРИКІНЦЕВІ ТА ПЕРЕХІДНІ ПОЛОЖЕННЯ\n1. Цей Кодекс набирає "
     "чинності з 1 січня 2004 року.", "1. Спадковий договір може бути розірвано судом.",
     "1. Цей Кодекс набирає чинності з 1 січня 2004 року.", "Прикінцеві та перехідні положення"),
    ("Сплата штрафу не звільняє від усунення порушень.\nГлава XIX\n\nПРИКІНЦЕВІ ПОЛОЖЕННЯ\n1. Під час дії карантину "
     "строки продовжуються.", "Сплата штрафу не звільняє від усунення порушень.",
     "1. Під час дії карантину строки продовжуються.", "Прикінцеві положення"),
    # no heading: the commencement rule opens them (Закон про пенсійне страхування ст. 115)
    ("1. Право на дострокову пенсію мають матері п'ятьох дітей.\n2. Пенсія виплачується з фонду.\n1. Цей Закон "
     "набирає чинності з 1 січня 2004 року.\n2. Кабінету Міністрів підготувати акти.",
     "1. Право на дострокову пенсію мають матері п'ятьох дітей.\n2. Пенсія виплачується з фонду.",
     "1. Цей Закон набирає чинності з 1 січня 2004 року.\n2. Кабінету Міністрів підготувати акти.", None),
    # the commencement rule is their twelfth item: they open where the numbering starts again (280/97-ВР ст. 80)
    ("1. Повноваження комітету припиняються достроково.\n1. Положення цього Закону є основою для інших актів.\n"
     "12. Цей Закон набирає чинності з дня його опублікування.", "1. Повноваження комітету припиняються достроково.",
     "1. Положення цього Закону є основою для інших актів.\n12. Цей Закон набирає чинності з дня його "
     "опублікування.", None),
    # a procedure code's transitional provisions, heading lost: a new numbering with a commencement rule (ЦПК ст. 502)
    ("1. Судове доручення виконується консулом.\n2. Застосовується процесуальний закон України.\n1. Частина друга "
     "статті 172 вводиться в дію з дня запуску реєстру.", "1. Судове доручення виконується консулом.\n"
     "2. Застосовується процесуальний закон України.", "1. Частина друга статті 172 вводиться в дію з дня запуску "
     "реєстру.", None),
], ids=["heading", "chapter-heading", "commencement", "twelfth-item", "procedure-code"])
def test_an_acts_final_provisions_are_cut_from_its_last_article(text: str, own: str, final: str,
                                                                 title: str | None) -> None:
    assert final_provisions(text) == (own, final, title)


@pytest.mark.parametrize("text", [
    # a note that numbers its own items (КК ст. 289), not a commencement rule
    "1. Незаконне заволодіння транспортним засобом карається штрафом.\nПримітка.\n1. Під незаконним заволодінням "
    "слід розуміти вчинене умисно.",
    # the source numbered them as the act's article (389-19 ст. 28 «Прикінцеві положення»): nothing else to cut from
    "1. Цей Закон набирає чинності з дня, наступного за днем його опублікування.\n2. Кабінету Міністрів України "
    "привести свої акти у відповідність.",
    "Прикінцеві положення\n1. Цей Закон набирає чинності.",  # a heading with no article text above it
    # a treaty annex's own rule on when a figure takes effect (124_001-23), not the act's commencement
    "Додаток 11-B.7: Формула коригування\n1. Порогова вартість переглядається раз на два роки, і відкориговане "
    "значення набирає чинності 1 січня кожного року.",
], ids=["note", "numbered-by-the-act", "heading-first", "annex-rule"])
def test_an_article_without_final_provisions_is_kept_whole(text: str) -> None:
    assert final_provisions(text) == (text, None, None)


def test_the_reader_gives_final_provisions_a_unit_and_skips_the_articles_they_quote(tmp_path: Path) -> None:
    # given КУпАП's article, then an act whose last article carries final provisions that amend КУпАП, quoted after
    # them under the act's own number; then an article of another act no one holds, and one continuing the numbering
    rows = [("80731-10", "172-5", "Порушення встановлених законом обмежень щодо одержання подарунків",
             "Порушення встановлених законом обмежень щодо одержання подарунків тягне за собою штраф."),
            ("1700-18", "72", None, "Міжнародне співробітництво здійснюється відповідно до договорів."),
            ("1700-18", "73", None, "Повернення коштів здійснюється за рішенням суду.\n1. Цей Закон набирає чинності "
             "з дня його опублікування.\n2. Кодекс про адміністративні правопорушення доповнити статтею 172-5 "
             "такого змісту:"),
            ("1700-18", "172-5", "Порушення встановлених законом обмежень щодо одержання подарунків",
             "Порушення обмежень щодо одержання подарунків тягне за собою накладення штрафу."),
            ("1700-18", "121-4", "Заміна сторони виконавчого провадження у господарському процесі",
             "Господарський суд замінює сторону виконавчого провадження її правонаступником."),
            ("1700-18", "74", None, "Стаття, що продовжує нумерацію акта, лишається його статтею.")]
    path = tmp_path / "final.jsonl"
    path.write_text("\n".join(json.dumps({"act_nreg": nreg, "act_title": "Про запобігання корупції", "article": n,
                                          "article_heading": h, "text": t}, ensure_ascii=False)
                               for nreg, n, h, t in rows))
    read = [0]
    got = [(a.act_nreg, a.article) for a in read_articles(path, read=read)]
    assert read == [6]  # progress counts the file's six records: one gave two units, one none
    # КУпАП's article quoted is skipped; one no act of the file holds stays (it may be the only copy of its text)
    assert got == [("80731-10", "172-5"), ("1700-18", "72"), ("1700-18", "73"), ("1700-18", "ПП"),
                   ("1700-18", "121-4"), ("1700-18", "74")]
    final = next(a for a in read_articles(path) if a.article == "ПП")
    assert final.article_ref == "Закон «Про запобігання корупції», Прикінцеві та перехідні положення"
    assert (final.heading, final.text[:20]) == ("Прикінцеві та перехідні положення", "1. Цей Закон набирає")


def test_final_provisions_that_amend_nothing_keep_the_articles_after_them(tmp_path: Path) -> None:
    # a budget law: its «VI. ПРИКІНЦЕВІ ПОЛОЖЕННЯ» are its own articles, glued to one record and then numbered apart
    rows = [("7", "Встановити субвенцію.\nVI. ПРИКІНЦЕВІ ПОЛОЖЕННЯ\nСтаття 48. Заборонити бартер."),
            ("55", "Зупинити на 2002 рік дію частини третьої статті 6.")]
    act = {"act_nreg": "2905-14", "act_title": "Про Державний бюджет України на 2002 рік"}
    path = tmp_path / "budget.jsonl"
    path.write_text("\n".join(json.dumps({**act, "article": n, "text": t}, ensure_ascii=False) for n, t in rows))
    assert [(a.article, a.heading) for a in read_articles(path)] == [
        ("7", None), ("ПП", "Прикінцеві положення"), ("55", None)]


def test_a_division_numbered_as_an_article_is_the_acts_final_provisions(tmp_path: Path) -> None:
    # the Constitution's «Розділ XV Перехідні положення» arrives as «ст. XV»
    path = tmp_path / "xv.jsonl"
    act = {"act_nreg": "254к/96-ВР", "act_title": "Конституція України", "act_abbrev": "КУ"}
    path.write_text("\n".join(json.dumps({**act, "article": n, "text": t}, ensure_ascii=False) for n, t in [
        ("XV", "1. Закони, прийняті до набуття чинності цією Конституцією, є чинними у частині, що не суперечить їй."),
        ("XIV", "Закон про внесення змін до Конституції приймається двома третинами.")]))
    assert [a.article_ref for a in read_articles(path)] == ["КУ, Прикінцеві та перехідні положення", "КУ ст. XIV"]


def test_the_number_means_its_first_live_record(tmp_path: Path) -> None:
    # given a repealed stub and a live text under one number, then a second live text under another
    rows = [("163", "Статтю 163 виключено на підставі Закону № 2342-III від 05.04.2001"),
            ("163", "Порушення установленого законом порядку здійснення емісії цінних паперів тягне накладення "
                    "штрафу."),
            ("11", "У разі порушення прав державного службовця він має право звернутися до суду."),
            ("11", "Апарат міністерства забезпечує діяльність міністерства."),
            ("81", "Статтю 81 виключено")]
    path = tmp_path / "dup.jsonl"
    path.write_text("\n".join(json.dumps({"act_nreg": "1-99", "act_title": "Акт", "article": n, "text": t},
                                         ensure_ascii=False) for n, t in rows))
    got = [(a.storage_id, a.primary) for a in read_articles(path)]
    assert got == [("163", False), ("163~2", True), ("11", True), ("11~2", False), ("81", False)]


@pytest.mark.parametrize(("content", "message"), [("{not json", "not a corpus record"), ("", "no articles")],
                         ids=["broken-line", "empty-file"])
def test_bad_corpus_files_get_a_sentence(own_collection: Any, tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(IngestError, match=message):
        laws_ingest(path=path, show_progress=False)


def test_the_command_stops_after_max_batches_and_a_rerun_finishes(own_collection: Any, tmp_path: Path) -> None:
    from io import StringIO

    from django.core.management import call_command

    path = write_gz(tmp_path / "scale.jsonl.gz", scale_rows(n_acts=2, per_act=3))
    out = StringIO()
    call_command("ingest_laws", str(path), "--batch-size", "2", "--max-batches", "1", stdout=out, stderr=StringIO())
    assert "stopped by --max-batches" in out.getvalue()
    out = StringIO()
    call_command("ingest_laws", str(path), "--batch-size", "2", stdout=out, stderr=StringIO())
    assert "already indexed" in out.getvalue() and "stopped" not in out.getvalue()
    assert index.count(index.get_client(), COLLECTION) == 6


def test_the_command_refuses_a_non_positive_bound(db: Any, tmp_path: Path) -> None:
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="--max-batches must be a positive number"):
        call_command("ingest_laws", str(tmp_path / "x.jsonl"), "--max-batches", "0")


def test_an_act_repeating_an_article_number_keeps_every_record_and_its_terms(own_collection: Any,
                                                                            tmp_path: Path) -> None:
    # given an amending act with two different "Стаття 2" (one per act it amends), the second defining terms
    rows = [{"act_nreg": "2147-99", "act_title": "Про внесення змін", "article": "2", "title": "Стаття 2. Строки",
             "text": "Суд встановлює розумні строки."},
            {"act_nreg": "2147-99", "act_title": "Про внесення змін", "article": "2",
             "title": "Стаття 2. Визначення термінів",
             "text": "1. Терміни вживаються в такому значенні:\n1) біржові торги - процес укладання угод;\n"
                     "2) викуп цінних паперів - придбання емітентом розміщених ним паперів."}]
    path = write_gz(tmp_path / "amend.jsonl.gz", rows)
    report = laws_ingest(path=path, show_progress=False, update_catalog=False)
    # then both records are indexed under the same citation, with their own chunks
    payloads = [p for p, _ in index.scan(own_collection, COLLECTION)]
    assert {p["article_ref"] for p in payloads} == {"Закон «Про внесення змін» ст. 2"}
    assert sorted(p["chunk_key"] for p in payloads) == ["2147-99#st2#c0", "2147-99#st2~2#c0"]
    assert len({p["r2_key"] for p in payloads}) == 2
    # and the second record's terms point at its chunk
    terms = [p for p, _ in index.scan(own_collection, TERMS)]
    assert report.terms == 2
    assert {(t["term"], t["chunk_key"]) for t in terms} == {("біржові торги", "2147-99#st2~2#c0"),
                                                            ("викуп цінних паперів", "2147-99#st2~2#c0")}
    # when the ingest runs again, nothing is duplicated
    again = laws_ingest(path=path, show_progress=False, update_catalog=False)
    assert again.upserted == 0
    assert index.count(index.get_client(), COLLECTION) == 2
    assert index.count(index.get_client(), TERMS) == 2


def test_a_corpus_id_that_is_not_an_nreg_is_stored_under_the_acts_nreg(own_collection: Any, tmp_path: Path) -> None:
    from knowledge.ingest.catalog import catalog_load
    from knowledge.models import Act

    # given a corpus file that names an act by its own id ("ЗУ ТЕСТ") instead of the rada number
    rows = [{"act_nreg": "ЗУ ТЕСТ", "act_title": "Про тестові комунікації", "article": str(i),
             "title": f"Стаття {i}. Положення {i}", "text": f"Текст положення {i} про комунікації."}
            for i in (1, 2)]
    path = write_gz(tmp_path / "ids.jsonl.gz", rows)
    # when it is ingested before the catalog is loaded, it lands under the corpus id
    laws_ingest(path=path, show_progress=False)
    assert Act.objects.filter(nreg_key="зу тест", indexed=True).exists()
    # and when the catalog (which knows the id) is loaded and the ingest re-run
    catalog = tmp_path / "acts.jsonl"
    catalog.write_text(json.dumps({"nreg": "777-99", "title": "Про тестові комунікації",
                                   "ansvar_short_name": "ЗУ ТЕСТ"}, ensure_ascii=False) + "\n", encoding="utf-8")
    catalog_load(acts_path=catalog, aliases_path=None)
    laws_ingest(path=path, show_progress=False)
    # then the act's articles are stored under its nreg only, and DocList knows it is indexed
    client = index.get_client()
    assert sorted(p["chunk_key"] for p, _ in index.scan(client, COLLECTION)) == ["777-99#st1#c0", "777-99#st2#c0"]
    assert {p["act_nreg"] for p, _ in index.scan(client, COLLECTION)} == {"777-99"}
    assert not Act.objects.filter(nreg_key="зу тест").exists()
    assert Act.objects.get(nreg="777-99").indexed
    assert Act.objects.get(nreg="777-99").corpus_ids == ["ЗУ ТЕСТ"]


def test_a_placeholder_title_gives_way_to_the_catalogs_name(own_collection: Any, tmp_path: Path) -> None:
    from knowledge.models import Act

    # given the catalog's name for 322-99 and a corpus record titled with the scale file's placeholder
    Act.objects.create(nreg="322-99", nreg_key="322-99", title="Кодекс тестових відносин України",
                       abbreviations=["КТВУ", "КТвУ"])
    text = "Працівник має право на відпочинок. " * 6
    path = write_gz(tmp_path / "t.jsonl.gz", [
        {"act_nreg": "322-99", "act_title": "Закон України (322-99)", "article": "75", "title": "Стаття 75. Відпочинок",
         "text": text},
        {"act_nreg": "555-99", "act_title": "Закон України (555-99)", "article": "1", "title": "Стаття 1. Інше",
         "text": text}])
    laws_ingest(path=path, show_progress=False)
    payloads = {p["act_nreg"]: p for p, _ in index.scan(index.get_client(), COLLECTION)}
    # then citations use the catalog's abbreviation (its conventional spelling) and the title is indexed
    assert payloads["322-99"]["article_ref"] == "КТвУ ст. 75"
    assert payloads["322-99"]["act_title"] == "Кодекс тестових відносин України"
    assert payloads["555-99"]["act_title"] == "Закон України (555-99)"  # the catalog does not name it: kept
    # and the same text under two acts carries one signature
    assert payloads["322-99"]["text_sig"] == payloads["555-99"]["text_sig"] is not None
