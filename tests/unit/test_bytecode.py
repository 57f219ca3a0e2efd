"""The start-up bench names the project modules a fresh process would compile again (no current bytecode)."""

from __future__ import annotations

import os
import py_compile
from pathlib import Path

from bench.startup import uncompiled_modules


def test_counts_modules_without_current_bytecode(tmp_path: Path) -> None:
    module = tmp_path / "app" / "mod.py"
    module.parent.mkdir()
    module.write_text("X = 1\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "dep.py").write_text("Y = 2\n")  # installed packages are pip's business
    assert uncompiled_modules(tmp_path) == 1

    py_compile.compile(str(module))
    assert uncompiled_modules(tmp_path) == 0

    later = module.stat().st_mtime + 10
    os.utime(module, (later, later))  # edited after it was compiled: the bytecode is stale
    assert uncompiled_modules(tmp_path) == 1
