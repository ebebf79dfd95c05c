"""An OpenHands `config.toml`, read as it is (SPEC section 4).

OpenHands users already keep `[llm]` and `[condenser]` tables in a `config.toml`
beside `[core]`, `[agent]`, `[sandbox]` and the rest; condense reads only the
first two. Every key of OpenHands' `LLMConfig` is accepted in an `[llm]` or
`[llm.NAME]` table: those litellm takes are `LLMSettings` fields, passed on
(see `llm.call_options`), and the ones below, which mean nothing for a
condenser's model call, are dropped here with one note. `[condenser]` tables
already use OpenHands' keys.
"""

from __future__ import annotations

from typing import Any

# Keys of OpenHands' LLMConfig (V0, openhands/core/config/llm_config.py, over its
# history) that litellm does not take or that only steer OpenHands' own agent.
IGNORED_LLM_KEYS = frozenset(
    {
        "caching_prompt",
        "correct_num",
        "custom_tokenizer",
        "disable_stop_word",
        "disable_vision",
        "draft_editor",
        "embedding_base_url",
        "embedding_deployment_name",
        "embedding_model",
        "for_routing",
        "log_completions",
        "log_completions_folder",
        "max_message_chars",
        "modify_params",
        "native_tool_calling",
        "ollama_base_url",
        "openrouter_app_name",
        "openrouter_site_url",
        "retry_multiplier",
        "supports_function_calling",
    }
)


def drop_ignored_llm_keys(llm: dict[str, Any], condenser: dict[str, Any]) -> str | None:
    """Remove the ignored LLMConfig keys from every model table, in place.

    Model tables are `[llm]`, each `[llm.NAME]`, and any inline `llm_config`
    table of a condenser (pipeline stages included). Returns the one note that
    lists what was ignored, or None.
    """
    dropped: list[str] = []

    def drop(table: dict[str, Any], where: str) -> None:
        keys = sorted(
            k for k, v in table.items() if k in IGNORED_LLM_KEYS and not isinstance(v, dict)
        )
        for key in keys:
            del table[key]
        if keys:
            dropped.append(f"[{where}] {', '.join(keys)}")

    def walk(table: Any, where: str) -> None:
        if not isinstance(table, dict):
            return
        if isinstance(table.get("llm_config"), dict):
            drop(table["llm_config"], f"{where}.llm_config")
        stages = table.get("condensers")
        if isinstance(stages, list):
            for i, stage in enumerate(stages):
                walk(stage, f"{where}.condensers[{i}]")

    drop(llm, "llm")
    for name, table in llm.items():
        if isinstance(table, dict):
            drop(table, f"llm.{name}")
    walk(condenser, "condenser")
    if not dropped:
        return None
    return "ignoring OpenHands LLM settings that condense does not use: " + "; ".join(dropped)
