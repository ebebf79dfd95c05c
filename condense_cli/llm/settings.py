"""The model settings every LLM condenser takes: an `[llm]` or `[llm.NAME]` table,
checked (`validate`) and passed on to litellm."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, get_origin, get_type_hints

from condense_cli.core.errors import ConfigError
from condense_cli.core.redact import remember


@dataclass(frozen=True)
class LLMSettings:
    """Model settings of an `[llm]` or `[llm.NAME]` table; passed on to litellm.
    No model is assumed: a session goes only to a model the user names (`model`
    empty: none is named, and a model call is refused, `llm.client.complete`)."""

    model: str = ""
    api_key: str | None = None
    api_key_env: str | None = None
    base_url: str | None = None
    api_version: str | None = None
    custom_llm_provider: str | None = None
    timeout: float = 60
    num_retries: int = 3
    retry_min_wait: float = 1
    retry_max_wait: float = 30
    temperature: float | None = 0
    top_p: float | None = None
    max_output_tokens: int | None = None
    # The model's window in tokens (OpenHands' meaning); unset: litellm's figure, or
    # what the server reports, or a default (condense_cli/llm/window.py).
    max_input_tokens: int | None = None
    seed: int | None = None
    drop_params: bool = True
    extra_headers: dict[str, str] = field(default_factory=dict)
    # Keys of OpenHands' LLMConfig that litellm takes, passed on as they are
    # (the others are dropped with a note: condense_cli/openhands_config.py).
    top_k: float | None = None
    reasoning_effort: str | None = None
    safety_settings: list[dict[str, str]] | None = None
    aws_access_key_id: str | None = None
    aws_secret_access_key: str | None = None
    aws_region_name: str | None = None
    input_cost_per_token: float | None = None
    output_cost_per_token: float | None = None
    completion_kwargs: dict[str, Any] | None = None

    def validate(self) -> None:
        if self.timeout <= 0:
            raise ConfigError("timeout must be positive")
        if self.num_retries < 0:
            raise ConfigError("num_retries must not be negative")
        if self.max_input_tokens is not None and self.max_input_tokens < 512:
            raise ConfigError("max_input_tokens must be at least 512 (the model's window)")
        if self.max_output_tokens is not None and self.max_output_tokens < 16:
            raise ConfigError("max_output_tokens must be at least 16")
        if self.api_key is not None and self.api_key_env is not None:
            raise ConfigError("set api_key or api_key_env, not both")

    def resolved_api_key(self) -> str | None:
        """The API key, read from `api_key_env` when that is how it is given."""
        if self.api_key_env is None:
            return self.api_key
        value = os.environ.get(self.api_key_env)
        remember([value])
        if not value:
            raise ConfigError(
                f"api_key_env names ${self.api_key_env}, which is not set",
                hint=f"export {self.api_key_env}=... or set api_key in the [llm] table",
            )
        return value


LLM_TABLE_KEYS = frozenset(
    f.name for f in fields(LLMSettings) if get_origin(get_type_hints(LLMSettings)[f.name]) is dict
)
