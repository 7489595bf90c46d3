"""Whether an `os.shell.run` call runs inside the sandbox, and whether it still asks.

With the `sandbox` service (`sandbox.mode`):
- `off` (or no service): unboxed, asked as the ladder says;
- `auto`: an ordinary `shell` call the ladder would ask for (levels 1-3, no session grant)
  runs boxed without asking, without network and with the credential stores covered; everything else is unboxed and asked as
  before (dangerous, undecidable and persistence commands keep their question). When
  bubblewrap cannot run, the calls ask as with the sandbox off (said once on stderr);
- `always`: the same calls run boxed without asking; every other call is asked as before
  and, once approved, runs boxed with the network (its approval allowed egress). When
  bubblewrap cannot run, the call fails with the reason and the fix: never unboxed.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.plugins.sandbox.sandbox_contract import ShellSandbox


class Placement(enum.Enum):
    UNBOXED = "unboxed"
    BOXED_UNASKED = "boxed"  # instead of asking: no network
    BOXED_APPROVED = "boxed-approved"  # asked (or allowed by level or grant) first: network allowed


UNBOXED = Placement.UNBOXED
BOXED_UNASKED = Placement.BOXED_UNASKED
BOXED_APPROVED = Placement.BOXED_APPROVED


async def place_in_box(sandbox: ShellSandbox | None, ctx: Any, category: str,
                       command_shape: str | None) -> Placement | str:
    """The placement, or the reason (with the fix) the call must fail in `always` mode."""
    if sandbox is None or sandbox.mode == "off":
        return UNBOXED
    if sandbox.boxes_instead_of_asking(ctx.session_id, category, command_shape):
        problem = await sandbox.unavailable()
        if problem is None:
            return BOXED_UNASKED
        return problem if sandbox.mode == "always" else UNBOXED
    if sandbox.mode == "always":
        problem = await sandbox.unavailable()
        return problem if problem is not None else BOXED_APPROVED
    return UNBOXED


def box_note(placement: Placement) -> str:
    if placement is BOXED_UNASKED:
        return ("ran in the sandbox (sandbox.mode): workspace writable, the rest read-only, private /tmp, "
                "no network")
    return "ran in the sandbox (sandbox.mode always): workspace writable, the rest read-only, private /tmp"
