"""The model client: the only module that imports litellm, and only when a model is called.

litellm takes seconds to import, so `view`, `check`, `stats` and `config` never
reach this import. Before importing it we make it use its bundled model price
map instead of fetching one from the internet.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from condense_cli.core.errors import CondenserError, ConfigError, ContextOverflow, Refused
from condense_cli.core.text import plural

if TYPE_CHECKING:
    from condense_cli.llm.settings import LLMSettings

TRANSIENT = (
    "RateLimitError",
    "ServiceUnavailableError",
    "InternalServerError",
    "APIConnectionError",
    "Timeout",
    "APIError",
)
# Credentials the provider refused, or none given at all: a configuration error,
# never retried. litellm reports a missing OpenAI key as an InternalServerError,
# so a missing key is also recognised by the message the provider's client gives.
AUTHENTICATION = ("AuthenticationError", "PermissionDeniedError")
REFUSED = ("UnsupportedParamsError", "UnprocessableEntityError", "JSONSchemaValidationError")
MISSING_KEY = ("missing credentials", "api_key client option must be set", "missing api key")
# A refused prompt that was too long: litellm's class, or the server's own words
# (llama.cpp, vLLM and others answer 400 and say so).
OVERFLOW = ("ContextWindowExceededError",)
OVERFLOW_WORDS = ("context length", "context window", "n_ctx", "exceeds the", "too many tokens")
# A request whose shape the server refused, whatever status litellm passes on
# (llama-cpp-python's 422 for a `json_schema` arrives as an InternalServerError).
REFUSAL_WORDS = ("validation error", "input should be", "not supported", "unsupported")
MESSAGE_LIMIT = 300
T = TypeVar("T")
# Providers whose calls need a key, and the variables their clients read it from: a
# call with none of them set, and no key in the [llm] table, is refused before litellm
# is imported (3 s). Other providers are left to litellm to judge.
KEY_VARIABLES = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
}


@dataclass
class Answer:
    """What the model said, and what it cost."""

    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def usage(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
        }


def litellm_module() -> Any:
    """Import litellm offline-safe and quiet (its price map is read from the package)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


def call_options(settings: LLMSettings) -> dict[str, Any]:
    """Keyword arguments for `litellm.completion` from our settings."""
    options: dict[str, Any] = {
        "model": settings.model,
        "timeout": settings.timeout,
        "max_retries": 0,  # we retry ourselves, with backoff we control
        "num_retries": 0,
        "caching": False,
        "drop_params": settings.drop_params,
    }
    api_key = settings.resolved_api_key() or None  # `api_key = ""` gives no key
    optional = {
        "api_key": api_key,
        "base_url": settings.base_url,
        "api_version": settings.api_version,
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "max_tokens": settings.max_output_tokens,
        "seed": settings.seed,
        "extra_headers": settings.extra_headers or None,
        "custom_llm_provider": settings.custom_llm_provider,
        "top_k": settings.top_k,
        "reasoning_effort": settings.reasoning_effort,
        "safety_settings": settings.safety_settings,
        "aws_access_key_id": settings.aws_access_key_id,
        "aws_secret_access_key": settings.aws_secret_access_key,
        "aws_region_name": settings.aws_region_name,
        "input_cost_per_token": settings.input_cost_per_token,
        "output_cost_per_token": settings.output_cost_per_token,
    }
    if settings.base_url and "/" not in settings.model and not settings.custom_llm_provider:
        optional["custom_llm_provider"] = "openai"  # an OpenAI-compatible server
    options.update({k: v for k, v in optional.items() if v is not None})
    return {**(settings.completion_kwargs or {}), **options}  # ours win


def complete(
    settings: LLMSettings,
    messages: list[dict[str, Any]],
    sleep: Any = time.sleep,
    **extra: Any,
) -> Answer:
    """One chat completion, retried with backoff on rate limits, 5xx and timeouts; a
    server that refuses the connection fails at once."""
    require_model(settings)
    require_key(settings)
    litellm = litellm_module()
    options = {**call_options(settings), **extra}
    attempts = settings.num_retries + 1
    for attempt in range(1, attempts + 1):
        try:
            response = litellm.completion(messages=messages, **options)
            return _answer(litellm, response, settings)
        except Exception as exc:
            name = type(exc).__name__
            if name in AUTHENTICATION or any(m in str(exc).lower() for m in MISSING_KEY):
                raise _credentials_error(
                    settings, name, str(exc), _wanted(litellm, settings)
                ) from None
            if is_overflow(name, str(exc)):
                raise ContextOverflow(
                    f"the model refused a prompt longer than its window ({name}): "
                    f"{_short(str(exc), settings)}",
                    hint="set max_input_tokens in the [llm] table to the model's window",
                ) from None
            if settings.base_url and is_unreachable(exc):
                raise CondenserError(
                    f"the model's server at {settings.base_url} refused the connection ({name})",
                    hint=f"is the server at {settings.base_url} running? Nothing was appended",
                ) from None
            transient = is_transient(exc)
            if is_refusal(exc):
                raise Refused(
                    f"the model's server refused the request ({name}): "
                    f"{_short(str(exc), settings)}",
                    hint=_hint(name),
                ) from None
            if not transient or attempt == attempts:
                raise CondenserError(
                    f"the model call failed ({name}) after {plural(attempt, 'attempt')}: "
                    f"{_short(str(exc), settings)}",
                    hint=_hint(name),
                ) from None
            sleep(min(settings.retry_max_wait, settings.retry_min_wait * 2 ** (attempt - 1)))
    raise AssertionError("unreachable")


def provider_of(settings: LLMSettings) -> str | None:
    """The provider a call goes to, as litellm routes it, where that is plain from the
    settings: `custom_llm_provider`, the model's prefix, an OpenAI-compatible
    `base_url`, or the name of an OpenAI or Anthropic model."""
    if settings.custom_llm_provider:
        return settings.custom_llm_provider
    prefix, slash, _ = settings.model.partition("/")
    if slash:
        return prefix
    if settings.base_url:
        return "openai"  # see call_options
    if settings.model.startswith(("gpt-", "o1", "o3", "o4", "chatgpt-")):
        return "openai"
    return "anthropic" if settings.model.startswith("claude") else None


def require_model(settings: LLMSettings) -> None:
    """Refuse a call when no model is named (ConfigError, exit 2): a session goes
    only to a model the user chose, never to a default provider."""
    if settings.model:
        return
    raise ConfigError(
        "no model is named: condense sends a session only to a model you choose",
        hint="name one in config.toml's [llm] table: a local server first (config.example."
        "toml has tables for Ollama, llama.cpp's server, vLLM and LM Studio), or a "
        'provider\'s (model = "anthropic/claude-sonnet-4-5" with ANTHROPIC_API_KEY); or '
        "give it once with --set llm.model=NAME (and llm.base_url=URL for a local server)",
    )


def is_unreachable(exc: BaseException) -> bool:
    """Whether a call failed because nothing listens at the server's address (a
    refused connection, not a slow or a busy server)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return True
        text = str(current).lower()
        if "connection refused" in text or "connect call failed" in text or "errno 111" in text:
            return True
        current = current.__cause__ or current.__context__
    return False


def require_key(settings: LLMSettings) -> None:
    """Refuse a call that would go out without a key (ConfigError, exit 2), before
    litellm is imported, where the provider surely needs one."""
    if settings.resolved_api_key():
        return
    variables = KEY_VARIABLES.get(provider_of(settings) or "", ())
    if variables and not any(os.environ.get(v) for v in variables):
        raise _credentials_error(
            settings, f"{' / '.join(variables)} is not set", "", list(variables[:1])
        )


def is_transient(exc: Exception) -> bool:
    """Whether trying again may help: rate limits, 5xx, time-outs, lost connections.
    A 4xx (but 408 and 429) or a validation error never is, whatever class litellm
    gives it (llama.cpp's refusal of a `json_schema` comes as an InternalServerError)."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and 400 <= status < 500 and status not in (408, 429):
        return False
    if is_refusal(exc):
        return False
    return type(exc).__name__ in TRANSIENT or isinstance(exc, TimeoutError)


def is_refusal(exc: Exception) -> bool:
    """Whether the server refused the request's shape (a 400 or 422, a validation
    error, an unsupported parameter): asked another way, it may answer."""
    name = type(exc).__name__
    if getattr(exc, "status_code", None) in (400, 422) or name in REFUSED:
        return True
    return any(words in str(exc).lower() for words in REFUSAL_WORDS)


def is_overflow(name: str, message: str) -> bool:
    """Whether a refusal says the prompt was longer than the model's window."""
    lowered = message.lower()
    return name in OVERFLOW or (
        any(w in lowered for w in OVERFLOW_WORDS) and ("token" in lowered or "n_ctx" in lowered)
    )


def _credentials_error(
    settings: LLMSettings, name: str, text: str, wanted: list[str]
) -> ConfigError:
    """A refused or missing API key: say what to set (`wanted`: the variables the
    provider's client reads the key from)."""
    given = settings.api_key or settings.api_key_env
    export = f", or export {' / '.join(wanted)}" if wanted and not given else ""
    problem = "the API key was refused" if given else "no API key is set"
    said = f": {_short(text, settings)}" if text else ""
    return ConfigError(
        f"{problem} for model {settings.model} ({name}){said}",
        hint=f"set api_key, or api_key_env naming the variable that holds the key, in the "
        f"[llm] table the condenser uses{export}",
    )


def _wanted(litellm: Any, settings: LLMSettings) -> list[str]:
    """The variables litellm says the model's key is read from."""
    try:
        return list(litellm.validate_environment(model=settings.model).get("missing_keys") or [])
    except Exception:
        return []


def ask(
    settings: LLMSettings,
    messages: list[dict[str, Any]],
    read: Callable[[Answer], T],
    what: str,
    tries: int | None = None,
    **extra: Any,
) -> tuple[T, Answer]:
    """Call the model until `read` accepts its answer (it raises ValueError when not),
    at most `tries` times (default: `num_retries` + 1)."""
    tries = tries or settings.num_retries + 1
    problem = ""
    for _attempt in range(tries):
        answer = complete(settings, messages, **extra)
        try:
            return read(answer), answer
        except ValueError as exc:
            problem = str(exc)
    raise CondenserError(
        f"the model gave no usable {what} after {plural(tries, 'try', 'tries')}: {problem}",
        hint="nothing was appended; try again or use another model",
    )


def _answer(litellm: Any, response: Any, settings: LLMSettings) -> Answer:
    try:
        choice = response.choices[0]
        message = choice.message
    except (AttributeError, IndexError, TypeError):
        raise CondenserError("the model's answer has no choices") from None
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        function = call.function
        calls.append({"name": function.name, "arguments": function.arguments})
    usage = getattr(response, "usage", None)
    prices = None
    if settings.input_cost_per_token is not None or settings.output_cost_per_token is not None:
        # configured prices win; litellm no longer reads them back from the response
        prices = {
            "input_cost_per_token": settings.input_cost_per_token or 0.0,
            "output_cost_per_token": settings.output_cost_per_token or 0.0,
        }
    try:
        cost = litellm.completion_cost(completion_response=response, custom_cost_per_token=prices)
    except Exception:
        cost = None
    return Answer(
        content=message.content,
        tool_calls=calls,
        model=getattr(response, "model", None) or settings.model,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cost=cost or None,
    )


def count_tokens(settings: LLMSettings, texts: list[str]) -> list[int]:
    """Tokens in each text, with the tokenizer litellm uses for the configured model."""
    litellm = litellm_module()
    return [litellm.token_counter(model=settings.model, text=text) for text in texts]


def _short(message: str, settings: LLMSettings) -> str:
    """A bounded error message with every secret of `settings` masked."""
    from condense_cli.core.redact import mask

    key_from_env = os.environ.get(settings.api_key_env or "")
    message = mask(
        message,
        [
            settings.api_key,
            key_from_env,
            settings.aws_access_key_id,
            settings.aws_secret_access_key,
            *settings.extra_headers.values(),
        ],
    )
    message = " ".join(message.split())
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"


def _hint(name: str) -> str:
    if name in ("NotFoundError", "BadRequestError"):
        return "check model and base_url in the [llm] table"
    return "nothing was appended; run the command again later"
