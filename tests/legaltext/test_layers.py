"""The bottom of the layers: ``legaltext/`` reads text with the standard library and pymorphy3 alone, the pure
stages in ``pipeline/`` stand on legaltext and pydantic alone, and ``recovery/`` on those two. Read from the source
(every import statement, also those inside functions), so an import that climbs back up fails here before it
makes a circle."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# pipeline/ and recovery/ are Django apps only so that Django finds them: an AppConfig and empty migrations
FRAMEWORK_FILES = {"apps.py"}


def imported_roots(package: str) -> dict[str, set[str]]:
    """Top-level module → the files of ``package`` that import it."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        if path.name in FRAMEWORK_FILES or "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def outside(package: str, allowed: set[str]) -> dict[str, set[str]]:
    return {root: files for root, files in imported_roots(package).items()
            if root not in allowed and root not in sys.stdlib_module_names}


@pytest.mark.parametrize(("package", "allowed"), [
    ("legaltext", {"legaltext", "pymorphy3"}),
    ("pipeline", {"pipeline", "legaltext", "pydantic"}),
    # U5/U6 are pure over pipeline's contracts: the DocList client that reads the catalog lives in knowledge/
    ("recovery", {"recovery", "pipeline", "legaltext"}),
])
def test_a_bottom_package_imports_nothing_above_it(package: str, allowed: set[str]) -> None:
    assert outside(package, allowed) == {}


def test_the_check_sees_an_import_hidden_inside_a_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # given a package whose only import of ours sits inside a function body
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("def f():\n    from knowledge.index import get_client\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert outside("pkg", {"pkg"}) == {"knowledge": {"pkg/mod.py"}}
