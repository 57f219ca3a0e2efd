"""The environment the engine benches share (engine_overhead, stage_profile): the bench database and broker, set
before Django loads, and the demo question both run."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DB = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/lexery_bench")
BROKER = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/15")
os.environ.update({"DATABASE_URL": DB, "CELERY_BROKER_URL": BROKER, "CELERY_TASK_ALWAYS_EAGER": "false",
                   "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"), "DJANGO_SETTINGS_MODULE": "lexery.settings"})
QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
