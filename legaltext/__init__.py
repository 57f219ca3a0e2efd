"""Ukrainian legal text, pure: normalising, lemmas and name stems, chunking, citation parsing, the act lexicon,
defined terms and the lay→statute thesaurus.

The bottom layer: it imports nothing of ours and no Django (only the standard library and pymorphy3), so every
app above — the pure stages in ``pipeline/``, recovery, ingest, the offline writer — shares one reading of the
text instead of each app keeping the copy it first needed."""
