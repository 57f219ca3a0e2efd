"""The options ingest_laws and ingest_knowledge share: which acts, how many articles, the batch size, where to stop
(a module with a leading underscore is not a command)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser


def add_slice_arguments(parser: CommandParser) -> None:
    parser.add_argument("--acts", default="", help="comma-separated act nregs to keep, e.g. 322-08,435-15")
    parser.add_argument("--limit", type=int, default=None, help="stop after this many articles")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="chunks per embedding/upsert batch (whole articles; default EMBED_BATCH_SIZE)")
    parser.add_argument("--max-batches", type=int, default=None,
                        help="stop after writing this many batches (a re-run continues from there)")


def slice_acts(opts: dict[str, Any]) -> set[str] | None:
    """The --acts set (None: every act), after checking that the numeric options are positive."""
    for name in ("limit", "batch_size", "max_batches"):
        if opts[name] is not None and opts[name] <= 0:
            raise CommandError(f"--{name.replace('_', '-')} must be a positive number")
    return {a.strip() for a in opts["acts"].split(",") if a.strip()} or None
