"""The DocList catalog in the Act table: which acts exist, the names and numbers they go by, and which of them
LLDBI indexes. Loaded from the catalog files (acts, aliases, the name crossrefs mined from texts); marked indexed
by the laws ingest."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledge.ingest.jsonl import IngestError, json_lines
from knowledge.models import Act
from legaltext.lexicon import lemma_seq

_NAME_HEADS = ("кодекс", "конституці", "статут")  # a code's name ends with its owner or with its head noun


def _is_abbreviation(name: str) -> bool:
    return " " not in name and len(name) <= 6


def _code_word(name: str) -> bool:
    """A code's one-word name people write («адмінкодекс»): no everyday phrase holds it, so it is matched in any
    case form, as the catalog's «КОНСТИТУЦІЯ» is."""
    return " " not in name and name.lower().endswith("кодекс") and len(name) > len("кодекс") + 2


def _records(path: Path) -> Iterator[dict[str, Any]]:
    for lineno, rec in json_lines(path):
        if not isinstance(rec, dict) or not rec.get("nreg"):
            raise IngestError(f"{path}:{lineno}: a catalog record needs an nreg")
        yield rec


def _official_number_fits(form: str, nreg: str) -> bool:
    """"1000-V" cites 1000-16 (V convocation): the number must be the nreg's, else the crossref is noise."""
    m = re.fullmatch(r"(\d+)-([IVXLC]+)", form)
    return m is not None and nreg.split("-")[0] == m.group(1)


def crossref_usable(rec: dict[str, Any], has_title: bool) -> bool:
    """act_name_crossrefs.jsonl is mined from texts and noisy (captures cut mid-sentence, numbers that are not
    acts): keep official numbers that agree with the nreg, «Про …» titles, and code names that start a name
    (capital letter), end as a name does, are short and have no clause in them; single sightings only fill a
    missing title."""
    form, kind, count = str(rec.get("form") or ""), rec.get("kind"), int(rec.get("count") or 0)
    if kind == "official_number":
        return _official_number_fits(form, str(rec["nreg"]))
    if kind == "quoted_title":
        return form.startswith("Про ") and 12 <= len(form) <= 250 and (count >= 2 or not has_title)
    if kind == "code_or_constitution_name":
        last = form.split()[-1] if form.split() else ""
        ends_as_name = last in ("України", "РСР", "УРСР") or last.lower().startswith(_NAME_HEADS)
        return (form[:1].isupper() and "," not in form and len(form.split()) <= 8 and count >= 2
                and any(h in form.lower() for h in _NAME_HEADS) and ends_as_name)
    return False


_SAVED_FIELDS = ("title", "abbreviations", "aliases", "official_numbers", "corpus_ids")


def _saved_state(act: Act) -> tuple[Any, ...]:
    return tuple(tuple(v) if isinstance(v, list) else v for v in (getattr(act, f) for f in _SAVED_FIELDS))


@dataclass
class _Load:
    """The Act rows one load works on: those already in the table and those it touched (new or changed), written
    together at the end; ``applied`` counts the records it applied."""

    existing: dict[str, Act]
    touched: dict[str, Act] = field(default_factory=dict)
    applied: int = 0
    before: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # What each row held when the load began: a re-load of the same files (a resumed `make knowledge`) then
        # writes nothing, instead of rewriting all 8,164 rows (15 s on SQLite).
        self.before = {key: _saved_state(a) for key, a in self.existing.items()}

    def knows(self, nreg_key: str) -> bool:
        return nreg_key in self.touched or nreg_key in self.existing

    def act(self, nreg: str) -> Act:
        key = nreg.lower()
        act = self.touched.get(key) or self.existing.get(key)
        if act is None:
            act = Act(nreg=nreg, nreg_key=key, abbreviations=[], aliases=[], official_numbers=[], corpus_ids=[])
        self.touched[key] = act
        return act

    def titles(self) -> dict[tuple[str, ...], str]:
        """Each title's stems -> the act that bears it (the first one seen)."""
        titled: dict[tuple[str, ...], str] = {}
        for a in [*self.existing.values(), *self.touched.values()]:
            if a.title:
                titled.setdefault(lemma_seq(a.title), a.nreg_key)
        return titled

    def save(self) -> None:
        new = [a for a in self.touched.values() if a.pk is None]
        old = [a for a in self.touched.values()
               if a.pk is not None and _saved_state(a) != self.before.get(a.nreg_key)]
        Act.objects.bulk_create(new, batch_size=500)
        Act.objects.bulk_update(old, list(_SAVED_FIELDS), batch_size=500)
        if old:  # bulk_update skips auto_now: touch the stamp the lexicon cache keys on
            old[0].save(update_fields=["updated_at"])


def _apply_acts(load: _Load, path: Path) -> None:
    for rec in _records(path):
        act = load.act(rec["nreg"])
        act.title = rec.get("title") or act.title
        act.abbreviations = sorted(set(act.abbreviations) | set(rec.get("abbreviations") or []))
        corpus_id = str(rec.get("ansvar_short_name") or "")  # the corpus files' own id for the act
        if corpus_id and corpus_id.lower() != act.nreg_key and corpus_id not in act.corpus_ids:
            act.corpus_ids = [*act.corpus_ids, corpus_id]
        load.applied += 1


def _apply_aliases(load: _Load, path: Path) -> None:
    for rec in _records(path):
        act = load.act(rec["nreg"])
        name = str(rec.get("alias") or "")
        if rec.get("full_name") and not act.title:
            act.title = rec["full_name"]
        if _is_abbreviation(name):
            if name not in act.abbreviations:
                act.abbreviations = [*act.abbreviations, name]
        elif name and name.lower() not in act.aliases:
            act.aliases = [*act.aliases, name.lower()]
        load.applied += 1


def _apply_titles(load: _Load, path: Path) -> None:
    """Official titles for catalog acts that have none (``act_titles.jsonl``: checked against the act's official
    text, each with its source). They fill a gap only: a title the catalog has is never replaced, and no act is
    invented."""
    for rec in _records(path):
        title = str(rec.get("title") or "").strip()
        if not title:
            raise IngestError(f"{path}: the title record of {rec['nreg']} has no title")
        if not load.knows(str(rec["nreg"]).lower()):
            continue
        act = load.act(rec["nreg"])
        if not act.title:
            act.title = title
        load.applied += 1


def _apply_crossrefs(load: _Load, path: Path) -> None:
    # A crossref never gives an act the name of another act ("Цивільного кодексу України" in a 1990 text means the
    # old code; today it names 435-15): names that are already another act's title are dropped.
    # The titles crossrefs give untitled acts come first: an amending law's quote of the act it amends («Про
    # Державний бюджет України на 2004 рік») is that act's title, not the amending law's alias, whichever record
    # the file lists first (a second load, which found the title in the table, dropped four such aliases).
    records = [r for r in _records(path) if load.knows(str(r["nreg"]).lower())]  # a crossref never invents an act
    titled = load.titles()
    filling: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for rec in records:
        (filling if rec["kind"] == "quoted_title" and not load.act(rec["nreg"]).title else rest).append(rec)
    for rec in filling:
        _apply_crossref(load, rec, titled)
    titled = load.titles()
    for rec in rest:
        _apply_crossref(load, rec, titled)


def _apply_crossref(load: _Load, rec: dict[str, Any], titled: dict[tuple[str, ...], str]) -> None:
    key = str(rec["nreg"]).lower()
    act = load.act(rec["nreg"])
    if not crossref_usable(rec, bool(act.title)):
        return
    form = str(rec["form"])
    if rec["kind"] != "official_number" and titled.get(lemma_seq(form), key) != key:
        return
    if rec["kind"] == "official_number":
        if form not in act.official_numbers:
            act.official_numbers = [*act.official_numbers, form]
    elif rec["kind"] == "quoted_title" and not act.title:
        act.title = form
    elif form.lower() not in act.aliases and lemma_seq(form) != lemma_seq(act.title):
        act.aliases = [*act.aliases, form.lower()]
    load.applied += 1


def _apply_names(load: _Load, path: Path) -> None:
    """The names people call acts by (``act_names.jsonl``: «Трудовий кодекс», «закон про поліцію»), as aliases of
    acts the catalog knows, and the abbreviations they write («ККУ», «КпАП»); a name for an act it does not know is
    skipped, never an act of its own."""
    for rec in _records(path):
        if "abbreviation" in rec:
            _apply_abbreviation(load, path, rec)
            continue
        name = str(rec.get("alias") or "").strip()
        if " " not in name:
            raise IngestError(f"{path}: the name of {rec['nreg']} must have two words or more (one word matches "
                              "too much)")
        if load.knows(str(rec["nreg"]).lower()):
            act = load.act(rec["nreg"])
            if name.lower() not in act.aliases:
                act.aliases = [*act.aliases, name.lower()]
            load.applied += 1


def _apply_abbreviation(load: _Load, path: Path, rec: dict[str, Any]) -> None:
    abbreviation = str(rec.get("abbreviation") or "").strip()
    if not ((_is_abbreviation(abbreviation) and len(abbreviation) >= 3) or _code_word(abbreviation)) \
            or not abbreviation.isalpha():
        raise IngestError(f"{path}: the abbreviation {abbreviation!r} of {rec['nreg']} must be one word of 3 to 6 "
                          "letters (shorter ones match too much) or a code's one-word name («адмінкодекс»)")
    if load.knows(str(rec["nreg"]).lower()):
        act = load.act(rec["nreg"])
        # sorted, as the catalog's own are: a re-load of the same files then finds every row as it left it
        act.abbreviations = sorted({*act.abbreviations, abbreviation})
        load.applied += 1


def catalog_load(*, acts_path: Path | None, aliases_path: Path | None, crossrefs_path: Path | None = None,
                 titles_path: Path | None = None, names_path: Path | None = None) -> int:
    """Load the DocList catalog into the Act table (acts, abbreviations and aliases, the names people use, the
    official titles the catalog lacks, then the usable crossrefs, which may fill a title only where none is known);
    keeps ``indexed`` as is. Returns the number of records applied."""
    load = _Load({a.nreg_key: a for a in Act.objects.all()})
    if None not in (acts_path, aliases_path, crossrefs_path, names_path):
        # Every source of an alias is read again: the aliases are what these files give now. A name taken out of
        # act_names.jsonl (a short form an everyday phrase holds: «рішення про звернення стягнення» named the
        # appeals law) leaves the table with the next load, instead of staying wherever a release once put it.
        for act in load.existing.values():
            if act.aliases:
                load.act(act.nreg).aliases = []
    if acts_path is not None:
        _apply_acts(load, acts_path)
    if aliases_path is not None:
        _apply_aliases(load, aliases_path)
    if names_path is not None:
        _apply_names(load, names_path)
    if titles_path is not None:
        _apply_titles(load, titles_path)
    if crossrefs_path is not None:
        _apply_crossrefs(load, crossrefs_path)
    load.save()
    return load.applied


def catalog_mark_indexed(chunks_per_act: dict[str, int], titles: dict[str, tuple[str, str | None]]) -> None:
    """Tell DocList which acts LLDBI now holds (and under which abbreviation they are cited)."""
    for nreg, n in chunks_per_act.items():
        title, abbrev = titles[nreg]
        act, _ = Act.objects.get_or_create(nreg_key=nreg.lower(), defaults={"nreg": nreg, "title": title})
        act.indexed = True
        act.n_chunks = max(act.n_chunks, n)
        act.title = act.title or title
        if abbrev and abbrev not in act.abbreviations:
            act.abbreviations = [*act.abbreviations, abbrev]
        act.save()
