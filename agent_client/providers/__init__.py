"""Providers: the registry of named providers and one adapter per wire format."""

from __future__ import annotations

import contextlib
from urllib.parse import urlsplit

from .base import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S, ChatModel
from .pricing import cost_usd
from .registry import (
    ANTHROPIC_EXTRA,
    DETECTION_ORDER,
    FALLBACK_PROVIDER,
    PROVIDERS,
    Prices,
    ProviderSpec,
    ResolvedProvider,
    detect_provider,
    get_provider,
    resolve,
    unusable_keys,
)


def make_model(
    provider: ResolvedProvider,
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_output_tokens: int | None = None,
) -> ChatModel:
    """The adapter for the provider's wire format (the anthropic SDK is imported only here, lazily)."""
    from ..redaction import register_secret

    register_secret(provider.api_key)  # never shown in errors, logs or session files, whatever its shape
    if provider.base_url:  # a proxy's basic-auth password in the URL (http://user:pass@host/v1) is one too
        with contextlib.suppress(ValueError):
            register_secret(urlsplit(provider.base_url).password)
    if provider.spec.wire == "anthropic":
        from .anthropic_messages import AnthropicModel

        return AnthropicModel(
            provider, max_retries=max_retries, timeout_s=timeout_s, max_output_tokens=max_output_tokens
        )
    from .openai_compat import OpenAICompatModel

    return OpenAICompatModel(
        provider, max_retries=max_retries, timeout_s=timeout_s, max_output_tokens=max_output_tokens
    )


__all__ = [
    "ANTHROPIC_EXTRA",
    "DETECTION_ORDER",
    "FALLBACK_PROVIDER",
    "PROVIDERS",
    "ChatModel",
    "Prices",
    "ProviderSpec",
    "ResolvedProvider",
    "cost_usd",
    "detect_provider",
    "get_provider",
    "make_model",
    "resolve",
    "unusable_keys",
]
