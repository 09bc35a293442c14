"""Cost arithmetic from the registry prices (per million tokens)."""

from __future__ import annotations

from ..models import Usage
from .registry import Prices


def cost_usd(usage: Usage, prices: Prices) -> float:
    """Uncached input at the input price, cached input at the cached price, output at the output price."""
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    uncached = usage.prompt_tokens - cached
    return (
        uncached * prices.input + cached * prices.cached_input + usage.completion_tokens * prices.output
    ) / 1_000_000
