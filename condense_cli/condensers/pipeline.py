"""Several condensers in a row, stopping at the first condensation; and `hybrid`,
observation masking with a summary only when the masked view is still too long."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from condense_cli.condensers.base import Builder, Condenser, Result, require
from condense_cli.condensers.masking import ObservationMaskingCondenser, ObservationMaskingConfig
from condense_cli.condensers.summarizing import LLMSummarizingCondenser, LLMSummarizingConfig
from condense_cli.core.events import Condensation, View

if TYPE_CHECKING:
    from condense_cli.llm.settings import LLMSettings


@dataclass(frozen=True)
class PipelineConfig:
    condensers: list[dict[str, Any]] = field(default_factory=list)

    def validate(self) -> None:
        require(bool(self.condensers), "condensers", "must list at least one condenser table")


class PipelineCondenser(Condenser):
    """Runs each condenser on the previous one's view."""

    name = "pipeline"
    config_class = PipelineConfig

    def __init__(self, config: PipelineConfig, stages: list[Condenser]) -> None:
        super().__init__(config)
        self.stages = stages

    @classmethod
    def from_config(cls, config: Any, llms: Any, build: Builder) -> Condenser:
        stages = [
            build(table, f"condenser.condensers[{i}]") for i, table in enumerate(config.condensers)
        ]
        return cls(config, stages)

    def describe(self) -> dict[str, Any]:
        return {"type": self.name, "condensers": [stage.describe() for stage in self.stages]}

    def condense(self, view: View) -> Result:
        notes = []
        for stage in self.stages:
            result = stage.condense(view)
            if isinstance(result, Condensation):
                return result
            if result.note:
                notes.append(f"{stage.name}: {result.note}")
            view = result.with_events(result.events)
        return view.with_note("; ".join(notes)) if notes else view


@dataclass(frozen=True)
class HybridConfig(LLMSummarizingConfig):
    attention_window: int = 10
    max_size: int = 500
    max_tokens: int | None = 60_000

    def validate(self) -> None:
        super().validate()
        require(self.attention_window >= 1, "attention_window", "must be at least 1")


class HybridCondenser(LLMSummarizingCondenser):
    """Observation masking, and a rolling summary only when even the masked view
    passes `max_tokens` (or `max_size` events): the summariser reads the events it
    replaces in full, their outputs unmasked."""

    name = "hybrid"
    config_class = HybridConfig

    def __init__(self, config: HybridConfig, llm: LLMSettings) -> None:
        super().__init__(config, llm)
        self.masking = ObservationMaskingCondenser(
            ObservationMaskingConfig(attention_window=config.attention_window)
        )

    def condense(self, view: View) -> Result:
        masked = self.masking.condense(view)
        assert isinstance(masked, View)  # (masking only rewrites the view)
        reason = self.skip_reason(masked)
        if reason is not None:
            return masked.with_note(f"masked older outputs; {reason}")
        return self.get_condensation(view)
