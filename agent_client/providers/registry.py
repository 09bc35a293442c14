"""The registry of named providers: one entry each, and how a provider is chosen when none is named.

Prices are US dollars per million tokens (input, cached input, output) for the default model, as published
by each provider when this table was written; they only feed the cost estimate. Local servers cost nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from ..errors import AgentError, ErrorKind
from ..settings import Settings

WireFormat = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class Prices:
    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    wire: WireFormat
    base_url: str | None
    default_model: str
    key_env: str | None  # None: no key needed (local servers)
    prices: Prices = Prices()
    local: bool = False
    stream_usage: bool = True  # send stream_options.include_usage (OpenAI-compatible only)
    max_output_tokens: int = 4096
    base_url_env: str | None = None  # the variable the provider's own SDK documents for another endpoint


PROVIDERS: dict[str, ProviderSpec] = {
    p.name: p
    for p in [
        ProviderSpec(
            "openai",
            "openai",
            "https://api.openai.com/v1",
            "gpt-4.1-mini",
            "OPENAI_API_KEY",
            Prices(0.40, 0.10, 1.60),
            base_url_env="OPENAI_BASE_URL",
        ),
        ProviderSpec(
            "anthropic",
            "anthropic",
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
            "ANTHROPIC_API_KEY",
            Prices(3.00, 0.30, 15.00),
            base_url_env="ANTHROPIC_BASE_URL",
        ),
        ProviderSpec(
            "deepseek",
            "openai",
            "https://api.deepseek.com/v1",
            "deepseek-chat",
            "DEEPSEEK_API_KEY",
            Prices(0.28, 0.028, 0.42),
        ),
        ProviderSpec(
            "mistral",
            "openai",
            "https://api.mistral.ai/v1",
            "mistral-small-latest",
            "MISTRAL_API_KEY",
            Prices(0.10, 0.10, 0.30),
            stream_usage=False,
        ),  # Mistral sends usage in the last chunk unasked
        ProviderSpec(
            "groq",
            "openai",
            "https://api.groq.com/openai/v1",
            "llama-3.3-70b-versatile",
            "GROQ_API_KEY",
            Prices(0.59, 0.59, 0.79),
        ),
        ProviderSpec(
            "gemini",
            "openai",
            "https://generativelanguage.googleapis.com/v1beta/openai/",
            "gemini-2.5-flash",
            "GEMINI_API_KEY",
            Prices(0.30, 0.075, 2.50),
        ),
        ProviderSpec(
            "qwen",
            "openai",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            "DASHSCOPE_API_KEY",
            Prices(0.40, 0.08, 1.20),
        ),
        ProviderSpec(
            "kimi",
            "openai",
            "https://api.moonshot.ai/v1",
            "kimi-k2-0905-preview",
            "MOONSHOT_API_KEY",
            Prices(0.60, 0.15, 2.50),
        ),
        ProviderSpec(
            "openrouter",
            "openai",
            "https://openrouter.ai/api/v1",
            "openai/gpt-4.1-mini",
            "OPENROUTER_API_KEY",
            Prices(0.40, 0.10, 1.60),
        ),
        ProviderSpec("ollama", "openai", "http://localhost:11434/v1", "qwen3:8b", None, local=True),
        ProviderSpec("lmstudio", "openai", "http://localhost:1234/v1", "local-model", None, local=True),
        ProviderSpec("vllm", "openai", "http://localhost:8000/v1", "default", None, local=True),
    ]
}

# `--base-url` without `--provider`: an unnamed OpenAI-compatible server. No key is sent unless
# `--api-key-env` names one, so a key meant for a known provider never goes to an arbitrary URL.
CUSTOM = ProviderSpec("custom", "openai", None, "default", None, local=True)

# With no --provider: the first provider whose key is set, in this order; then ollama (local, no key).
DETECTION_ORDER = ["openai", "anthropic", "gemini", "mistral", "deepseek", "groq", "openrouter", "qwen", "kimi"]
FALLBACK_PROVIDER = "ollama"


def anthropic_available() -> bool:
    try:
        import anthropic  # noqa: F401
    except ImportError:
        return False
    return True


ANTHROPIC_EXTRA = "pip install 'mcp-docs[anthropic]'"


def unusable_keys(environ: Mapping[str, str] | None = None) -> list[ProviderSpec]:
    """Providers whose key is set but that detection skips: their SDK is not installed (the anthropic extra).
    Named to the user, who set that key on purpose and would otherwise see another provider answer."""
    settings = Settings.load(environ)
    return [
        PROVIDERS[name]
        for name in DETECTION_ORDER
        if PROVIDERS[name].wire == "anthropic" and settings.value(PROVIDERS[name].key_env) and not anthropic_available()
    ]


def detect_provider(environ: Mapping[str, str] | None = None) -> ProviderSpec:
    settings = Settings.load(environ)
    if settings.provider:
        return get_provider(settings.provider)
    for name in DETECTION_ORDER:
        spec = PROVIDERS[name]
        if settings.value(spec.key_env):
            if spec.wire == "anthropic" and not anthropic_available():
                continue
            return spec
    return PROVIDERS[FALLBACK_PROVIDER]


def get_provider(name: str) -> ProviderSpec:
    try:
        return PROVIDERS[name.lower()]
    except KeyError:
        known = ", ".join(PROVIDERS)
        raise AgentError(ErrorKind.CONFIGURATION, f"Unknown provider {name!r}. Known providers: {known}.") from None


@dataclass(frozen=True)
class ResolvedProvider:
    """A provider entry with the user's overrides applied, plus the key itself (never printed or stored)."""

    spec: ProviderSpec
    model: str
    base_url: str | None
    api_key: str | None

    @property
    def name(self) -> str:
        return self.spec.name

    def __repr__(self) -> str:  # never show the key
        return f"ResolvedProvider(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"


def resolve(
    name: str | None = None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedProvider:
    settings = Settings.load(environ)
    if name:
        spec = get_provider(name)
    elif base_url and not settings.provider:
        spec = CUSTOM
    else:
        spec = detect_provider(settings.environ)
    if api_key_env:
        spec = replace(spec, key_env=api_key_env)
    key = settings.value(spec.key_env)
    if spec.key_env and not key and (not spec.local or api_key_env):
        raise AgentError(
            ErrorKind.AUTHENTICATION,
            f"No API key for provider {spec.name}: set the environment variable {spec.key_env} "
            "(or pass --api-key-env NAME to read it from another variable).",
            retryable=False,
        )
    return ResolvedProvider(
        spec=spec,
        model=model or settings.model or spec.default_model,
        base_url=base_url or settings.value(spec.base_url_env) or spec.base_url,
        api_key=key,
    )
