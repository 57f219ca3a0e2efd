"""What a DOCX upload costs the extraction worker: ``documents.processing._chunks`` (extract, chunk, count) on
generated files, each in a fresh process, with its wall time and peak RSS (the process's own start-up, Django and the
imports, is reported apart as ``baseline``). Not a test: timings vary with the machine's load.

    DATABASE_URL= .venv/bin/python bench/docx_extract.py [--python other/.venv/bin/python --root other/]

Files (made with python-docx, tests/documents/files.py), all within DOCUMENT_MAX_BYTES:
- ``repeated``: one clause 120,000 times (~47 MB of XML, packs ~100×) beside one incompressible picture;
- ``prose``: 72,000 paragraphs of prose-like random words (~26 MB of XML, packs ~2.7×, 9.8 MB) and a picture;
- ``bmp``: one sentence and a blank page scanned as a 55 MB BMP (packs ~1000×);
- ``fits``: 2,000 paragraphs (~350,000 characters: within DOCUMENT_MAX_CHUNKS) and two pictures.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LETTERS = "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя"
CLAUSE = "Орендар зобов'язаний сплачувати орендну плату щомісяця до десятого числа. "
CHILD = """
import os, resource, sys, time
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")
import django; django.setup()
from documents.processing import DocumentInputError, _chunks
import docx, lxml.etree  # noqa: F401  (the baseline imports what extraction imports)
path = sys.argv[1]
started = time.monotonic()
outcome = "baseline"
if path:
    try:
        chunks, n_chars = _chunks(open(path, "rb").read(), filename="d.docx", kind="docx")
        outcome = f"{len(chunks)} chunks, {n_chars} characters"
    except DocumentInputError as exc:
        outcome = f"refused: {exc}"
print(f"{time.monotonic() - started:.2f}\\t{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}\\t{outcome}")
"""


def _files(directory: Path) -> None:
    from tests.documents.files import flat_bmp, grown_docx, noise_png

    rnd = random.Random(1)
    words = ["".join(rnd.choice(LETTERS) for _ in range(rnd.randint(2, 9))) for _ in range(50_000)]
    made = {
        "repeated": grown_docx([f"{i}. {CLAUSE * 2}" for i in range(120_000)], pictures=[noise_png(560)]),
        "prose": grown_docx([" ".join(rnd.choice(words) for _ in range(25)) for _ in range(72_000)],
                            pictures=[noise_png(300)]),
        "bmp": grown_docx(["Договір оренди квартири."], pictures=[flat_bmp(4300)]),
        "fits": grown_docx([f"{i}. {CLAUSE * 2}" for i in range(2_000)], pictures=[noise_png(560, 1),
                                                                                   noise_png(560, 2)]),
    }
    for name, data in made.items():
        (directory / f"{name}.docx").write_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable, help="the interpreter (another checkout's .venv)")
    parser.add_argument("--root", default=str(ROOT), help="the checkout whose code extracts")
    parser.add_argument("--make", help=argparse.SUPPRESS)  # the child that writes the files into this directory
    args = parser.parse_args()
    if args.make:
        _files(Path(args.make))
        return
    env = {**os.environ, "DATABASE_URL": os.environ.get("DATABASE_URL", "")}
    with tempfile.TemporaryDirectory() as tmp:
        # Made in a child: a process's peak RSS survives fork and exec (ru_maxrss), so the measured children must
        # come from a parent that never held the files, or each would report at least the parent's peak.
        subprocess.run([sys.executable, __file__, "--make", tmp], check=True)
        files = {name: Path(tmp) / f"{name}.docx" for name in ("repeated", "prose", "bmp", "fits")}
        print(f"load {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M:%S')}; code in {args.root}")
        for name, path in {"baseline": None, **files}.items():
            size = f"{path.stat().st_size / 1e6:.1f} MB" if path else ""
            out = subprocess.run([args.python, "-c", CHILD, str(path or "")], cwd=args.root, env=env, check=True,
                                 capture_output=True, text=True).stdout.strip().split("\t")
            seconds, rss_mb, outcome = out
            print(f"{name:9} {size:>8}  {seconds:>6} s  peak RSS {rss_mb:>4} MB  {outcome[:110]}")


if __name__ == "__main__":
    main()
