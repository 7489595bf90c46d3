"""Skill directories written for the tests (real files on disk)."""

from __future__ import annotations

from pathlib import Path

ENV_SCRIPT = """import json, os, sys
print(json.dumps({"env": dict(os.environ), "args": sys.argv[1:], "cwd": os.getcwd()}))
"""


def write_skill(root: Path, name: str, description: str = "", *, env: list[str] | None = None,
                scripts: dict[str, str] | None = None, body: str = "Do the thing step by step.",
                declare_scripts: bool = True) -> Path:
    directory = root / name
    (directory / "scripts").mkdir(parents=True, exist_ok=True)
    front = [f"name: {name}", f"description: {description or 'the ' + name + ' skill'}"]
    if env:
        front.append(f"env: [{', '.join(env)}]")
    if scripts and declare_scripts:
        front.append("scripts:")
        front += [f"  - {path}" for path in scripts]
    (directory / "SKILL.md").write_text("---\n" + "\n".join(front) + "\n---\n" + body + "\n")
    for path, text in (scripts or {}).items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_text(text)
    return directory
