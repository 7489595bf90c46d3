"""The approval categories the file tools add to the ladder.

`persistence`: a write that plants something that runs later (a git hook or config, a
shell rc file, a `.pth`, an autostart entry, the agent's own templates). `sensitive_read`:
reading a credential store. Both ask at every level below 5 and cannot be granted for a
session: each one is shown to the person on its own.
"""

from __future__ import annotations

from atomic_agent.api import ApprovalCategory

PERSISTENCE = ApprovalCategory("persistence", 5, "persistence spot (runs later)", grantable=False)
SENSITIVE_READ = ApprovalCategory("sensitive_read", 5, "credential store read", grantable=False)
