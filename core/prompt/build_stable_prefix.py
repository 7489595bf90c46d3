"""The stable prefix: persona, rules, skills, tools, capabilities, instructions.

Each prompt style (prompt_style.py) has its own template; the skills, tools and
capabilities sections are one shared partial (tool_catalog.j2).

It depends only on the registered tools, the skills catalog, the capabilities and the
templates — never on the conversation — so it is byte-identical on every step of a
session and llama-server keeps it in the slot's KV cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import ResourceClass
from atomic_agent.prompt.describe_tool import descriptor_parts
from atomic_agent.prompt.prompt_style import COACHED, templates_of
from atomic_agent.tools.tool_registry import ToolRegistry

# The service whose `catalog_lines()` fills `### skills` (the skills plugin provides it;
# its plugins/skills/skills_contract.py names it the same, a test keeps the two equal)
SKILLS_SERVICE = "skills"


def call_examples(registry: ToolRegistry, limit: int = 3) -> list[str]:
    """Deterministic examples from the tools' own `example` calls; reads shown batched."""
    with_examples = [s for s in registry.frequent() if s.example and s.name not in ("reply", "finish")]
    reads = [s.example for s in with_examples if s.resource_class is ResourceClass.PURE_READ][:2]
    lines = []
    if len(reads) == 2:
        lines.append(f"[{reads[0]}, {reads[1]}]")
    for spec in with_examples:
        if len(lines) >= limit:
            break
        if spec.example not in reads or len(reads) < 2:
            lines.append(f"[{spec.example}]")
    return lines


def stable_prefix_context(registry: ToolRegistry, capabilities: Sequence[tuple[str, str]],
                          skills: Sequence[str], max_calls: int) -> dict[str, Any]:
    return {
        "tools_full": [descriptor_parts(s) for s in registry.frequent()],
        # the template decides how much of a rare tool to show (its name; tool.view has the rest)
        "tools_extra": [{"name": s.name, "summary": s.summary} for s in registry.rare()],
        "capabilities": list(capabilities),
        "skills": list(skills),
        "max_calls": max_calls,
        "examples": call_examples(registry),
    }


def build_stable_prefix(env: Any, registry: ToolRegistry, capabilities: Sequence[tuple[str, str]],
                        skills: Sequence[str] = (), max_calls: int = 8, style: str = COACHED) -> str:
    """The stable prefix in prompt style `style` (a resolved style: coached or full)."""
    template = env.get_template(templates_of(style)[0])
    text: str = template.render(**stable_prefix_context(registry, capabilities, skills, max_calls))
    return text


def default_capabilities(working_dir: Path) -> list[tuple[str, str]]:
    import platform

    return [("platform", platform.system().lower()), ("working_dir", str(working_dir))]
