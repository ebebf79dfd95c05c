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

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

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


def tokenizer_for(model: str) -> Tokenizer:
    """The tokenizer litellm would use for `model`."""
    lowered = model.lower()
    if any(f in lowered for f in HF_FAMILIES) or any(f in lowered for f in OLD_ANTHROPIC):
        return _litellm_tokenizer(model)
    encoding_name = encoding_for(model)
    _use_bundled_encodings()
    import tiktoken

    encoding = tiktoken.get_encoding(encoding_name)
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
