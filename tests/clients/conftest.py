"""Fixtures of the real-client tests: the pinned clients and the scripted servers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.clients.install import Clients, ensure_clients
from tests.clients.servers import AnthropicServer, GeminiServer, OpenAIServer


@pytest.fixture(scope="session")
def clients() -> Clients:
    """Claude Code, Codex and Gemini CLI at their pinned versions, installed from npm
    if missing."""
    return ensure_clients()


@pytest.fixture
def anthropic() -> Iterator[AnthropicServer]:
    with AnthropicServer() as server:
        yield server


@pytest.fixture
def openai() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def gemini() -> Iterator[GeminiServer]:
    with GeminiServer() as server:
        yield server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every real-client test is slow: each starts a client binary and a server."""
    here = __file__.rpartition("/")[0]
    for item in items:
        if str(item.path).startswith(here + "/"):
            item.add_marker(pytest.mark.slow)
