"""Reading an HTTP reply body within a size cap, its Content-Encoding undone as it arrives.

Every HTTP reader of omk (URL inlining, the model and judge APIs) reads the raw bytes off the
connection and hands them to one `BodyReader`. Each encoding layer is undone a bounded piece at a
time (zlib's and brotli's `max_length`), so no layer ever holds more than one piece beyond what
has been counted: a small reply that unpacks to gigabytes fails with `BodyTooLarge` as soon as
its output passes the cap, before that output exists. The raw bytes, the output of every
layer and the final body are each held to the cap, and at most `MAX_ENCODINGS` layers are
undone, so the work a reply can cause is bounded too.

Supported: gzip, deflate (zlib-wrapped or raw, as httpx accepts), br when a `brotli` module with
bounded output is installed, and identity. Other names are passed over, as httpx does; omk's
clients announce only what is supported (`accept_encoding()`), so a server that sends anything
else has ignored the request.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import AsyncIterable, Iterator
from typing import Any, Protocol

MAX_ENCODINGS = 3  # stacked encodings undone at most; servers send one
PIECE = 64 * 1024  # bytes a layer may produce in one step


class BodyTooLarge(Exception):
    """The body, raw or decoded, passed the cap."""


class BadEncoding(Exception):
    """The body cannot be decoded (a corrupt stream, or too many stacked encodings)."""


@functools.cache
def _bounded_brotli() -> Any:
    """The `brotli` module when it can stop at an output size (brotli 1.2 and later), else None."""
    try:
        import brotli
    except ImportError:
        return None
    return brotli if hasattr(getattr(brotli, "Decompressor", None), "can_accept_more_data") else None


class _Layer(Protocol):
    def decode(self, data: bytes) -> Iterator[bytes]:
        """Pieces of at most about `PIECE` bytes, together the decoding of `data`."""
        ...


class _Zlib:
    """gzip (`wbits` 16 + 15) or a zlib-wrapped deflate stream. Bytes after the end of the
    stream are ignored, as httpx ignores them."""

    def __init__(self, wbits: int):
        self._obj = zlib.decompressobj(wbits)

    def decode(self, data: bytes) -> Iterator[bytes]:
        while not self._obj.eof:
            out = self._obj.decompress(data, PIECE)
            if out:
                yield out
            data = self._obj.unconsumed_tail
            if not data and len(out) < PIECE:  # a full piece: more output may be waiting inside zlib
                return


class _Deflate:
    """deflate: zlib-wrapped as the standard says, or raw as some servers send it (httpx
    accepts both); the first two bytes tell which."""

    def __init__(self) -> None:
        self._head = b""
        self._inner: _Zlib | None = None

    def decode(self, data: bytes) -> Iterator[bytes]:
        if self._inner is None:
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            cmf, flg = data[0], data[1]
            wrapped = cmf & 0x0F == 8 and (cmf << 8 | flg) % 31 == 0
            self._inner = _Zlib(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        yield from self._inner.decode(data)


class _Brotli:
    def __init__(self, brotli: Any):
        self._obj = brotli.Decompressor()

    def decode(self, data: bytes) -> Iterator[bytes]:
        while not self._obj.is_finished():
            out = self._obj.process(data, output_buffer_limit=PIECE)
            data = b""  # taken in whole: what is left of it comes out of later calls
            if out:
                yield out
            if len(out) < PIECE and self._obj.can_accept_more_data():
                return


def _decode_errors() -> tuple[type[Exception], ...]:
    brotli = _bounded_brotli()
    return (zlib.error, brotli.error) if brotli is not None else (zlib.error,)


def _layer(name: str) -> _Layer | None:
    if name in ("gzip", "x-gzip"):
        return _Zlib(zlib.MAX_WBITS | 16)
    if name == "deflate":
        return _Deflate()
    brotli = _bounded_brotli() if name == "br" else None
    return _Brotli(brotli) if brotli is not None else None


def accept_encoding() -> str:
    """The Accept-Encoding header value for what `BodyReader` can undo."""
    return "gzip, deflate, br" if _bounded_brotli() is not None else "gzip, deflate"


class BodyReader:
    """One reply's body: `feed` the raw bytes as they arrive, then `body()`.

    `content_encoding` is the header as sent (`gzip`, `gzip, gzip`, None); the encodings are
    undone last first. Raises `BodyTooLarge` once anything passes `max_bytes`, `BadEncoding`
    when the stream is corrupt or more than `MAX_ENCODINGS` encodings are stacked."""

    def __init__(self, content_encoding: str | None, max_bytes: int):
        names = [n.strip().lower() for n in (content_encoding or "").split(",")]
        names = [n for n in names if n and n != "identity"]
        if len(names) > MAX_ENCODINGS:
            raise BadEncoding(f"{len(names)} stacked content encodings ({content_encoding}); at most {MAX_ENCODINGS} are undone")
        layers = [_layer(n) for n in reversed(names)]
        self._layers = [layer for layer in layers if layer is not None]
        self._encoding = content_encoding
        self.max_bytes = max_bytes
        self._counts = [0] * (len(self._layers) + 1)  # raw bytes, then each layer's output
        self._parts: list[bytes] = []

    def feed(self, raw: bytes) -> None:
        self._count(0, raw)
        try:
            for piece in self._through(0, raw):
                self._parts.append(piece)
        except BodyTooLarge:
            self._parts.clear()
            raise
        except _decode_errors() as exc:
            raise BadEncoding(f"cannot decode the body (Content-Encoding {self._encoding}): {exc}") from None

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._layers):
            yield data
            return
        for piece in self._layers[index].decode(data):
            self._count(index + 1, piece)
            yield from self._through(index + 1, piece)

    def _count(self, index: int, data: bytes) -> None:
        self._counts[index] += len(data)
        if self._counts[index] > self.max_bytes:
            raise BodyTooLarge(f"over the {self.max_bytes}-byte cap")

    @property
    def size(self) -> int:
        """Bytes of body so far (decoded)."""
        return self._counts[-1]

    def body(self) -> bytes:
        return b"".join(self._parts)


async def read_body(chunks: AsyncIterable[bytes], content_encoding: str | None, max_bytes: int) -> bytes:
    """The decoded body of the raw `chunks`, within `max_bytes` (`BodyTooLarge`, `BadEncoding`)."""
    reader = BodyReader(content_encoding, max_bytes)
    async for chunk in chunks:
        reader.feed(chunk)
    return reader.body()
