"""The `sidecar` config block: how long an approval waits and how long a request line may be."""

from __future__ import annotations

import attrs

from atomic_agent.api import int_field

SIDECAR_BLOCK = "sidecar"


@attrs.frozen
class SidecarConfig:
    """`approvalTimeoutS`: an unanswered approval_request is denied after this long.
    `maxLineBytes`: a longer request line is skipped with a `line_too_long` error.
    `shutdownGraceS`: on shutdown (request, end of input, SIGTERM/SIGINT), how long running
    turns get to finish their step before it is abandoned (either way they are parked)."""

    approval_timeout_s: int = int_field(480, 1, 86_400)
    max_line_bytes: int = int_field(4 * 1024 * 1024, 1024, 256 * 1024 * 1024)
    shutdown_grace_s: int = int_field(10, 0, 3600)
