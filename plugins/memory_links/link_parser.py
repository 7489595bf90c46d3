"""Read a link-generator completion: `LINK #a KIND #b` lines (and, when the neighbour
evolver rides the same call, `EVOLVE #id [tags=a,b]` lines).

Every persisted edge must join two ids surfaced this turn (the allowlist): a model that
names any other id, a self-loop, an unknown kind, a repeated triple or a garbled line is
dropped with its reason, and never spoils the other lines.
"""

from __future__ import annotations

import re
from collections.abc import Collection

import attrs

LINK_KINDS = ("RELATES_TO", "CAUSED_BY", "REFERENCES", "CONTRADICTS", "DUPLICATES", "SUPERSEDES")
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d{1,2}[.)])\s*")
_LINK = re.compile(r"^LINK\s+#?(\d{1,12})\s+([A-Za-z_]+)\s+#?(\d{1,12})\s*$", re.IGNORECASE)
_EVOLVE = re.compile(r"^EVOLVE\s+#?(\d{1,12})\s+\[\s*tags\s*=\s*([^\]]*)\]\s*$", re.IGNORECASE)
_NONE = re.compile(r"^NONE[.!]?$", re.IGNORECASE)
_TAG = re.compile(r"^[a-z0-9][a-z0-9_:.\-/]{0,31}$")
MAX_EVOLVE_TAGS = 10


@attrs.frozen
class ProposedLink:
    from_id: int
    kind: str
    to_id: int


@attrs.frozen
class ProposedEvolve:
    target_id: int
    add_tags: tuple[str, ...]


@attrs.frozen
class DroppedLine:
    line: str
    reason: str  # not_in_allowlist | self_loop | unknown_kind | duplicate | malformed | no_tags


@attrs.frozen
class ParsedLinks:
    links: tuple[ProposedLink, ...] = ()
    evolves: tuple[ProposedEvolve, ...] = ()
    dropped: tuple[DroppedLine, ...] = ()


def parse_links(text: str, allowlist: Collection[int], *, evolve: bool = False) -> ParsedLinks:
    """The links (and evolve directives) of `text` whose ids are all in `allowlist`.
    Duplicate EVOLVE lines for one target: the last one wins."""
    allowed = set(allowlist)
    links: list[ProposedLink] = []
    evolves: dict[int, ProposedEvolve] = {}
    dropped: list[DroppedLine] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = _BULLET.sub("", raw).strip().strip("`").strip()
        if not line or _NONE.match(line):
            continue
        found = _LINK.match(line)
        if found:
            src, kind, dst = int(found.group(1)), found.group(2).upper(), int(found.group(3))
            if kind not in LINK_KINDS:
                dropped.append(DroppedLine(raw, "unknown_kind"))
            elif src == dst:
                dropped.append(DroppedLine(raw, "self_loop"))
            elif src not in allowed or dst not in allowed:
                dropped.append(DroppedLine(raw, "not_in_allowlist"))
            elif ProposedLink(src, kind, dst) in links:
                dropped.append(DroppedLine(raw, "duplicate"))
            else:
                links.append(ProposedLink(src, kind, dst))
            continue
        found = _EVOLVE.match(line) if evolve else None
        if found:
            target = int(found.group(1))
            tags = tuple(dict.fromkeys(t.strip().lower() for t in found.group(2).split(",")
                                       if _TAG.match(t.strip().lower())))[:MAX_EVOLVE_TAGS]
            if target <= 0:
                dropped.append(DroppedLine(raw, "malformed"))
            elif not tags:
                dropped.append(DroppedLine(raw, "no_tags"))
            else:
                evolves.pop(target, None)
                evolves[target] = ProposedEvolve(target, tags)
            continue
        dropped.append(DroppedLine(raw, "malformed"))
    return ParsedLinks(tuple(links), tuple(evolves.values()), tuple(dropped))
