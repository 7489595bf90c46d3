"""The `serve` config block (the `http` key belongs to the os plugin's HTTP tool).

`host`/`port`: where `atomic-agent serve` binds (loopback by default). `apiKeyEnv`: the
environment variable (or `.env` key) holding the API key. Every route needs
`Authorization: Bearer <key>`: with no key configured, serve generates one on its first
start (printed once, kept 0600 in `<state>/serve/api-key`) — a loopback port is open to
every user of the machine, not only to the one running the agent. `requireApiKey: false`
opts out (any local user may then drive the agent; serve warns at each start). Only with
a key may the server bind a non-loopback address. `modelName`: the one model id `/v1/models` lists.
`shutdownGraceS`: on SIGTERM/SIGINT, how long running turns get to finish the step they are
in before their step is abandoned (either way they end `interrupted` and the next start
answers them; queued turns stay queued).

`allowedHosts`: host names besides the loopback ones that requests may be addressed to
(the Host header; DNS rebinding arrives under a foreign name). `allowedOrigins`: web
origins (`http://localhost:3000`) whose pages may call the server — CORS preflights are
answered for them and nobody else. `workspaceRoots`: directories (besides `--cwd`) a
client may open sessions in with `POST /api/sessions {"workingDir": ...}`; the session's
working dir decides what counts as the workspace for the approval ladder, so a client
cannot choose `/`.
"""

from __future__ import annotations

import attrs

from atomic_agent.api import int_field, value_field

SERVE_BLOCK = "serve"


@attrs.frozen
class ServeConfig:
    host: str = value_field("127.0.0.1")
    port: int = int_field(8765, 1, 65535)
    api_key_env: str = value_field("ATOMIC_AGENT_API_KEY")
    require_api_key: bool = value_field(True)
    model_name: str = value_field("atomic-agent")
    approval_timeout_s: int = int_field(480, 1, 86_400)
    max_body_bytes: int = int_field(4 * 1024 * 1024, 1024, 256 * 1024 * 1024)
    shutdown_grace_s: int = int_field(10, 0, 3600)
    allowed_hosts: tuple[str, ...] = value_field(())
    allowed_origins: tuple[str, ...] = value_field(())
    workspace_roots: tuple[str, ...] = value_field(())
