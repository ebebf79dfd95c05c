"""The registry: condenser type name (and aliases) -> class.

Adding a condenser is one class (with its config class) and one entry here.
"""

from __future__ import annotations

from condense_cli.condensers.attention import LLMAttentionCondenser
from condense_cli.condensers.base import Condenser
from condense_cli.condensers.forgetting import (
    AmortizedForgettingCondenser,
    ConversationWindowCondenser,
    RecentEventsCondenser,
)
from condense_cli.condensers.masking import (
    BrowserOutputCondenser,
    NoopCondenser,
    ObservationMaskingCondenser,
    ToolResultClearingCondenser,
)
from condense_cli.condensers.pipeline import HybridCondenser, PipelineCondenser
from condense_cli.condensers.pruning import TaskPruningCondenser
from condense_cli.condensers.summarizing import (
    LLMSummarizingCondenser,
    StructuredSummaryCondenser,
)

REGISTRY: dict[str, type[Condenser]] = {
    cls.name: cls
    for cls in (
        NoopCondenser,
        ObservationMaskingCondenser,
        BrowserOutputCondenser,
        ToolResultClearingCondenser,
        TaskPruningCondenser,
        RecentEventsCondenser,
        AmortizedForgettingCondenser,
        ConversationWindowCondenser,
        LLMSummarizingCondenser,
        StructuredSummaryCondenser,
        LLMAttentionCondenser,
        PipelineCondenser,
        HybridCondenser,
    )
}

ALIASES: dict[str, str] = {
    "browser_output_masking": "browser_output",
    "recent": "recent_events",
    "amortized": "amortized_forgetting",
    "structured": "structured_summary",
    "context_editing": "tool_result_clearing",
}


def canonical_type(name: str) -> str | None:
    """The registered type for `name` or its alias, or None."""
    name = ALIASES.get(name, name)
    return name if name in REGISTRY else None


def type_choices() -> str:
    """Every accepted type name, for error messages."""
    return ", ".join([*REGISTRY, *(f"{a} (= {t})" for a, t in ALIASES.items() if t in REGISTRY)])
