"""Read one skill directory: the `SKILL.md` front matter (name, description, env, scripts)
and its instruction body.

The front matter is the small YAML subset other agents' skills use: `key: value` lines,
and lists written inline (`[A, B]`) or as `- item` lines under their key. Anything else is
refused with the line that was not understood, so a broken skill is named, never guessed at.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

SKILL_FILE = "SKILL.md"
MAX_SKILL_FILE_BYTES = 256 * 1024  # read at most this much of a SKILL.md; the rest never reaches a prompt
MAX_DESCRIPTION_CHARS = 300
NAME_PATTERN = re.compile(r"\A[a-z0-9][a-z0-9-]{0,63}\Z")
ENV_PATTERN = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
_KEY_LINE = re.compile(r"\A([A-Za-z_][A-Za-z0-9_-]*):(?:\s+(.*))?\Z")
_KNOWN = ("name", "description", "env", "scripts", "license", "version", "metadata", "allowed-tools")


class SkillFormatError(ValueError):
    """A skill directory whose SKILL.md cannot be used; the message says what to fix."""


@attrs.frozen
class SkillManifest:
    name: str
    description: str
    directory: Path
    env: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    body: str = ""
    truncated: bool = False  # the SKILL.md was longer than MAX_SKILL_FILE_BYTES

    @property
    def skill_file(self) -> Path:
        return self.directory / SKILL_FILE


def _scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _inline_list(text: str) -> list[str]:
    inner = text.strip()[1:-1]
    return [_scalar(part) for part in inner.split(",") if part.strip()]


def parse_front_matter(text: str, where: str) -> tuple[dict[str, str | list[str]], str]:
    """(fields, body) of a SKILL.md text; SkillFormatError when the front matter is missing or malformed."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError(f"{where}: no front matter; start the file with a '---' line, then 'name: <name>' and "
                               "'description: <one line>', then a closing '---' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise SkillFormatError(f"{where}: the front matter is never closed; add a '---' line after it") from None
    fields: dict[str, str | list[str]] = {}
    current: str | None = None
    for number, raw in enumerate(lines[1:end], start=2):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = line.strip()
        if item.startswith("- ") and current is not None and raw[:1] in (" ", "-"):
            value = fields.get(current)
            if not isinstance(value, list):
                raise SkillFormatError(f"{where}:{number}: a '- item' line under {current!r}, which is not a list")
            value.append(_scalar(item[2:]))
            continue
        if raw[:1] in (" ", "\t"):
            if current in ("metadata",):  # nested metadata is kept out of the way, not interpreted
                continue
            raise SkillFormatError(f"{where}:{number}: an indented line that is not a '- item' of a list: {item[:60]!r}")
        match = _KEY_LINE.match(line)
        if match is None:
            raise SkillFormatError(f"{where}:{number}: expected 'key: value', got {line[:60]!r}")
        key, value_text = match.group(1), (match.group(2) or "").strip()
        if key in fields:
            raise SkillFormatError(f"{where}:{number}: {key!r} is given twice")
        current = key
        if not value_text:
            fields[key] = []
        elif value_text.startswith("[") and value_text.endswith("]"):
            fields[key] = _inline_list(value_text)
        else:
            fields[key] = _scalar(value_text)
    body = "\n".join(lines[end + 1:]).strip("\n")
    return fields, body


def _text_field(fields: dict[str, str | list[str]], key: str, where: str) -> str:
    value = fields.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SkillFormatError(f"{where}: front matter needs '{key}: <text>'")
    return value.strip()


def _list_field(fields: dict[str, str | list[str]], key: str, where: str) -> list[str]:
    value = fields.get(key, [])
    if isinstance(value, str):
        value = [value]
    return [v.strip() for v in value if v.strip()]


def read_manifest(directory: Path) -> SkillManifest:
    """The skill in `directory`; SkillFormatError naming the file and the problem otherwise."""
    path = directory / SKILL_FILE
    where = str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SKILL_FILE_BYTES + 1)
    except FileNotFoundError:
        raise SkillFormatError(f"{directory}: no {SKILL_FILE}; a skill is a directory holding a {SKILL_FILE}") from None
    except OSError as exc:
        raise SkillFormatError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    truncated = len(raw) > MAX_SKILL_FILE_BYTES
    text = raw[:MAX_SKILL_FILE_BYTES].decode("utf-8", errors="replace").replace("\r\n", "\n")
    fields, body = parse_front_matter(text, where)
    name = _text_field(fields, "name", where)
    if not NAME_PATTERN.match(name):
        raise SkillFormatError(f"{where}: name {name!r} must be 1-64 lowercase letters, digits or '-', "
                               "starting with a letter or digit")
    description = " ".join(_text_field(fields, "description", where).split())
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillFormatError(f"{where}: the description has {len(description)} characters; keep it to one line of "
                               f"at most {MAX_DESCRIPTION_CHARS} (the details belong in the body)")
    env = _list_field(fields, "env", where)
    bad_env = [e for e in env if not ENV_PATTERN.match(e)]
    if bad_env:
        raise SkillFormatError(f"{where}: env lists {bad_env!r}; give plain variable names (no patterns, no values)")
    scripts = _list_field(fields, "scripts", where)
    for script in scripts:
        problem = script_path_problem(script)
        if problem:
            raise SkillFormatError(f"{where}: script {script!r}: {problem}")
    if not body.strip():
        raise SkillFormatError(f"{where}: the body after the front matter is empty; write the skill's instructions there")
    return SkillManifest(name=name, description=description, directory=directory, env=tuple(dict.fromkeys(env)),
                         scripts=tuple(dict.fromkeys(scripts)), body=body, truncated=truncated)


def script_path_problem(script: str) -> str | None:
    """Why `script` cannot name a file inside its skill directory (None when it can)."""
    if not script or "\x00" in script:
        return "empty or holds a NUL byte"
    normal = script.replace("\\", "/")
    if normal.startswith("/") or re.match(r"\A[A-Za-z]:", normal):
        return "an absolute path; name it relative to the skill directory"
    if ".." in normal.split("/"):
        return "has a '..' component; a script must stay inside its skill directory"
    return None
