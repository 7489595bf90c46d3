"""Ask the gate about one file-system mutation, categorised in the same step.

The tool passes its kind (write / trash / extract) and targets; the funnel classifies them
against the session cwd, the home dir and the trust files, asks under the strictest
category with the call bound to the canonical targets, and re-checks the targets after a
yes: when one now lands somewhere else (a symlink swapped while the person was reading),
it asks again about the new destination, and denies if it moves again. Tools then write to
the canonical paths it returns, never to the paths as given.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import attrs

from atomic_agent.api import ToolContext, approval_gate
from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import FsClassification, TargetScope, classify_fs_mutation
from atomic_agent.plugins.os.fs_approval.trust_config_paths import CONFIG_FILE, trust_config_paths

MAX_TARGETS_SHOWN = 5


@attrs.frozen
class FsApproval:
    approved: bool
    category: str
    targets: tuple[Path, ...]  # canonical, in the order given (only meaningful when approved)
    message: str  # why it was denied, for the tool result

    def denied_result_text(self, tool: str) -> str:
        return f"{tool} was not approved ({self.category}): {self.message}"


def state_dirs_of(state_dir: Path | None, extra_trust: Sequence[Path]) -> tuple[Path, ...]:
    """The state dirs behind a context's state dir and the trust files a tool was given."""
    dirs: dict[str, Path] = {}
    for path in ([Path(state_dir)] if state_dir else []) + [p.parent for p in extra_trust if p.name == CONFIG_FILE]:
        dirs.setdefault(str(path), path)
    return tuple(dirs.values())


def _scope_text(target: TargetScope) -> str:
    return f"persistence: {target.reason}" if target.scope == "persistence" else target.scope


def _describe(classification: FsClassification) -> str:
    persistent = [t for t in classification.targets if t.scope == "persistence"]
    first = persistent[:MAX_TARGETS_SHOWN]  # what makes this request strict is shown first
    rest = [t for t in classification.targets if t not in persistent][:MAX_TARGETS_SHOWN - len(first)]
    shown = [f"{t.canonical or t.requested} ({_scope_text(t)})" for t in first + rest]
    more = len(classification.targets) - MAX_TARGETS_SHOWN
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


async def require_fs_approval(ctx: ToolContext, kind: str, targets: Sequence[str | os.PathLike[str]], *,
                              tool: str, action: str, extra_trust: Sequence[Path] = (),
                              bind_contents: bool = False) -> FsApproval:
    """Classify and ask in one step. `action` is the verb phrase shown, e.g. "edit".

    With `bind_contents` the approval also covers the current bytes of the existing
    targets: a file edited while the person decides is asked about again.
    """
    trust = (*trust_config_paths(ctx.state_dir), *extra_trust)
    states = state_dirs_of(ctx.state_dir, extra_trust)
    classification = classify_fs_mutation(kind, targets, ctx.working_dir, trust, state_dirs=states)
    for attempt in range(2):
        if any(t.canonical is None for t in classification.targets):
            unplaced = next(t.requested for t in classification.targets if t.canonical is None)
            summary = f"{action} {unplaced} (cannot be resolved: symlink loop or invalid path)"
        else:
            summary = f"{action} {_describe(classification)}"
        if attempt:
            summary += " — the destination changed after the first approval"
        placed = [t.canonical for t in classification.targets if t.canonical is not None]
        files = [p for p in placed if p.is_file()] if bind_contents else []
        binding = approval_gate.ApprovalBinding.capture(tool, ctx.working_dir, [str(p) for p in placed], files)
        approved = await ctx.ask_approval(classification.category, summary, binding=binding)
        if not approved:
            return FsApproval(False, classification.category, (), f"denied: {summary}")
        if any(t.canonical is None for t in classification.targets):
            return FsApproval(False, classification.category, (), f"cannot place {summary}")
        again = classify_fs_mutation(kind, targets, ctx.working_dir, trust, state_dirs=states)
        if again.canonical == classification.canonical and again.category == classification.category:
            # every target placed: the same canonical set as the approved one, checked above
            canonical_targets = tuple(t.canonical for t in again.targets if t.canonical is not None)
            return FsApproval(True, classification.category, canonical_targets, "")
        classification = again
    return FsApproval(False, classification.category, (),
                      "the destination kept changing between approval and the write; nothing was written")
