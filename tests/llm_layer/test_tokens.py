"""The tokenizer `stats` counts with (`llm/tokens.py`): tiktoken's encodings, as
litellm picks them, read from condense's cache once made."""

from __future__ import annotations

import functools
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.registry
from tiktoken_ext import openai_public

from condense_cli.core.files import cache_dir
from condense_cli.llm import tokens
from condense_cli.llm.tokens import tokenizer_for

TEXTS = ["", "hello world", "def f(x):\n    return x * 2\n", "ünïcödé 漢字 🙂 " * 50]


def counts(model: str = "gpt-4o") -> list[int]:
    tokenizer = tokenizer_for(model)
    return [tokenizer.count(text) for text in TEXTS]


@functools.cache
def truth(name: str = "o200k_base") -> list[int]:
    """The counts of tiktoken's encoding as it makes it itself."""
    tokens._use_bundled_encodings()
    encoding = tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
    return [len(encoding.encode_ordinary(text)) for text in TEXTS]


@pytest.fixture(autouse=True)
def unmade(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """tiktoken's registry of the encodings this process made: none yet."""
    registry: dict[str, Any] = {}
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", registry)
    return registry


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "condense"


def cached(folder: Path) -> list[Path]:
    return sorted(folder.glob("tiktoken-*.marshal"))


def test_an_encoding_is_made_once_then_read_from_the_cache(
    cache: Path, monkeypatch: pytest.MonkeyPatch, unmade: dict[str, Any]
) -> None:
    assert cache_dir() == cache
    assert counts() == truth()
    [made] = cached(cache)
    assert made.name.startswith("tiktoken-o200k_base-")
    assert counts("gpt-3.5-turbo") == truth("cl100k_base")
    assert len(cached(cache)) == 2

    def not_again() -> None:
        raise AssertionError("the encoding was made again")

    truth()
    monkeypatch.setitem(openai_public.ENCODING_CONSTRUCTORS, "o200k_base", not_again)
    assert counts() == truth()  # made in this process once: tiktoken's registry
    unmade.clear()  # another process
    assert counts() == truth()  # read from the cache
    encoding = unmade["o200k_base"]  # registered: it pickles by its name
    assert encoding._mergeable_ranks == {} and len(pickle.dumps(encoding)) < 100
    restored = pickle.loads(pickle.dumps(encoding))
    assert restored.encode_ordinary(TEXTS[3]) == encoding.encode_ordinary(TEXTS[3])
    assert [p.name for p in cache.iterdir() if p.name.startswith(".")] == []  # no leftovers


@pytest.mark.parametrize("damage", [b"", b"\x00not marshal", "truncated", "other"])
def test_a_damaged_cache_is_made_again(
    cache: Path, damage: bytes | str, unmade: dict[str, Any]
) -> None:
    counts()
    unmade.clear()
    [made] = cached(cache)
    whole = made.read_bytes()
    if damage == "truncated":
        made.write_bytes(whole[: len(whole) // 2])
    elif damage == "other":
        import marshal

        made.write_bytes(marshal.dumps({"name": "o200k_base"}))  # not all of an encoding
    else:
        made.write_bytes(damage)  # type: ignore[arg-type]
    assert counts() == truth()
    assert made.read_bytes() == whole  # written again, whole


def test_a_cache_that_cannot_be_written_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert counts() == truth()
    assert blocked.read_text() == "not a folder"


def test_the_cache_follows_the_encodings_files(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unmade: dict[str, Any]
) -> None:
    """Other encoding files (a litellm upgrade) make another cache entry."""
    tokens._use_bundled_encodings()
    files = tmp_path / "encodings"
    shutil.copytree(os.environ["TIKTOKEN_CACHE_DIR"], files)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(files))
    assert counts() == truth()
    first = cached(cache)
    (files / "a-new-file").write_bytes(b"")
    unmade.clear()
    assert counts() == truth()
    assert len(cached(cache)) == 2 and first[0] in cached(cache)
