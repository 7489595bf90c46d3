"""What a plugin needs to implement the session-state protocols for another database: the
records the protocols take and return, the errors they raise, the writer-fence verdict, the
turn states and the shared helpers (the transcript cache, how rows are stored and stamped,
load-time repair, search terms and hits), and the approval records' module
(`approval_records`: the record, its errors and the backend-neutral rules every backend's
approval records answer by).

Plugins import only `atomic_agent.api`, whose names are capped; a backend plugin receives
this module as the core service `session_backend_kit` (`runtime.service(...)`), so the whole
seam costs the API no name. The SQLite implementations use the same pieces directly.
"""

from __future__ import annotations

from atomic_agent.approval import approval_records
from atomic_agent.approval.approval_audit_log import audit_entry
from atomic_agent.sessions.repair_unanswered_calls import repair_on_load
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_schema import TERMINAL_TURN_STATES
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.store_errors import (
    SessionNotFoundError,
    SessionStoreError,
    SessionStoreLockedError,
    StaleWriterError,
)
from atomic_agent.sessions.stored_rows import (
    ENTRY_COLUMNS,
    entry_of,
    entry_values,
    session_fields_of,
    session_state_of,
    stamp_appended,
)
from atomic_agent.sessions.transcript_cache import TranscriptCache
from atomic_agent.sessions.transcript_entry import TOOL_RESULT, TURN_FINISHED, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.sessions.transcript_search import SearchQueryError, TranscriptHit, channel_of, hits_of, search_terms
from atomic_agent.sessions.writer_guard import TurnGuard, require_running
from atomic_agent.storage.group_commit import sync_is_deferred
from atomic_agent.storage.store_clock import now_iso
from atomic_agent.turns.request_keys import DuplicateRequestError, KeyedTurn, RequestKey, steer_key_ref
from atomic_agent.turns.session_backends import SessionBackend
from atomic_agent.turns.turn_repository import SteerRepository, TurnRepository
from atomic_agent.turns.turn_states import (
    CANCELLED,
    CONTINUATION_ORIGIN,
    INTERRUPTED,
    LIVE_STATES,
    MERGED,
    PARKED,
    QUEUED,
    RESUMED,
    RUNNING,
    LaneBusy,
    QueuedSteer,
    StartedTurn,
    TurnRecord,
    TurnTicket,
    response_hash,
)

SESSION_BACKEND_KIT_SERVICE = "session_backend_kit"

__all__ = [
    "CANCELLED", "CONTINUATION_ORIGIN", "ENTRY_COLUMNS", "INTERRUPTED", "LIVE_STATES", "MERGED", "PARKED", "QUEUED",
    "RESUMED", "RUNNING", "SESSION_BACKEND_KIT_SERVICE", "TERMINAL_TURN_STATES", "TOOL_RESULT", "TURN_FINISHED",
    "TURN_STARTED", "USER", "DuplicateRequestError", "KeyedTurn", "LaneBusy", "QueuedSteer", "RequestKey",
    "SearchQueryError", "SessionBackend", "approval_records", "audit_entry", "SessionNotFoundError", "SessionRepository", "SessionState",
    "SessionStoreError", "SessionStoreLockedError", "StaleWriterError", "StartedTurn", "SteerRepository",
    "TranscriptCache", "TranscriptEntry", "TranscriptHit", "TurnGuard", "TurnRecord", "TurnRepository", "TurnTicket",
    "channel_of", "entry_of", "entry_values", "hits_of", "now_iso", "repair_on_load", "search_terms", "stamp_appended",
    "session_fields_of", "session_state_of", "require_running", "response_hash", "steer_key_ref", "sync_is_deferred",
]
