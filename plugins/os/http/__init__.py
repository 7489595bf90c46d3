"""The HTTP part of the `os` plugin: `os.http.request`, the SSRF guard and the retry
contract `os.web.*` shares. The `http` config block lives here."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atomic_agent.api import ApprovalCategory, ConfigBlock, RuntimeView, ToolSpec


def tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    from .http_tool import http_tool_spec

    return [http_tool_spec(runtime)]


def config_blocks() -> list[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .http_config import HTTP_BLOCK, HttpConfig

    return [ConfigBlock(key=HTTP_BLOCK, cls=HttpConfig)]


def approval_categories() -> list[ApprovalCategory]:
    from atomic_agent.api import ApprovalCategory

    # a request after a credential read, to a host outside the allowlist: see egress_policy
    return [ApprovalCategory("sensitive_egress", 5, "network send after a credential read", grantable=False)]
