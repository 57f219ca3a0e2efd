"""Typed service errors: what a service refuses, as a sentence for the client, with an HTTP status and a stable
machine ``code``. Services raise them; the one exception handler of every API (``lexery/api_errors.py``) turns them
into ``{"code", "detail"}``, so no view catches a service error by hand.

Plain Python that imports nothing: the services of every app (runs, documents, memory, tenancy, knowledge) raise
these, so the module sits below all of them. The message of a service error is written for the client; an
exception that is not one of these never shows its text to a client (the handler answers a bare 500)."""

from __future__ import annotations


class ServiceError(Exception):
    """A service's refusal. Subclasses fix ``status_code`` and ``code``; the message is the client's ``detail``."""

    status_code: int = 400
    code: str = "bad_request"


class InputError(ServiceError, ValueError):
    """The caller's input is wrong (empty, too long, unknown name, …). A ValueError too: it is a bad value."""

    status_code = 400
    code = "invalid_input"


class NotFound(ServiceError):
    """No such object for this caller: another org's object gets the same answer as a missing one."""

    status_code = 404
    code = "not_found"


class Conflict(ServiceError):
    """The request is well formed but the object's state does not allow it (a run that has ended, …)."""

    status_code = 409
    code = "conflict"


class LimitExceeded(ServiceError):
    """The request passes one of our size or count limits; the sentence names the setting that sets it."""

    status_code = 413
    code = "limit_exceeded"


class UploadTooLarge(LimitExceeded):
    """An upload past ``DOCUMENT_MAX_BYTES``, refused while it streams."""

    code = "upload_too_large"


class QuotaExceeded(LimitExceeded):
    """The org already stores as many of these as its cap allows (``ORG_MAX_DOCUMENTS``, ``ORG_MAX_MEMORY_ITEMS``).

    409, not 413: the request itself is fine and succeeds once the org deletes some (the org's state refuses it)."""

    status_code = 409
    code = "quota_exceeded"


class Unavailable(ServiceError):
    """A part of the service is switched off or down on this server; the sentence says which and why."""

    status_code = 503
    code = "unavailable"
