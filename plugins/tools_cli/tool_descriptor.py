"""A registered tool's whole descriptor as data: what `tools show` prints and `tools list --json` lists."""

from __future__ import annotations

import json
from typing import Any


def descriptor_row(spec: Any) -> dict[str, Any]:
    """The short row `tools list --json` prints: identity, scheduling, approval, summary, args schema."""
    return {"name": spec.name, "plugin": spec.plugin, "tier": spec.tier.value,
            "resourceClass": spec.resource_class.value, "approvalCategory": spec.approval_category,
            "summary": spec.summary, "argsSchema": dict(spec.args_schema)}


def full_descriptor(spec: Any) -> dict[str, Any]:
    """Everything a host needs to call the tool: the row plus the prompt signature, durability
    and the example call (parsed when it is JSON, verbatim otherwise)."""
    from atomic_agent.api import describe_full

    example: Any = spec.example
    if example is not None:
        try:
            example = json.loads(example)
        except json.JSONDecodeError:
            pass
    return {**descriptor_row(spec), "signature": describe_full(spec), "durable": spec.durable, "example": example}


def render_descriptor(descriptor: dict[str, Any]) -> str:
    """The human form of `full_descriptor`: labelled lines, then the schema as indented JSON."""
    example = descriptor["example"]
    shown_example = "-" if example is None else (
        example if isinstance(example, str) else json.dumps(example, ensure_ascii=False))
    lines = [
        f"{descriptor['name']} — {descriptor['summary']}",
        f"plugin:          {descriptor['plugin']}",
        f"tier:            {descriptor['tier']}",
        f"resource class:  {descriptor['resourceClass']}",
        f"approval:        {descriptor['approvalCategory'] or '-'}",
        f"durable:         {'yes' if descriptor['durable'] else 'no'}",
        f"signature:       {descriptor['signature']}",
        f"example:         {shown_example}",
        "args schema:",
        json.dumps(descriptor["argsSchema"], indent=2, ensure_ascii=False),
    ]
    return "\n".join(lines)
