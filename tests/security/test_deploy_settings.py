"""Issue 12, item 7: production takes its TLS settings from the environment, refuses a short SECRET_KEY, and
``check --deploy`` is clean with the README's production settings."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The README's "Production" settings (kept in step with it).
README_PRODUCTION = {"LEXERY_MODE": "production", "ALLOWED_HOSTS": "brain.example.com",
                     "CSRF_TRUSTED_ORIGINS": "https://brain.example.com", "SECURE_HSTS_PRELOAD": "true",
                     "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https"}


def manage(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "LEXERY_MODE", "DEBUG")}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**clean, "LEXERY_VAR_DIR": str(tmp_path), "DATABASE_URL": "", **env}, timeout=120)


def test_check_deploy_is_clean_with_the_readmes_production_settings(tmp_path):
    done = manage("check", "--deploy", "--fail-level", "WARNING", tmp_path=tmp_path,
                  SECRET_KEY=secrets.token_urlsafe(50), **README_PRODUCTION)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_production_refuses_a_secret_key_under_50_characters(tmp_path):
    done = manage("check", tmp_path=tmp_path, SECRET_KEY="x" * 20 + "abcde", **README_PRODUCTION)

    assert done.returncode != 0 and "SECRET_KEY must be at least 50 characters" in done.stderr


def test_each_tls_setting_comes_from_the_environment(tmp_path):
    code = ("from django.conf import settings as s; print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, "
            "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_PROXY_SSL_HEADER, s.CSRF_TRUSTED_ORIGINS)")
    done = manage("shell", "-c", code, tmp_path=tmp_path, SECRET_KEY=secrets.token_urlsafe(50),
                  **{**README_PRODUCTION, "SECURE_SSL_REDIRECT": "false", "SECURE_HSTS_SECONDS": "60",
                     "SESSION_COOKIE_SECURE": "false"})

    assert done.stdout.strip().split("\n")[-1] == ("False 60 False True ('HTTP_X_FORWARDED_PROTO', 'https') "
                                          "['https://brain.example.com']"), done.stderr
