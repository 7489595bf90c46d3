"""Per-session NDJSON traces: recording, reading, and stable-prefix drift checks.

One append-only file per session at `<state>/traces/<session_id>.ndjson`. The stable
prompt prefix is only ever stored as a salted hash (see prefix_hash), so traces stay
small across steps and `trace replay` can tell whether the upper prompt changed.
"""
