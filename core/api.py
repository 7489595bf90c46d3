"""The supported public surface of atomic-agent for plugin authors and embedders.

Plugins — built-in ones included — import only from here (a test enforces it), so the
internals can move without breaking anyone.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> defining module; resolved on first access (PEP 562) so that importing `hookimpl`
# at a plugin's top level costs only the marker and `atomic-agent --help` stays fast
_EXPORTS: dict[str, str] = {
    "AppConfig": "atomic_agent.config.app_config",
    "ApprovalCategory": "atomic_agent.records.approval_category",
    "Channel": "atomic_agent.records.channel_spec",
    "ChannelSpec": "atomic_agent.records.channel_spec",
    "CliState": "atomic_agent.cli.cli_state",
    "Completion": "atomic_agent.llm.completion",
    "CompletionRequest": "atomic_agent.llm.completion",
    "ConfigBlock": "atomic_agent.records.config_block",
    "ConfigError": "atomic_agent.config.config_errors",
    "DoctorFinding": "atomic_agent.records.doctor_finding",
    "MemoryPhase": "atomic_agent.records.memory_phase",
    "PromptSection": "atomic_agent.records.memory_phase",
    "ProviderCapabilities": "atomic_agent.records.provider_kind",
    "ProviderError": "atomic_agent.llm.provider_protocol",
    "ProviderKind": "atomic_agent.records.provider_kind",
    "ProviderUnavailableError": "atomic_agent.llm.provider_protocol",
    "ResourceClass": "atomic_agent.records.tool_spec",
    "RuntimeView": "atomic_agent.runtime.runtime_view",
    "TextProvider": "atomic_agent.llm.provider_protocol",
    "Tier": "atomic_agent.records.tool_spec",
    "ToolContext": "atomic_agent.records.tool_context",
    "ToolResult": "atomic_agent.records.tool_spec",
    "ToolSpec": "atomic_agent.records.tool_spec",
    "TurnDigest": "atomic_agent.records.memory_phase",
    "call_each_plugin": "atomic_agent.plugin_host.collect_registrations",
    "current_cli_state": "atomic_agent.cli.cli_state",
    "fail": "atomic_agent.cli.cli_state",
    "runs_without_config": "atomic_agent.cli.cli_state",
    "hookimpl": "atomic_agent.hook_markers",
    "int_field": "atomic_agent.config.config_fields",
    "print_json": "atomic_agent.cli.output_format",
    "print_table": "atomic_agent.cli.output_format",
    "read_raw_config": "atomic_agent.config.config_file",
    "save_raw_config": "atomic_agent.config.config_file",
    "set_dotenv_key": "atomic_agent.config.dotenv_file",
    "set_key": "atomic_agent.config.config_keys",
    "value_field": "atomic_agent.config.config_fields",
    "write_atomic": "atomic_agent.config.atomic_write",
    "fresh_plugin_host": "atomic_agent.testing.plugin_kit",
    "installed_plugin_host": "atomic_agent.testing.plugin_kit",
    "registered_plugin": "atomic_agent.testing.plugin_kit",
    "collected_tools": "atomic_agent.testing.plugin_kit",
    "make_tool_context": "atomic_agent.testing.tool_context_kit",
    "make_runtime_view": "atomic_agent.testing.tool_context_kit",
    # tracing (core/tracing): recorder and field builders for the loop, readers for `trace`
    "TraceRecorder": "atomic_agent.tracing.trace_recorder",
    "TraceError": "atomic_agent.tracing.trace_errors",
    "TraceFileInfo": "atomic_agent.tracing.trace_reader",
    "StepDrift": "atomic_agent.tracing.prefix_drift",
    "ReplayReport": "atomic_agent.tracing.prefix_replay",
    "attribute_steps": "atomic_agent.tracing.step_attribution",
    "build_chronology": "atomic_agent.tracing.trace_chronology",
    "compare_prefix_hashes": "atomic_agent.tracing.prefix_drift",
    "find_trace": "atomic_agent.tracing.trace_reader",
    "hash_prefix": "atomic_agent.tracing.prefix_hash",
    "list_traces": "atomic_agent.tracing.trace_reader",
    "load_or_create_salt": "atomic_agent.tracing.prefix_hash",
    "prompt_captured_fields": "atomic_agent.tracing.trace_events",
    "read_trace": "atomic_agent.tracing.trace_reader",
    "render_chronology": "atomic_agent.tracing.trace_chronology",
    "replay_prefix_drift": "atomic_agent.tracing.prefix_replay",
    "summarise_trace": "atomic_agent.tracing.trace_chronology",
    "tool_invocation_fields": "atomic_agent.tracing.trace_events",
    "traces_dir": "atomic_agent.tracing.trace_paths",
    "create_runtime": "atomic_agent.runtime.runtime",
    "Runtime": "atomic_agent.runtime.runtime",
    "TurnResult": "atomic_agent.agent.agent_loop",
    "ApprovalRequest": "atomic_agent.approval.approval_gate",
    "preview_prompt": "atomic_agent.runtime.preview_prompt",
    "SessionNotFoundError": "atomic_agent.sessions.session_store",
    "SessionStoreError": "atomic_agent.sessions.session_store",
    "ScriptedProvider": "atomic_agent.testing.scripted_provider",
    "SessionStore": "atomic_agent.sessions.session_store",  # the SQLite implementation; prefer the two below
    "SessionRepository": "atomic_agent.sessions.session_database",
    "open_session_store": "atomic_agent.turns.session_backends",
    # subprocess environment filtering (core/subprocess_env)
    "child_environment": "atomic_agent.subprocess_env.child_environment",
    # approval ladder (core/approval): answers, grants, bindings, audit, level changes, the CLI prompt
    "AnswerKind": "atomic_agent.approval.approval_answer",
    "ApprovalAnswer": "atomic_agent.approval.approval_answer",
    "ApprovalAuditLog": "atomic_agent.approval.approval_audit",
    "ApprovalBinding": "atomic_agent.approval.approval_binding",
    "ApprovalDecision": "atomic_agent.approval.approval_gate",
    "ApprovalGate": "atomic_agent.approval.approval_gate",
    "ApprovalLevelError": "atomic_agent.approval.approval_level",
    "audit_path": "atomic_agent.approval.approval_audit",
    "bind_request_approval": "atomic_agent.approval.bound_request",
    "binding_for_paths": "atomic_agent.approval.approval_binding",
    "resolve_boot_level": "atomic_agent.approval.approval_level",
    "set_approval_level": "atomic_agent.approval.approval_level",
    "stdin_approver": "atomic_agent.approval.terminal_approver",
    "UnknownToolChoiceError": "atomic_agent.runtime.tool_choice",
    "capped_lines": "atomic_agent.prompt.capped_lines",
    "describe_full": "atomic_agent.prompt.describe_tool",
    "LEVEL_NAMES": "atomic_agent.approval.standard_categories",
    # approval prompts waiting for a remote host (serve, sidecar) and their typed answer errors
    "PendingApprovals": "atomic_agent.approval.pending_approvals",
    "ApprovalNotPendingError": "atomic_agent.approval.pending_approvals",
    "InvalidDecisionError": "atomic_agent.approval.pending_approvals",
    # running one tool outside the loop (`atomic-agent tools call`)
    "args_errors": "atomic_agent.tools.validate_args",
    "compress_result": "atomic_agent.agent.compress_result",
    # memory fabric (core/memory_store): memory.sqlite, its stores and the safe FTS query builder
    "MemoryDatabase": "atomic_agent.memory_store.memory_database",
    "memory_db_path": "atomic_agent.memory_store.memory_database",
    "memory_database_for": "atomic_agent.memory_store.shared_memory_database",
    "release_memory_database": "atomic_agent.memory_store.shared_memory_database",
    "ProfileStore": "atomic_agent.memory_store.profile_store",
    "NoteStore": "atomic_agent.memory_store.note_store",
    "NoteInput": "atomic_agent.memory_store.note_store",
    "ProfileFact": "atomic_agent.memory_store.memory_records",
    "Note": "atomic_agent.memory_store.memory_records",
    "RecallHit": "atomic_agent.memory_store.memory_records",
    "MemoryStoreError": "atomic_agent.memory_store.memory_errors",
    "MemoryValidationError": "atomic_agent.memory_store.memory_errors",
    "MemoryDatabaseLockedError": "atomic_agent.memory_store.memory_errors",
    "MemoryDatabaseRefusedError": "atomic_agent.memory_store.memory_errors",
    "build_match_query": "atomic_agent.memory_store.fts_query",
    "query_terms": "atomic_agent.memory_store.fts_query",
    "TurnStart": "atomic_agent.records.memory_phase",
    "is_valid_profile_key": "atomic_agent.memory_store.profile_validation",
    # metrics (core/metrics): the per-runtime registry and its two dump formats
    "MetricsRegistry": "atomic_agent.metrics.metrics_registry",
    "metrics_of": "atomic_agent.metrics.runtime_metrics",
    "render_prometheus": "atomic_agent.metrics.prometheus_text",
    "read_metrics": "atomic_agent.metrics.metrics_file",
    "clear_metrics": "atomic_agent.metrics.metrics_file",
    "MetricsFileError": "atomic_agent.metrics.metrics_file",
    # prompt pieces a sub-call plugin renders with (reflection, distill, ...)
    "make_prompt_env": "atomic_agent.prompt.jinja_env",
    "estimate_tokens": "atomic_agent.prompt.estimate_tokens",
    # host surfaces (sidecar, serve): steering outcomes, queue cancellation, failure codes
    "SteerOutcome": "atomic_agent.runtime.steering_inbox",
    "MAX_PENDING_STEERS": "atomic_agent.runtime.steering_inbox",
    "SubmissionCancelledError": "atomic_agent.runtime.turn_controller",
    "SteerAlreadyTakenError": "atomic_agent.turns.durable_steering",
    "FAILURE_CATEGORIES": "atomic_agent.reliability.failure_taxonomy",
    "error_code": "atomic_agent.reliability.failure_taxonomy",
    "openai_error_type": "atomic_agent.reliability.failure_taxonomy",
    # providers, fallback chain and embeddings (core/providers, core/llm/fallback, core/embeddings)
    "EmbeddingUnavailable": "atomic_agent.embeddings.embedding_errors",
    "LlmConfig": "atomic_agent.providers.llm_config",
    "read_llm_config": "atomic_agent.providers.llm_config_reader",
    "structure_llm_block": "atomic_agent.providers.llm_config_reader",
    "resolve_fallback_chain": "atomic_agent.llm.fallback.fallback_config",
    "declared_links": "atomic_agent.llm.fallback.fallback_config",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"atomic_agent.api has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
