"""The `webhooks` config block: the named endpoints `POST /api/webhooks/{name}` accepts.

Each endpoint turns a JSON body into a task of the `tasks` plugin. It must be
authenticated: `secretEnv` names the environment (or `.env`) key of a shared secret the
caller sends in `X-Webhook-Secret`, `hmacSecretEnv` the key of an HMAC-SHA256 secret the
caller signs `<timestamp>.<raw body>` with (`X-Atomic-Timestamp` and `X-Webhook-Signature:
sha256=<hex>`; GitHub's `X-Hub-Signature-256` is accepted too, see `webhook_auth`); with
both, both are checked. `messageTemplate` is the task's message with `{{body.a.b}}` filled from the body.
`sessionMode` `new` runs each call in a fresh session, `persistent` every call of this
endpoint in one session. `maxBodyBytes` caps the body.
"""

from __future__ import annotations

import attrs

from atomic_agent.api import int_field, value_field

WEBHOOKS_BLOCK = "webhooks"


@attrs.frozen
class WebhookEndpoint:
    message_template: str = value_field("")
    secret_env: str = value_field("")
    hmac_secret_env: str = value_field("")
    session_mode: str = value_field("new", choices=("new", "persistent"))
    max_body_bytes: int = int_field(1024 * 1024, 1, 8 * 1024 * 1024)


@attrs.frozen
class WebhooksConfig:
    endpoints: dict[str, WebhookEndpoint] = attrs.field(factory=dict)
