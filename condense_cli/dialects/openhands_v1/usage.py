"""The model calls an OpenHands V1 conversation records: `base_state.json`'s
`stats.service_to_metrics`, a call per `token_usages` entry of each service (the
agent's, its condenser's), with the dollars the SDK recorded for it (`costs`, one per
call, in the same order, with its time). LiteLLM's `prompt_tokens` hold the cache reads (not
the writes, which it counts apart)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from condense_cli.core.jsonlines import as_dict
from condense_cli.core.usage import CONDENSER, Spending, Usage, count, placed
from condense_cli.dialects.openhands_v1.detect import CONDENSATION

if TYPE_CHECKING:
    from condense_cli.dialects.openhands_v1.storage import StoredEvent


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


def conversation_spending(
    base_state: dict[str, Any] | None, records: Iterable[StoredEvent]
) -> Spending:
    """The agent's calls and the condensations among them: a call falls where the
    first event of its response is (`llm_response_id`), or with the call before it
    where none is; a condensation's own call is the condenser's of the response it
    names, else the condenser's calls in order when there is one per condensation."""
    usage = conversation_usage(base_state)
    summaries = [c for c in usage if c.service == CONDENSER]
    first_at: dict[str, int] = {}
    condensations: list[tuple[int, object]] = []
    for record in records:
        reply = record.response  # (its `llm_response_id`, kept: no event read again)
        if record.kind == CONDENSATION:
            condensations.append((record.position, reply))
        elif isinstance(reply, str):
            first_at.setdefault(reply, record.position)
    calls, at = [], -1
    for call in usage:
        if call.service != CONDENSER:
            at = first_at.get(_reply(call), at)
            calls.append(replace(call, line=at))
    by_reply = {_reply(c): c for c in summaries}
    in_order = len(summaries) == len(condensations)
    own = {}
    for index, (position, reply) in enumerate(condensations):
        named = by_reply.get(reply) if isinstance(reply, str) else None
        if named is not None or in_order:
            own[position] = named or summaries[index]
    return placed(calls, [position for position, _ in condensations], own)


def _reply(call: Usage) -> str:
    return (call.key or "").partition(":")[2]
