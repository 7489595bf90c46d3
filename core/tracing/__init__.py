"""Per-session NDJSON traces: recording, the event names, where the files live, and the
salted hash that stands for the stable prompt prefix.

One append-only file per session at `<state>/traces/<session_id>.ndjson`. The stable
prompt prefix is only ever stored as a salted hash (see prefix_hash), so traces stay
small across steps; reading and analysing traces is the trace plugin's (`atomic-agent trace`).
"""
