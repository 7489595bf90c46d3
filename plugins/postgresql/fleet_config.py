"""Two fleets pointed at one database, told apart: every host records a fingerprint of its
config in the database (`fleet_hosts`), and a host whose config differs from another host's
that used the database lately is reported — on its start (stderr) and by `doctor` — instead
of the two silently sharing sessions, turns and leases under different rules.

The fingerprint is a hash of the host's config.json with the `storage` block left out (hosts
may reach the server under different names); hosts of one fleet share one config.json, so
any other difference (the approval level, the model, the plugins enabled) is the sign of a
second fleet, or of a host nobody updated. It is a warning, not a refusal: a rolling config
change passes through a moment of disagreement.
"""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path
from typing import Any

import attrs

RECENT = "7 days"  # hosts seen within this long count as using the database now
LEFT_OUT = ("storage",)


def config_fingerprint(state_dir: Path) -> str:
    """The hash of `<state_dir>/config.json` without its storage block ("" content: {})."""
    try:
        raw = json.loads((state_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raw = {}
    kept = {k: v for k, v in raw.items() if k not in LEFT_OUT} if isinstance(raw, dict) else raw
    return hashlib.sha256(json.dumps(kept, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def member_of(state_dir: Path) -> str:
    """This host's row: the machine and the state directory (stable across restarts)."""
    return f"{socket.gethostname()}:{state_dir.resolve()}"


@attrs.frozen
class OtherHost:
    member: str
    fingerprint: str
    seen_at: str


def record_and_compare(conn: Any, member: str, fingerprint: str) -> list[OtherHost]:
    """Record this host's fingerprint; the hosts seen lately whose fingerprint differs."""
    conn.execute("INSERT INTO fleet_hosts (member, fingerprint) VALUES (%s, %s) ON CONFLICT (member) DO UPDATE "
                 "SET fingerprint = excluded.fingerprint, seen_at = now()", [member, fingerprint])
    return others_differing(conn, member, fingerprint)


def others_differing(conn: Any, member: str, fingerprint: str) -> list[OtherHost]:
    rows = conn.execute("SELECT member, fingerprint, to_char(seen_at, 'YYYY-MM-DD HH24:MI:SSOF') FROM fleet_hosts "
                        f"WHERE member <> %s AND fingerprint <> %s AND seen_at > now() - interval '{RECENT}' "
                        "ORDER BY seen_at DESC", [member, fingerprint]).fetchall()
    return [OtherHost(*row) for row in rows]


def disagreement(shown: str, fingerprint: str, others: list[OtherHost]) -> str:
    listed = "; ".join(f"{o.member} (config {o.fingerprint}, last start {o.seen_at})" for o in others[:5])
    return (f"the PostgreSQL database {shown} is shared with host(s) whose config differs from this one's "
            f"(config {fingerprint}): {listed}. Two fleets with different configs on one database share sessions, "
            "turns and leases under different rules: give each fleet its own database (storage.url), or make "
            "config.json the same on every host of the fleet (the storage block may differ)")
