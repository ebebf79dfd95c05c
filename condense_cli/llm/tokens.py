"""Token counting for `stats`, offline and without importing litellm where we can.

litellm counts most models with tiktoken (`o200k_base` for gpt-4o models,
tiktoken's own choice for other OpenAI models, `cl100k_base` otherwise) and
ships those encodings. We use tiktoken directly with litellm's files, which
gives the same counts in a fraction of the start-up; for the few model
families litellm counts with a Hugging Face tokenizer we ask litellm itself.

Texts are counted one at a time: tiktoken's `encode_ordinary_batch` starts a
pool of 8 threads per batch and hands each text to it as a future. On the short
texts of most events that costs more than the encoding (the first 30,000 texts
of the 100k-event benchmark log: 2.40 s in batches, 0.99 s in a loop, the same
counts); on long texts the pool does use both cores of this machine, as the
encoder lets go of the GIL, but the walk around it holds the GIL, so `stats`
uses the second core with a second process instead (see `halves`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from condense_cli.core.files import cache_dir

# What `tiktoken.Encoding` is made of (a cached encoding must hold them all)
ENCODING_KEYS = {"name", "pat_str", "mergeable_ranks", "special_tokens"}
HF_FAMILIES = ("llama-2", "llama-3", "replicate", "command-r")
OLD_ANTHROPIC = ("claude-2", "claude-instant")


class Tokenizer:
    """Counts tokens of a text (`count`) or of many; `name` says which tokenizer it is."""

    def __init__(self, name: str, count: Callable[[str], int]) -> None:
        self.name = name
        self.count = count

    def count_batch(self, texts: list[str]) -> list[int]:
        count = self.count
        return [count(text) for text in texts]


# The model whose tokenizer counts where the configuration names none.
COUNTING_MODEL = "gpt-4o-mini"


def tokenizer_for(model: str) -> Tokenizer:
    """The tokenizer litellm would use for `model`."""
    lowered = model.lower()
    if any(f in lowered for f in HF_FAMILIES) or any(f in lowered for f in OLD_ANTHROPIC):
        return _litellm_tokenizer(model)
    encoding_name = encoding_for(model)
    encoding = _encoding(encoding_name)
    # tiktoken keeps its merge table (200,000 entries for o200k_base) in Python too,
    # only to pickle an encoding it did not register; counting reads its Rust copy.
    # Letting it go frees 25 MB that reading the log then reuses.
    encoding._mergeable_ranks = {}
    encode = encoding.encode_ordinary

    def count(text: str) -> int:
        return len(encode(text))

    return Tokenizer(f"tiktoken {encoding_name} (as litellm counts for {model})", count)


def encoding_for(model: str) -> str:
    """The tiktoken encoding litellm picks for `model`."""
    if "/" in model:
        return "cl100k_base"  # litellm counts provider-prefixed names as gpt-3.5-turbo
    if "gpt-4o" in model:
        return "o200k_base"
    import tiktoken

    try:
        return tiktoken.encoding_name_for_model(model)
    except KeyError:
        return "cl100k_base"


def _encoding(name: str) -> Any:
    """tiktoken's encoding `name`. What it is made of (its merge table, 200,000 byte
    strings for o200k_base) is read from condense's cache when there: `marshal` loads
    it in 0.03 s where tiktoken parses its base64 file in 0.2 s, which every `stats`
    with tokens paid. Made and written there otherwise."""
    _use_bundled_encodings()
    import tiktoken.registry
    from tiktoken_ext.openai_public import ENCODING_CONSTRUCTORS

    if name in tiktoken.registry.ENCODINGS or name not in ENCODING_CONSTRUCTORS:
        return tiktoken.get_encoding(name)  # made in this process already, or not ours
    path = _cached_encoding_path(name)
    if path is None:
        return tiktoken.get_encoding(name)
    made = _read_cached(path)
    if made is None:
        made = ENCODING_CONSTRUCTORS[name]()
        _write_cached(path, made)
    # registered as tiktoken registers its own, so that it pickles by its name
    return tiktoken.registry.ENCODINGS.setdefault(name, tiktoken.Encoding(**made))


def _cached_encoding_path(name: str) -> Path | None:
    """Where the cache keeps encoding `name` as tiktoken, the files it reads (the
    folder `TIKTOKEN_CACHE_DIR`, as they are now) and this Python make it; None when
    tiktoken would download them."""
    import marshal
    import sys

    import tiktoken

    source = os.environ.get("TIKTOKEN_CACHE_DIR")
    if not source:
        return None
    try:
        entries = [(e.name, e.stat()) for e in os.scandir(source)]
    except OSError:
        return None
    files = sorted((file, stat.st_size, stat.st_mtime_ns) for file, stat in entries)
    key = repr((name, tiktoken.__version__, sys.version_info[:2], marshal.version, source, files))
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_dir() / f"tiktoken-{name}-{digest}.marshal"


def _read_cached(path: Path) -> dict[str, Any] | None:
    """An encoding's constructor arguments as cached (None if not there or not whole)."""
    import marshal

    try:
        made = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(made, dict) or not made.keys() >= ENCODING_KEYS:
        return None
    return made


def _write_cached(path: Path, made: dict[str, Any]) -> None:
    """Cache an encoding's constructor arguments: written whole (a temporary file
    renamed over the name) or not at all; a cache that cannot be written is skipped."""
    import marshal
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".writing-")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(marshal.dumps(made))
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _use_bundled_encodings() -> None:
    """Point tiktoken at the encodings litellm ships, so nothing is downloaded."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return
    bundled = (
        Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    )
    if bundled.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)


def _litellm_tokenizer(model: str) -> Tokenizer:
    from condense_cli.llm.client import litellm_module

    litellm = litellm_module()

    def count(text: str) -> int:
        return int(litellm.token_counter(model=model, text=text))

    return Tokenizer(f"litellm's tokenizer for {model}", count)
