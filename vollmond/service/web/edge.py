"""The edge of the HTTP API: bounded body reading, strict typed decoding, JSON errors.

Everything a client sends is read here with a size limit enforced while reading (a 16 MB body
is refused after its first 16 KiB, not after it sat in memory), and decoded into a msgspec
struct whose integers are bounded and whose strings carry no NUL (PostgreSQL refuses NUL in
text, and an unbounded integer overflows its columns). What fails is an `ApiError`, which the
guard answers as ``{"error": code, "message": text}`` — never as a traceback.
"""

from __future__ import annotations

from typing import Annotated, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse

T = TypeVar("T")

#: The largest integer any client may send: fits every INTEGER column and the engine's bounds.
INT_BOUND = 2**31 - 1
NO_NUL = r"^[^\x00]*$"

#: A bounded integer: larger ones are refused at the edge, before they reach a query.
BoundedInt = Annotated[int, msgspec.Meta(ge=-INT_BOUND, le=INT_BOUND)]
#: A bounded non-negative integer (sequence numbers).
Seq = Annotated[int, msgspec.Meta(ge=0, le=INT_BOUND)]
#: A finite float of sane size (durations in seconds).
Seconds = Annotated[float, msgspec.Meta(ge=-1e6, le=1e6)]
#: Short text without NUL (names, ids, tokens, codes).
Short = Annotated[str, msgspec.Meta(max_length=256, pattern=NO_NUL)]
#: Longer text without NUL (passwords).
Long = Annotated[str, msgspec.Meta(max_length=4096, pattern=NO_NUL)]


class ApiError(Exception):
    """A request we answer with an error; `status` and `code` go back to the client."""

    def __init__(self, status: int, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.status = status
        self.code = code


def error_response(status: int, code: str, message: str = "") -> JSONResponse:
    return JSONResponse({"error": code, "message": message or code}, status_code=status)


def has_nul(text: str) -> bool:
    return "\x00" in text


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it exceeds `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, "too_large", f"request bodies are limited to {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, "too_large", f"request bodies are limited to {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def decode(body: bytes, kind: type[T], *, invalid: str = "invalid_request") -> T:
    """`body` as `kind`, strictly; an empty body is an empty object. JSON that does not fit
    the schema is refused with the code `invalid`, broken JSON with ``invalid_request``."""
    try:
        return msgspec.json.decode(body or b"{}", type=kind)
    except msgspec.ValidationError as exc:
        raise ApiError(400, invalid, str(exc)) from exc
    except msgspec.DecodeError as exc:
        raise ApiError(400, "invalid_request", str(exc)) from exc


async def read_json(
    request: Request, kind: type[T], limit: int, *, invalid: str = "invalid_request"
) -> T:
    """The body of `request`, bounded by `limit` bytes, decoded as `kind`."""
    return decode(await read_body(request, limit), kind, invalid=invalid)
