"""The model calls an OpenHands V1 conversation records: `base_state.json`'s
`stats.service_to_metrics`, a call per `token_usages` entry of each service (the
agent's, its condenser's), with the dollars the SDK recorded for it (`costs`, one per
call, in the same order, with its time). LiteLLM's `prompt_tokens` hold the cache reads (not
the writes, which it counts apart)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from condense_cli.core.jsonlines import as_dict
from condense_cli.core.usage import Usage, count


def conversation_usage(base_state: dict[str, Any] | None) -> list[Usage]:
    """Each call the conversation's services made, service by service."""
    found = []
    services = as_dict(as_dict(as_dict(base_state).get("stats")).get("service_to_metrics"))
    for service, value in services.items():
        metrics = as_dict(value)
        costs = _listed(metrics, "costs")
        for index, each in enumerate(_listed(metrics, "token_usages")):
            usage = as_dict(each)
            spent = as_dict(costs[index]) if index < len(costs) else {}
            model = usage.get("model") or spent.get("model") or metrics.get("model_name")
            if not isinstance(model, str):
                continue
            read = count(usage, "cache_read_tokens")
            cost, reply = spent.get("cost"), usage.get("response_id")
            recorded = (
                float(cost)
                if isinstance(cost, int | float) and not isinstance(cost, bool)
                else None
            )
            found.append(
                Usage(
                    _when(spent.get("timestamp")),
                    model,
                    max(0, count(usage, "prompt_tokens") - read),
                    count(usage, "completion_tokens"),
                    count(usage, "cache_write_tokens"),
                    0,
                    read,
                    key=f"{service}:{reply}" if isinstance(reply, str) and reply else None,
                    cost=recorded,
                    service=str(service),
                )
            )
    return found


def _listed(metrics: dict[str, Any], key: str) -> list[Any]:
    value = metrics.get(key)
    return value if isinstance(value, list) else []


def _when(stamp: Any) -> str:
    if isinstance(stamp, int | float) and not isinstance(stamp, bool):
        return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return ""
