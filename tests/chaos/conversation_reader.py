"""Read what a prompt says happened: the model's and the checker's shared parser.

Messages are `msg-<session>-<n>` (sends) or `steer-<session>-<n>`; a reply names the
messages it answers (`answered a b`); a compaction summary carries, on labelled lines,
every message it stands in for, what was answered, which calls were made and which
replies were given — so a summary loses nothing the next model or the checker needs.
"""

from __future__ import annotations

import json
import re

import attrs

EFFECT = "chaos.effect"
READ = "chaos.read"
_CALL = re.compile(r"^assistant_tool_call: (\S+) (\{.*\})$")


@attrs.define
class Heard:
    users: list[str] = attrs.field(factory=list)  # message ids in conversation order (summary first)
    answered: set[str] = attrs.field(factory=set)
    replies: list[str] = attrs.field(factory=list)
    called: set[tuple[str, str]] = attrs.field(factory=set)  # (tool, id)

    @property
    def pending(self) -> list[str]:
        return [m for m in self.users if m not in self.answered]


def section(prompt: str, name: str) -> str:
    start = prompt.find(f"### {name}\n")
    if start < 0:
        return ""
    body = prompt[start + len(name) + 5:]
    end = body.find("\n### ")
    return body if end < 0 else body[:end]


def summary_fields(text: str) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("seen", "answered", "called", "replies"):
            fields[key] = [x for x in rest.strip().split("|" if key == "replies" else " ") if x]
    return fields


def absorb_summary(heard: Heard, text: str) -> None:
    fields = summary_fields(text)
    heard.users.extend(fields.get("seen", []))
    heard.answered.update(fields.get("answered", []))
    heard.replies.extend(fields.get("replies", []))
    for item in fields.get("called", []):
        tool, _, ident = item.partition("=")
        heard.called.add((tool, ident))


def absorb_lines(heard: Heard, lines: str) -> None:
    for line in lines.splitlines():
        if line.startswith("user: "):
            heard.users.append(line[6:].strip())
        elif line.startswith("assistant: "):
            reply = line[11:].strip()
            heard.replies.append(reply)
            if reply.startswith("answered"):
                heard.answered.update(reply.split()[1:])
        elif (m := _CALL.match(line)) is not None:
            try:
                ident = json.loads(m.group(2)).get("id", "")
            except ValueError:
                ident = ""
            heard.called.add((m.group(1), ident))


def hear_prompt(prompt: str, summary_section: str, conversation_section: str) -> Heard:
    heard = Heard()
    absorb_summary(heard, section(prompt, summary_section))
    conversation = section(prompt, conversation_section)
    cut = conversation.find("\ncurrent date:")
    absorb_lines(heard, conversation if cut < 0 else conversation[:cut])
    return heard


def write_summary(heard: Heard) -> str:
    called = " ".join(f"{t}={i}" for t, i in sorted(heard.called))
    return (f"seen: {' '.join(heard.users)}\nanswered: {' '.join(sorted(heard.answered))}\n"
            f"called: {called}\nreplies: {'|'.join(heard.replies)}")
