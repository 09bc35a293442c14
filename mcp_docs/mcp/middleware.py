"""What mcp-docs adds to the SDK's request handling, through `MCPServer.middleware` (the SDK's public hook).

- `tools/list`: compact tool definitions (they are paid on every turn of every conversation).
- `tools/call`: an argument the SDK rejects comes back as one sentence naming the argument, the value
  given and what is accepted, instead of pydantic's multi-line report with its documentation links.
- `resources/list`: every document as a `docs://` resource, paginated with the protocol's cursor
  (`MCPServer` only lists static resources, and documents are reached through a template).
- `initialize` / `server/discover`: the instructions as they are now (they name the collection's languages,
  which change as the index fills; the SDK has no public setter for them).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, Resource, TextContent
from pydantic import BaseModel, ValidationError, create_model

ResourcePage = Callable[[str | None], tuple[list[Resource], str | None]]
"""(cursor) → (resources, next cursor); raises ValueError for a cursor it did not issue."""

_SHOWN_VALUE_CHARS = 60
_KINDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "null": "null",
}


class DocsMiddleware:
    """A `ServerMiddleware`: see the module docstring. Tools are registered with `add_tool` (from `tool_table.TOOLS`)."""

    def __init__(self, resource_page: ResourcePage, instructions: Callable[[], str] | None = None) -> None:
        self._resource_page = resource_page
        self._instructions = instructions
        self._arguments: dict[str, type[BaseModel]] = {}

    def add_tool(self, name: str, signature: inspect.Signature) -> None:
        """Know the tool's arguments (the same signature the SDK builds the tool's input schema from)."""
        self._arguments[name] = arguments_model(name, signature)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        page: tuple[list[Resource], str | None] | None = None
        if ctx.method == "resources/list":
            try:
                page = await anyio.to_thread.run_sync(self._resource_page, (ctx.params or {}).get("cursor"))
            except ValueError as exc:
                raise MCPError(INVALID_PARAMS, str(exc)) from None
        result = await call_next(ctx)
        if ctx.method == "tools/call" and not _is_error(result):
            return result  # nothing to edit: a search's result is not copied once more per call
        # Results reach middleware in their wire form (camelCase, with the SDK's `_meta`): edit, keep the rest.
        if isinstance(result, BaseModel):
            result = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        if not isinstance(result, dict):
            return result
        if page is not None:
            result["resources"] = [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in page[0]]
            if page[1] is not None:
                result["nextCursor"] = page[1]
        elif ctx.method == "tools/list":
            result["tools"] = [compact_tool(t) for t in result.get("tools", [])]
        elif ctx.method in ("initialize", "server/discover") and self._instructions is not None:
            result["instructions"] = self._instructions()
        elif ctx.method == "tools/call" and result.get("isError"):
            # Only an error result is re-checked, so an argument the SDK accepts is never refused here.
            params = ctx.params or {}
            model = self._arguments.get(str(params.get("name")))
            arguments = params.get("arguments") or {}
            if model is not None and isinstance(arguments, dict):
                message = argument_error(str(params["name"]), model, arguments)
                if message is not None:
                    result["content"] = [
                        TextContent(type="text", text=message).model_dump(mode="json", by_alias=True, exclude_none=True)
                    ]
        return result


def _is_error(result: HandlerResult) -> bool:
    if isinstance(result, dict):
        return bool(result.get("isError"))
    return bool(getattr(result, "is_error", False))


def arguments_model(tool: str, signature: inspect.Signature) -> type[BaseModel]:
    """A pydantic model of a tool's parameters, validated as the SDK validates tool arguments."""
    fields: dict[str, Any] = {}
    for name, param in signature.parameters.items():
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (param.annotation, default)
    return create_model(f"{tool}_arguments", **fields)


def argument_error(tool: str, model: type[BaseModel], arguments: dict[str, Any]) -> str | None:
    """One sentence for the first invalid argument (naming any others), None when all are valid."""
    try:
        model.model_validate(_pre_parsed(model, arguments))
    except ValidationError as exc:
        errors = exc.errors()
    else:
        return None
    properties = model.model_json_schema().get("properties", {})
    names = [str(e["loc"][0]) for e in errors if e["loc"]]
    name = names[0] if names else "arguments"
    schema = properties.get(name, {})
    accepted = describe(schema)
    hint = f" ({schema['description'].rstrip('.')})" if schema.get("description") else ""
    if errors[0]["type"] == "missing":
        message = f"{tool}: argument '{name}' is required: {accepted}{hint}"
    else:
        message = f"{tool}: argument '{name}' must be {accepted}{hint}, not {_shown(arguments.get(name))}"
    others = sorted(set(names[1:]) - {name})
    if others:
        message += f"; also invalid: {', '.join(others)}"
    return message + "."


def describe(schema: dict[str, Any]) -> str:
    """What a JSON schema accepts, in words: 'an integer', 'one of "a", "b"', 'a list of strings or null'."""
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return " or ".join(describe(option) for option in options)
    kind = schema.get("type")
    if kind == "array":
        items = describe(schema.get("items", {}))
        return f"a list of {_plural(items)}" if items != "a value" else "a list"
    return _KINDS.get(kind, "a value") if isinstance(kind, str) else "a value"


def _plural(kind: str) -> str:
    return {"a string": "strings", "an integer": "integers", "a number": "numbers"}.get(kind, kind)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN_VALUE_CHARS else text[: _SHOWN_VALUE_CHARS - 1] + "…"


def _pre_parsed(model: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """As the SDK does before validating: a JSON list or object sent as a string, for a non-string argument,
    counts as that list or object (some clients send every argument as a string)."""
    parsed = dict(arguments)
    for name, value in arguments.items():
        field = model.model_fields.get(name)
        if field is None or field.annotation is str or not isinstance(value, str):
            continue
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            continue
        if not isinstance(decoded, str | int | float):
            parsed[name] = decoded
    return parsed


def compact_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool definition (wire form) without schema titles and with its output schema's `$ref`s inlined."""
    compact = dict(tool)
    if "inputSchema" in tool:
        compact["inputSchema"] = strip_titles(tool["inputSchema"])
    if tool.get("outputSchema") is not None:
        compact["outputSchema"] = inline_refs(strip_titles(tool["outputSchema"]))
    return compact


def strip_titles(schema: Any) -> Any:
    """Drop pydantic's auto-generated 'title' keys: they repeat the property names and cost context."""
    if isinstance(schema, dict):
        props = schema.get("properties")
        out = {k: strip_titles(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)}
        if isinstance(props, dict):
            out["properties"] = {name: strip_titles(v) for name, v in props.items()}
        return out
    if isinstance(schema, list):
        return [strip_titles(v) for v in schema]
    return schema


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace `$ref`s to `$defs` by the definitions themselves (our result models are not recursive).

    Clients validate every structured result against the output schema; with jsonschema,
    resolving references dominated that check (~4 ms of a ~7 ms search round trip).
    """
    defs = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
                extra = {k: v for k, v in node.items() if k != "$ref"}
                return {**resolve(defs[ref[8:]]), **{k: resolve(v) for k, v in extra.items()}}
            return {k: resolve(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


__all__ = [
    "DocsMiddleware",
    "ResourcePage",
    "argument_error",
    "arguments_model",
    "compact_tool",
    "describe",
    "inline_refs",
    "strip_titles",
]
