"""`atomic-agent doctor` lines for hybrid recall. Read-only: nothing is started or written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHECK = "memory embeddings"


def _enabled(state_dir: Path) -> bool:
    from atomic_agent.api import ConfigError, read_raw_config

    from . import CONFIG_KEY

    try:
        raw = read_raw_config(state_dir / "config.json")
    except ConfigError:
        return False  # the core's config check reports it
    block = raw.get(CONFIG_KEY)
    return isinstance(block, dict) and block.get("enabled") is True


def sqlite_vec_problem() -> str | None:
    """Why sqlite-vec cannot be loaded here, or None (tried on an in-memory database)."""
    from atomic_agent.api import Durability

    from .sqlite_extensions import ExtensionsUnavailableError, open_sqlite_with_extensions
    from .vector_index import _load_vec

    try:
        open_sqlite_with_extensions(":memory:", Durability.NORMAL, [_load_vec]).close()
    except (ExtensionsUnavailableError, ImportError) as exc:
        return str(exc)
    return None


def embedding_findings(state_dir: Path) -> list[Any]:
    from atomic_agent.api import DoctorFinding

    from .embedding_status import embedding_status

    if not _enabled(state_dir):
        return []
    findings = []
    problem = sqlite_vec_problem()
    if problem is not None:
        findings.append(DoctorFinding(CHECK, "error", f"sqlite-vec cannot be loaded, so recall is BM25 only: "
                                      f"{problem}", "reinstall atomic-agent (it depends on sqlean.py and sqlite-vec)"))
    status = embedding_status(state_dir, True)
    failure = status.get("lastFailure")
    if failure:
        findings.append(DoctorFinding(CHECK, "warn", f"the last {failure.get('path')} fell back to full-text search "
                                      f"({failure.get('reason')}, {failure.get('at')}): {failure.get('detail')}",
                                      "check `atomic-agent llama status` (embedding daemon) or the embedding "
                                      "provider; `atomic-agent memory reembed` after changing the model"))
    elif problem is None:
        findings.append(DoctorFinding(CHECK, "ok", f"model {status['model'] or 'none yet'}: {status['embedded']} of "
                                      f"{status['notes']} notes embedded, {status['fallbacks']} fallback(s) so far"))
    return findings
