"""Structured output: the JSON schema sent to a model that must answer in one shape, and the
answer read back.

Owns: turning a pydantic model's schema into one strict structured outputs accept, and
unwrapping an answer a small model fenced in Markdown. Must not: call a model (the gateway,
`soul.model`, does).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, cast


def unfenced(text: str) -> str:
    """JSON without the Markdown fence small models like to wrap it in."""
    if text.startswith("```") and text.endswith("```"):
        body = text[3:-3]
        return body.split("\n", 1)[1] if "\n" in body else body
    return text


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`model_json_schema()` made acceptable to strict structured outputs.

    Strict mode wants every object closed (`additionalProperties: false`) with every property
    listed as required, and no `$ref` beside other keys. Fields with defaults become required:
    the model must then say them, and pydantic validates them as usual.
    """
    root = copy.deepcopy(dict(schema))
    return cast("dict[str, Any]", _strict_node(root, root))


def _strict_node(node: Any, root: dict[str, Any]) -> Any:
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) > 1 and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        merged = {**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}}
        return _strict_node(merged, root)
    for key in ("$defs", "definitions", "properties"):
        if isinstance(node.get(key), dict):
            node[key] = {name: _strict_node(sub, root) for name, sub in node[key].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            node[key] = _strict_node(node[key], root)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(node.get(key), list):
            node[key] = [_strict_node(sub, root) for sub in node[key]]
    if node.get("type") == "object":
        node.setdefault("additionalProperties", False)
    if isinstance(node.get("properties"), dict):
        node["required"] = list(node["properties"])
    if "default" in node and node["default"] is None:
        # Optional fields stay nullable through anyOf; a null default adds nothing.
        del node["default"]
    return node
