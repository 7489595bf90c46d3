"""What `doctor` (and `config set` / `webhook add`, which show the same warnings) says about
the webhook endpoints: one that has no credential refuses every call, and one whose
secret's variable is not set anywhere refuses every call too — both with a 401 a sender
cannot tell from a wrong secret, so they are said here, where the operator looks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

DOTENV = ".env"


def known_secrets(state_dir: Path) -> set[str]:
    """The variable names that hold a value: the environment, then the state dir's `.env`."""
    from atomic_agent.api import dotenv_file

    names = {k for k, v in os.environ.items() if v}
    try:
        values, _problems = dotenv_file.parse_dotenv((state_dir / DOTENV).read_text(encoding="utf-8"))
    except OSError:
        values = {}
    return names | {k for k, v in values.items() if v}


def webhook_findings(state_dir: Path) -> list[Any]:
    from atomic_agent.api import ConfigError, DoctorFinding, read_raw_config

    try:
        raw = read_raw_config(state_dir / "config.json")
    except ConfigError:
        return []  # the core's own config check reports it
    block = raw_block if isinstance(raw_block := raw.get("webhooks"), dict) else {}
    endpoints = raw_endpoints if isinstance(raw_endpoints := block.get("endpoints"), dict) else {}
    have = known_secrets(state_dir) if endpoints else set()
    findings = []
    for name, endpoint in sorted(endpoints.items()):
        if not isinstance(endpoint, dict):
            continue
        envs = [(key, endpoint.get(key)) for key in ("secretEnv", "hmacSecretEnv")
                if isinstance(endpoint.get(key), str) and endpoint.get(key)]
        if not envs:
            findings.append(DoctorFinding(
                f"webhook {name}", "warn", "has no credential (secretEnv or hmacSecretEnv), so serve refuses every "
                "call to it with 401", f"`atomic-agent webhook add {name} --replace` stores a secret for it"))
            continue
        missing = [f"{key} {var}" for key, var in envs if var not in have]
        if missing:
            findings.append(DoctorFinding(
                f"webhook {name}", "warn", f"{', '.join(missing)} is set neither in the environment nor in "
                f"{state_dir / DOTENV}, so serve refuses every call to it with 401",
                f"`atomic-agent webhook add {name} --replace` stores a secret for it"))
        else:
            kinds = " and ".join("signature" if key == "hmacSecretEnv" else "shared secret" for key, _ in envs)
            findings.append(DoctorFinding(f"webhook {name}", "ok", f"needs a {kinds}; the secret is set"))
    return findings
