"""Structured replies: the JSON object a model was asked for, found in what it actually wrote.

Models wrap JSON in ```json fences or a sentence of preamble; both are tolerated. Anything else is the
caller's one-sentence problem, never an exception."""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)


def json_object(text: str) -> dict[str, object] | None:
    """The first JSON object in `text` (fenced or not), or None."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        return value if isinstance(value, dict) else None
    return None


def parse_reply(text: str, model: type[T], what: str) -> tuple[T | None, str | None]:
    """(the validated reply, None) or (None, one sentence saying what was wrong with it)."""
    value = json_object(text)
    if value is None:
        return None, f"The {what} was not a JSON object."
    try:
        return model.model_validate(value), None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the object"
        return None, f"The {what} did not have the expected shape ({where}: {first['msg']})."
