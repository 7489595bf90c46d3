"""Parse `ps -eo pid=,ppid=,user=,pcpu=,pmem=,rss=,stat=,etime=,args=` (Linux and macOS)."""

from __future__ import annotations

import posixpath
from typing import Any

PS_ARGV = ("ps", "-ww", "-eo", "pid=,ppid=,user=,pcpu=,pmem=,rss=,stat=,etime=,args=")


def elapsed_seconds(text: str) -> int | None:
    """`[[dd-]hh:]mm:ss` → seconds."""
    days = 0
    if "-" in text:
        day_text, _, text = text.partition("-")
        if not day_text.isdigit():
            return None
        days = int(day_text)
    parts = text.split(":")
    if not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 3:
        return None
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + int(part)
    return days * 86400 + seconds


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def parse_ps(text: str) -> list[dict[str, Any]]:
    processes = []
    for line in text.splitlines():
        fields = line.split(None, 8)
        if len(fields) < 8 or not fields[0].isdigit():
            continue
        pid, ppid, user, cpu, mem, rss, stat, etime = fields[:8]
        command = fields[8] if len(fields) > 8 else ""
        first = command.split(" ", 1)[0]
        name = first if first.startswith("[") else posixpath.basename(first)
        processes.append({"pid": int(pid), "ppid": int(ppid) if ppid.isdigit() else None, "user": user,
                          "cpu": _number(cpu), "mem": _number(mem), "rssKb": int(rss) if rss.isdigit() else None,
                          "state": stat, "elapsedS": elapsed_seconds(etime), "name": name, "command": command})
    return processes
