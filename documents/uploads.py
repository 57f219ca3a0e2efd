"""The upload's size, enforced while the body streams: a body that announces more than the limit is refused before
a byte of it is read, and one that does not announce its length (chunked) or lies about it is cut off as soon as
the file passes the limit. Before issue 12 the whole body was read, then measured."""

from __future__ import annotations

from typing import Any

from django.core.files.uploadhandler import FileUploadHandler
from rest_framework.request import Request

from lexery.errors import UploadTooLarge


def _refuse(limit: int, size: int | None = None) -> UploadTooLarge:
    said = f"the upload is {size} bytes" if size is not None else "the file is larger than the limit"
    return UploadTooLarge(f"{said}; the limit is {limit} bytes (DOCUMENT_MAX_BYTES)")


class SizeLimitHandler(FileUploadHandler):
    """First in the chain: counts each file's bytes as they arrive and stops the upload past ``limit``."""

    def __init__(self, limit: int, request: Any = None) -> None:
        super().__init__(request)
        self.limit = limit
        self.received = 0

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > self.limit:
            raise _refuse(self.limit)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


def limit_upload(request: Request, *, max_bytes: int, overhead_bytes: int) -> None:
    """Call before ``request.data``: refuses an announced oversize body at once, arms the streaming count."""
    try:
        announced = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        announced = 0
    if announced > max_bytes + overhead_bytes:
        raise _refuse(max_bytes, announced)
    request.upload_handlers.insert(0, SizeLimitHandler(max_bytes, request))
