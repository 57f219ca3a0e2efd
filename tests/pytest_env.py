"""Loaded with ``-p tests.pytest_env`` before pytest-django imports the settings: the suite gets its own
state directory (SQLite, Qdrant local path, snippets) so it never touches the developer's var/."""

import os
import tempfile

os.environ.setdefault("LEXERY_VAR_DIR", tempfile.mkdtemp(prefix="lexery-test-"))
os.environ.setdefault("LOG_LEVEL", "WARNING")
