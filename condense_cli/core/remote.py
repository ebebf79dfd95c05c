"""Logs on an object store or a web server (`s3://`, `gs://`, `az://`, `https://`),
read through fsspec, read-only.

A log file is streamed, a megabyte at a time, into a local spool file, as standard
input is (`LogSource`): replay reads events back by byte range, which a spool does
at disk speed, and memory holds no more than a chunk. The spool goes when the log is
closed. A conversation folder (OpenHands V1) is copied file by file into a temporary
folder for as long as it is read. fsspec, and the package for the store (s3fs,
gcsfs, adlfs, aiohttp for https), are imported only for a URL: the extra
`condense-cli[remote]` installs fsspec, s3fs and aiohttp.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import Any

from condense_cli.core.errors import ConfigError, LogError

_URL = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://")
# the stores logs are kept on; fsspec knows many more (ftp, github, reference, …), but
# those would reach out to other hosts or need arguments a URL cannot give
SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "http", "https"})


def is_url(name: str) -> bool:
    """Whether `name` is a URL fsspec reads (`file://` is a local path)."""
    found = _URL.match(name)
    return found is not None and found["scheme"].lower() != "file"


def local_path(name: str) -> str:
    """`name` with a `file://` URI turned into the path it names (percent-escapes
    decoded); ValueError for one naming another host. Other names as they are."""
    from urllib.parse import unquote, urlsplit

    if name[:7].lower() != "file://":
        return name
    parts = urlsplit(name)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"{name}: a file:// URI names a file on this machine: file:///path")
    return unquote(parts.path)


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec file system of `url` and the path within it."""
    scheme = url.partition("://")[0].lower()
    if scheme not in SCHEMES:
        raise ConfigError(
            f"{url}: condense does not read {scheme}:// URLs",
            hint="give a path, or an s3://, gs://, az:// or http(s):// URL",
        )
    try:
        import fsspec
    except ImportError:
        raise ConfigError(
            f"{url}: reading logs from a URL needs fsspec, which is not installed",
            hint="pip install 'condense-cli[remote]' (fsspec, s3fs, aiohttp)",
        ) from None
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:  # no package for the store, or no such store
        raise ConfigError(
            f"{url}: {exc}", hint="install the fsspec package for the store"
        ) from None
    return fs, path


def failed(url: str, exc: Exception) -> LogError:
    """What a store's error means for the log at `url`."""
    if isinstance(exc, FileNotFoundError):
        return LogError(url, "no such object", hint="check the URL (and the credentials)")
    if isinstance(exc, PermissionError):
        return LogError(url, "permission denied", hint="check the store's credentials")
    return LogError(url, f"cannot read: {type(exc).__name__}: {exc}")


def open_url(url: str) -> Any:
    """The object at `url`, open for reading as a stream of bytes."""
    fs, path = filesystem(url)
    try:
        if fs.isdir(path):
            raise LogError(url, "is a folder on the store, not a log file")
        return fs.open(path, "rb")
    except LogError:
        raise
    except Exception as exc:  # each store has errors of its own
        raise failed(url, exc) from None


def is_folder(url: str) -> bool:
    fs, path = filesystem(url)
    try:
        return bool(fs.isdir(path))
    except Exception as exc:
        raise failed(url, exc) from None


@contextlib.contextmanager
def local_folder(url: str) -> Iterator[str]:
    """The folder at `url`, copied into a temporary folder while the block runs."""
    import tempfile

    fs, path = filesystem(url)
    root = path.rstrip("/")
    with tempfile.TemporaryDirectory(prefix="condense-") as local:
        try:  # file by file: a web server's listing names its folders as links too
            for folder, _, files in fs.walk(root, topdown=True):
                inside = os.path.join(local, folder.rstrip("/")[len(root) :].lstrip("/"))
                os.makedirs(inside, exist_ok=True)
                for name in files:
                    fs.get_file(f"{folder.rstrip('/')}/{name}", os.path.join(inside, name))
        except Exception as exc:
            raise failed(url, exc) from None
        yield local


def walk(url: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """(folder URL, sub-folder names, file names) of every folder under `url`, top down;
    a caller may prune the sub-folder names in place, as with `os.walk`."""
    fs, root = filesystem(url)
    scheme = _URL.match(url)
    prefix = scheme.group(0) if scheme else ""
    try:
        for folder, dirs, files in fs.walk(root, topdown=True):
            # an object store gives paths within it, a web server whole URLs
            whole = folder if _URL.match(folder) else prefix + folder
            yield whole.rstrip("/"), dirs, sorted(files)
    except Exception as exc:
        raise failed(url, exc) from None


def head(url: str, limit: int) -> bytes:
    """The first `limit` bytes of the object at `url` (b"" if unreadable)."""
    fs, path = filesystem(url)
    try:
        with fs.open(path, "rb", block_size=limit) as file:
            data = file.read(limit)
    except Exception:
        return b""
    return bytes(data)


def state(url: str) -> list[object] | None:
    """What the object (or every object of the folder) at `url` is now, as a cache
    compares it: each one's name, size and ETag (else its time); None when there is
    none, or the store cannot say."""
    fs, path = filesystem(url)
    try:
        found = fs.find(path, detail=True) if fs.isdir(path) else {path: fs.info(path)}
    except Exception:
        return None
    return [
        [name, info.get("size"), str(info.get("ETag") or info.get("LastModified") or "")]
        for name, info in sorted(found.items())
    ] or None
