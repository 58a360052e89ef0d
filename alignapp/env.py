"""Typed helpers reading settings from the environment (12-factor).

Bad values raise ``ImproperlyConfigured`` naming the variable, so a typo fails at start-up, not
at the first request.
"""
from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """One of ``choices`` (``default`` when unset or empty); anything else names the valid values."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r} is not valid; use one of: {', '.join(choices)}")
    return raw


def env_proxy_header(name: str) -> tuple[str, str] | None:
    """A TLS-terminating proxy's header as ``"X-Forwarded-Proto=https"`` → Django's
    ``("HTTP_X_FORWARDED_PROTO", "https")``; unset → None."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    header, sep, value = raw.partition("=")
    header, value = header.strip(), value.strip()
    if not sep or not header or not value:
        raise ImproperlyConfigured(f"{name}={raw!r} must look like 'X-Forwarded-Proto=https'")
    meta = header.upper().replace("-", "_")
    return (meta if meta.startswith("HTTP_") else f"HTTP_{meta}", value)


def env_request_header(name: str) -> str:
    """A request header's name (``"X-Forwarded-For"``) as Django's ``request.META`` key
    (``"HTTP_X_FORWARDED_FOR"``); unset → ``""``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return ""
    if any(c.isspace() or c in "=:," for c in raw):
        raise ImproperlyConfigured(f"{name}={raw!r} must be one header name, e.g. 'X-Forwarded-For'")
    meta = raw.upper().replace("-", "_")
    return meta if meta.startswith("HTTP_") else f"HTTP_{meta}"


def local_secret_key(path: Path) -> str:
    """This installation's own random key, created once in ``path`` (mode 0600) and read back by every
    process after (web workers, Celery): outside production nobody runs on a key from the repository.
    Created atomically (a hard link of a complete temporary file), so concurrent starts agree."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret-")
    try:
        os.write(fd, secrets.token_urlsafe(50).encode())
        os.close(fd)
        os.link(tmp, path)  # fails if another process linked its key first: then theirs wins
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return path.read_text().strip()
