"""The `request_approval` callable a ToolContext carries, bound to one gate, session and tool.

The agent loop and `atomic-agent tools call` both build contexts with it, so a tool asks
through exactly the same path wherever it runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from atomic_agent.approval.approval_binding import ApprovalBinding
from atomic_agent.approval.approval_gate import ApprovalGate

RequestApproval = Callable[..., Awaitable[bool]]


def bind_request_approval(gate: ApprovalGate, session_id: str, tool: str) -> RequestApproval:
    async def request_approval(category: str, summary: str, *, binding: ApprovalBinding | None = None,
                               command_shape: str | None = None) -> bool:
        decision = await gate.request(session_id, tool, category, summary, command_shape=command_shape,
                                      binding=binding)
        return decision.approved

    return request_approval
