"""DocList (knowledge/doclist.py, knowledge/apis.py, knowledge/doclist_client.py): the seed-002 reason codes for
the issue's examples, through the HTTP face and through U6's client (in-process, remote over HTTP, disabled)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from knowledge.doclist import Doclist
from knowledge.doclist_client import DoclistClient, DoclistUnavailable, default_client
from knowledge.ingest.catalog import catalog_load
from knowledge.models import Act
from pipeline.contracts import (
    ACT_FOUND_AND_INDEXED,
    ACT_FOUND_IN_CATALOG_NOT_INDEXED,
    ACT_NOT_FOUND_IN_CATALOG,
    AMBIGUOUS_ACT_MATCH,
    DOCLIST_DISABLED,
)
from tenancy.auth import api_key_create
from tests.factories import org_create
from tests.support.corpus import DEMO_DIR

PROCEDURAL = {"1618-15", "1798-12", "4651-17"}  # ЦПК, ГПК, КПК
EXAMPLES = [
    pytest.param("ПКУ", ACT_FOUND_IN_CATALOG_NOT_INDEXED, "2755-17", id="tax-code-abbreviation"),
    pytest.param("Податковий кодекс", ACT_FOUND_IN_CATALOG_NOT_INDEXED, "2755-17", id="tax-code-title"),
    pytest.param("Податкового кодексу України", ACT_FOUND_IN_CATALOG_NOT_INDEXED, "2755-17", id="tax-code-inflected"),
    pytest.param("КЗпП", ACT_FOUND_AND_INDEXED, "322-08", id="labour-code-abbreviation"),
    pytest.param("Кодекс законів про працю", ACT_FOUND_AND_INDEXED, "322-08", id="labour-code-title"),
    pytest.param("322-08", ACT_FOUND_AND_INDEXED, "322-08", id="labour-code-nreg"),
    pytest.param("Закон про неіснуюче", ACT_NOT_FOUND_IN_CATALOG, None, id="unknown-law"),
]


@pytest.fixture
def demo_catalog(db: Any) -> None:
    """The demo catalog shipped in the repo, with the Labour Code indexed and the Tax Code not."""
    catalog_load(acts_path=DEMO_DIR / "catalog_acts.jsonl", aliases_path=DEMO_DIR / "act_aliases.jsonl")
    Act.objects.filter(nreg="322-08").update(indexed=True)
    Act.objects.filter(nreg="2755-17").update(indexed=False)


@pytest.fixture
def keyed_api(db: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(org=org_create('doclist'))}")
    return client


def resolve_http(api: APIClient, query: Any) -> Any:
    return api.post("/api/v1/doclist/resolve", {"query": query}, format="json")


@pytest.mark.parametrize(("query", "reason", "nreg"), EXAMPLES)
def test_the_http_face_resolves_the_issue_examples(keyed_api: APIClient, demo_catalog: None, query: str,
                                                   reason: str, nreg: str | None) -> None:
    # when
    response = resolve_http(keyed_api, query)
    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["reason"] == reason
    if nreg is None:
        assert body["candidates"] == []
    else:
        best = body["candidates"][0]
        assert best["nreg"] == nreg
        assert best["indexed"] is (reason == ACT_FOUND_AND_INDEXED)
        assert set(best) == {"nreg", "title", "abbreviations", "indexed", "score", "how"}


@pytest.mark.parametrize("query", ["процесуальний кодекс", "Що передбачає стаття 4 процесуального кодексу?"])
def test_a_generic_procedural_code_is_ambiguous_between_the_procedural_codes(
        keyed_api: APIClient, demo_catalog: None, query: str) -> None:
    # when
    body = resolve_http(keyed_api, query).json()
    # then
    assert body["reason"] == AMBIGUOUS_ACT_MATCH
    nregs = {c["nreg"] for c in body["candidates"]}
    assert PROCEDURAL <= nregs
    assert "435-15" not in nregs  # the Civil Code is not a procedural code
    assert all(c["how"] == "partial_title" for c in body["candidates"])


def test_an_exact_cue_wins_over_the_broad_match(keyed_api: APIClient, demo_catalog: None) -> None:
    # "цивільний процесуальний кодекс" names ЦПК exactly, although "процесуальний кодекс" alone is ambiguous
    body = resolve_http(keyed_api, "Цивільного процесуального кодексу").json()
    assert body["reason"] in {ACT_FOUND_AND_INDEXED, ACT_FOUND_IN_CATALOG_NOT_INDEXED}
    assert [c["nreg"] for c in body["candidates"]] == ["1618-15"]


def test_lowercase_two_letter_words_are_not_abbreviations(keyed_api: APIClient, demo_catalog: None) -> None:
    assert resolve_http(keyed_api, "ЦК").json()["candidates"][0]["nreg"] == "435-15"
    assert resolve_http(keyed_api, "цк").json()["reason"] == ACT_NOT_FOUND_IN_CATALOG


@pytest.mark.parametrize(("body", "status"), [({}, 400), ({"query": ""}, 400), ({"query": "я" * 501}, 400)],
                         ids=["no-query", "empty", "too-long"])
def test_bad_input_gets_400_with_a_sentence(keyed_api: APIClient, demo_catalog: None, body: dict[str, Any],
                                            status: int) -> None:
    response = keyed_api.post("/api/v1/doclist/resolve", body, format="json")
    assert response.status_code == status
    assert "query" in response.json()["detail"]


def test_the_http_face_needs_an_api_key(db: Any, demo_catalog: None) -> None:
    response = APIClient().post("/api/v1/doclist/resolve", {"query": "КЗпП"}, format="json")
    assert response.status_code in {401, 403}


def test_the_http_face_answers_503_when_doclist_is_disabled(keyed_api: APIClient, demo_catalog: None,
                                                           settings: Any) -> None:
    settings.DOCLIST_ENABLED = False
    response = resolve_http(keyed_api, "КЗпП")
    assert response.status_code == 503
    assert response.json()["code"] == "doclist_disabled" and "DOCLIST_ENABLED" in response.json()["detail"]


def test_the_catalog_change_is_seen_without_a_restart(keyed_api: APIClient, demo_catalog: None) -> None:
    # given the Tax Code resolved as not indexed
    assert resolve_http(keyed_api, "ПКУ").json()["reason"] == ACT_FOUND_IN_CATALOG_NOT_INDEXED
    # when it becomes indexed (an ingest marks it)
    act = Act.objects.get(nreg="2755-17")
    act.indexed = True
    act.save()
    # then
    assert resolve_http(keyed_api, "ПКУ").json()["reason"] == ACT_FOUND_AND_INDEXED


# --- the client U6 calls --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("query", "reason", "nreg"), EXAMPLES)
def test_the_local_client_resolves_in_process(demo_catalog: None, settings: Any, query: str, reason: str,
                                              nreg: str | None) -> None:
    settings.DOCLIST_API_URL = ""
    client = default_client()
    assert client.mode == "local"
    resolution = client.resolve(query)
    assert resolution.reason == reason
    assert (resolution.best.nreg if resolution.best else None) == nreg


def test_a_disabled_client_says_so_and_resolves_nothing(settings: Any) -> None:
    settings.DOCLIST_ENABLED = False
    resolution = default_client().resolve("КЗпП")
    assert resolution.reason == DOCLIST_DISABLED
    assert resolution.candidates == ()


@pytest.mark.django_db(transaction=True)
def test_the_remote_client_resolves_through_a_live_server(live_server: Any, settings: Any) -> None:
    # given a DocList web process with the demo catalog and a key for it
    catalog_load(acts_path=DEMO_DIR / "catalog_acts.jsonl", aliases_path=DEMO_DIR / "act_aliases.jsonl")
    Act.objects.filter(nreg="322-08").update(indexed=True)
    settings.DOCLIST_API_URL = live_server.url
    settings.DOCLIST_API_KEY = api_key_create(org=org_create("remote-doclist"))
    settings.DOCLIST_ALLOW_HTTP = True  # the live server speaks http
    client = default_client()
    assert client.mode == "remote"
    # when / then: every example, over HTTP
    for param in EXAMPLES:
        query, reason, nreg = param.values
        resolution = client.resolve(str(query))
        assert resolution.reason == reason, query
        assert (resolution.best.nreg if resolution.best else None) == nreg
    ambiguous = client.resolve("процесуальний кодекс")
    assert ambiguous.reason == AMBIGUOUS_ACT_MATCH
    assert PROCEDURAL <= {c.nreg for c in ambiguous.candidates}


@pytest.mark.django_db(transaction=True)
def test_the_remote_client_raises_a_typed_error_on_a_refused_key(live_server: Any) -> None:
    client = DoclistClient(api_url=live_server.url, api_key="lx_not-a-key", allow_http=True)
    with pytest.raises(DoclistUnavailable, match=r"HTTP 40[13]"):
        client.resolve("КЗпП")


def test_the_remote_client_raises_a_typed_error_when_nothing_listens() -> None:
    client = DoclistClient(api_url="http://127.0.0.1:9", timeout_s=2.0, allow_http=True)
    with pytest.raises(DoclistUnavailable, match="unreachable"):
        client.resolve("КЗпП")


# --- the broad match, pure (knowledge/doclist.py) --------------------------------------------------------------
def _catalog(*rows: tuple[str, str, bool]) -> Doclist:
    return Doclist.build({"nreg": nreg, "title": title, "abbreviations": [], "aliases": [], "indexed": indexed}
                         for nreg, title, indexed in rows)


BROAD_CATALOG = _catalog(
    ("1058-15", "Про загальнообов'язкове державне пенсійне страхування", True),
    ("1110-19", "Про внесення зміни до Закону України \"Про загальнообов'язкове державне пенсійне страхування\" "
                "щодо необхідного страхового стажу для призначення пенсій інвалідам II групи", False),
    ("702/97-ВР", "Про деякі питання оподаткування у зв'язку з організацією та проведенням новорічних і різдвяних "
                  "свят для дітей і підлітків та придбанням святкових подарунків", False),
    ("2117-14", "Про звільнення від оподаткування грошових коштів, які спрямовуються на проведення "
                "новорічно-різдвяних свят для дітей та на придбання дитячих святкових подарунків", False),
    ("1060-12", "Про освіту", False),
    ("2145-19", "Про освіту", False),
    ("9000-20", "Про внесення змін до Закону України \"Про відпустки\"", False),
    ("3671-17", "Про біженців та осіб, які потребують додаткового або тимчасового захисту", False),
)


def test_a_broad_name_never_resolves_to_an_amending_law() -> None:
    # the amending law's title holds every word of the name; the law it amends does not hold «стаж»
    got = BROAD_CATALOG.resolve("закон про пенсійне страхування стаж")
    assert got.reason == ACT_NOT_FOUND_IN_CATALOG and got.candidates == ()
    # unless the user names an amending law
    named = BROAD_CATALOG.resolve("відпустки: внесення змін")
    assert [(c.nreg, c.how) for c in named.candidates] == [("9000-20", "partial_title")]


def test_one_word_of_a_long_title_is_not_its_name() -> None:
    # «подарунків» is 1 word of a dozen in two tax acts on children's New Year gifts: the user was asked to choose
    got = BROAD_CATALOG.resolve("закон про подарунки")
    assert got.reason == ACT_NOT_FOUND_IN_CATALOG and got.candidates == ()


def test_a_name_that_is_most_of_a_title_or_opens_it_still_resolves() -> None:
    # one word of six, but the one the title opens with: its subject
    assert [c.nreg for c in BROAD_CATALOG.resolve("закон про біженців").candidates] == ["3671-17"]
    assert [c.nreg for c in BROAD_CATALOG.resolve("закон про пенсійне страхування").candidates] == ["1058-15"]
    namesakes = BROAD_CATALOG.resolve("закон про освіту")
    assert namesakes.reason == AMBIGUOUS_ACT_MATCH
    assert {c.nreg for c in namesakes.candidates} == {"1060-12", "2145-19"}
