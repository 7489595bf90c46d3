"""When a network tool may send a request: the exfiltration policy every network tool follows.

A request carries data out — in its URL as much as in its body — so the question is
about the destination, asked before anything is sent:

1. Hosts in `http.allowedHosts` (names or `*.suffix`) go without asking, except that with
   `http.approvalMode = gate` `os.http.request` keeps asking under `http` as before.
   In `allowlist-only` mode every other host is refused.
2. Any other host asks under `http`, the category the ladder auto-approves from level 3
   (home): at levels 1 and 2 no request reaches a host the operator did not list without
   the person seeing its full URL. This now includes `os.web.fetch`, which asked nothing.
3. Once the session has read a credential store (an approved `sensitive_read`), a
   request to a host outside the allowlist asks under `sensitive_egress` at every level
   below 5 and cannot be granted for the session — a key read at level 4 does not leave
   the machine because level 4 auto-approves `http`.

Redirects: an asked-and-approved request follows redirects as its tool always did; a
request that went without asking (an allowlisted host) may only be redirected to hosts
that are allowlisted too, so an open redirect on a listed host cannot carry data on.
"""

from __future__ import annotations

from typing import Any

import attrs

from atomic_agent.plugins.os.fs_approval.sensitive_taint import TAINT

from ..shell.ask_approval import ask_approval, call_binding
from ..shell.shown_text import escape_for_prompt
from .http_config import MODE_ALLOWLIST_ONLY, MODE_GATE, HttpConfig, host_listed
from .ssrf_guard import SsrfBlocked

HTTP_CATEGORY = "http"
SENSITIVE_EGRESS = "sensitive_egress"


@attrs.frozen
class EgressDecision:
    allowed: bool
    asked: bool  # the person (or the level) approved this destination explicitly
    message: str = ""  # why it was refused or denied
    refused: bool = False  # refused by policy (allowlist-only), not by a person


async def admit_egress(ctx: Any, tool: str, method: str, url: str, host: str, config: HttpConfig,
                       headers: dict[str, str] | None = None, body: bytes | None = None,
                       always_gate: bool = False, carrying: str = "") -> EgressDecision:
    """Decide and, where the policy says so, ask. `always_gate`: the tool asks under `http`
    for listed hosts too (os.http.request in `gate` mode). `carrying`: what the request
    sends, in words the person can judge (a search's query), shown with the question."""
    listed = host_listed(host, config.allowed_hosts)
    if config.approval_mode == MODE_ALLOWLIST_ONLY and not listed:
        return EgressDecision(False, False, f"{host} is not in http.allowedHosts and http.approvalMode is "
                              "allowlist-only; add the host to http.allowedHosts in config.json to allow it", True)
    shown = f"{method} {escape_for_prompt(url, 300)}" + (f" with a {len(body)}-byte body" if body else "")
    if carrying:
        shown += f" carrying {escape_for_prompt(carrying, 300)}"
    binding = call_binding(tool, ctx.working_dir, [method, url, *(f"{k}: {v}" for k, v in (headers or {}).items())])
    reads = TAINT.reads_of(ctx.session_id)
    if reads and not listed:
        summary = f"{shown} — this session read {', '.join(reads)} (credentials); the request could carry them out"
        if not await ask_approval(ctx, SENSITIVE_EGRESS, summary, binding=binding):
            return EgressDecision(False, False, f"not approved: {method} {escape_for_prompt(url, 200)} was not sent "
                                  f"(a network send after reading {', '.join(reads)} needs the person's approval)")
        return EgressDecision(True, True)
    if listed and not (always_gate and config.approval_mode == MODE_GATE):
        return EgressDecision(True, False)
    if not await ask_approval(ctx, HTTP_CATEGORY, shown, binding=binding):
        return EgressDecision(False, False, f"not approved: {method} {escape_for_prompt(url, 200)} was not sent")
    return EgressDecision(True, True)


def redirect_check(decision: EgressDecision, config: HttpConfig) -> Any:
    """The per-hop host check for a request the policy let through."""

    def check(host: str) -> None:
        if config.approval_mode == MODE_ALLOWLIST_ONLY and not host_listed(host, config.allowed_hosts):
            raise SsrfBlocked(f"a redirect leads to {host}, which is not in http.allowedHosts")
        if not decision.asked and not host_listed(host, config.allowed_hosts):
            raise SsrfBlocked(f"a redirect from an allowlisted host leads to {host}, which is not listed; request "
                              f"{host} directly so the person can see it")

    return check
