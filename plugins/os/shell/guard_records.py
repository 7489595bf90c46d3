"""What the shell guard decides and why."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

HARDLINE = "hardline"  # blocked at every approval level, before the gate
UNDECIDABLE = "undecidable"  # its effect is only known when it runs: asks at every level, 5 included
DANGEROUS = "dangerous"  # asks under `shell_dangerous` below level 5, the rule named in the prompt
ORDINARY = "ordinary"  # asks under `shell` like any command (auto-approved from level 4)


@attrs.frozen
class RuleHit:
    rule: str  # stable id, e.g. "hardline.rm_root"
    reason: str  # one line a user understands


@attrs.frozen
class GuardScope:
    """The directories a command is judged against."""

    cwd: str  # effective cwd (a `cd` earlier in the line moves it)
    session_cwd: str  # the session's working dir: "inside the workspace" means under this
    home: str
    environment: Mapping[str, str] | None = None  # the child's environment; None when unknown
    # the runtime's secret paths (state dir `.env`, `serve/`, audit, leases), as written and canonical
    secrets: tuple[str, ...] = ()


@attrs.frozen
class GuardVerdict:
    kind: str  # HARDLINE | UNDECIDABLE | DANGEROUS | ORDINARY
    hits: tuple[RuleHit, ...] = ()
    # the normalised binary a session grant may cover; None when the binary hides what runs
    command_shape: str | None = None

    @property
    def blocked(self) -> bool:
        return self.kind == HARDLINE

    def reasons(self) -> str:
        """The hits that decided the verdict (only the hardline ones for a block), one line."""
        hits = [h for h in self.hits if h.rule.startswith(HARDLINE)] if self.blocked else list(self.hits)
        return "; ".join(f"{h.reason} [{h.rule}]" for h in hits)
