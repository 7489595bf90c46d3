"""The supported public surface of atomic-agent, grouped by who it is for: PLUGIN_AUTHORS
(hooks, records, tools, providers, config, storage, traces), EMBEDDERS (hosting the
runtime: turns, sessions, remote approvals, graceful stop, failure codes) and TEST_KIT
(hosts, a tool context, a real runtime with chosen plugins, a scripted model). Every name
is importable from this one module either way.

Plugins — built-in ones included — import only from here (a test enforces it), so the
internals can move without breaking anyone.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> defining module, by audience; resolved on first access (PEP 562) so that importing
# `hookimpl` at a plugin's top level costs only the marker and `atomic-agent --help` stays fast
# Writing a plugin: hook markers and the records hooks return, tools, providers, config
# blocks, commands, memory phases, shared SQLite files, prompt pieces for sub-calls, traces.
PLUGIN_AUTHORS: dict[str, str] = {
    # hooks and the records they return
    "hookimpl": "atomic_agent.hookspecs",
    "call_each_plugin": "atomic_agent.plugin_host.collect_registrations",
    "RuntimeView": "atomic_agent.runtime.runtime_view",
    "ServiceSpec": "atomic_agent.hook_records",
    "TickSpec": "atomic_agent.hook_records",
    "ChannelSpec": "atomic_agent.hook_records",
    "Channel": "atomic_agent.hook_records",
    "ConfigBlock": "atomic_agent.hook_records",
    "ConfigError": "atomic_agent.config.config_errors",
    "DoctorFinding": "atomic_agent.hook_records",
    "ApprovalCategory": "atomic_agent.hook_records",
    "ProviderKind": "atomic_agent.hook_records",
    "ProviderCapabilities": "atomic_agent.hook_records",
    "MemoryPhase": "atomic_agent.hook_records",
    "PromptSection": "atomic_agent.hook_records",
    "TurnStart": "atomic_agent.hook_records",
    "TurnDigest": "atomic_agent.hook_records",
    "ExchangePair": "atomic_agent.hook_records",
    # tools
    "ToolSpec": "atomic_agent.hook_records",
    "ToolResult": "atomic_agent.hook_records",
    "ToolContext": "atomic_agent.hook_records",
    "ResourceClass": "atomic_agent.hook_records",
    "Tier": "atomic_agent.hook_records",
    "args_errors": "atomic_agent.tools.tool_registry",
    "invoke_tool": "atomic_agent.agent.invoke_tool",
    "compress_result": "atomic_agent.agent.invoke_tool",
    "describe_full": "atomic_agent.prompt.describe_tool",
    "child_environment": "atomic_agent.subprocess_env",
    # providers
    "TextProvider": "atomic_agent.llm.provider_protocol",
    "Completion": "atomic_agent.llm.provider_protocol",
    "CompletionRequest": "atomic_agent.llm.provider_protocol",
    "ProviderError": "atomic_agent.llm.provider_protocol",
    "ProviderUnavailableError": "atomic_agent.llm.provider_protocol",
    "EmbeddingUnavailable": "atomic_agent.llm.provider_protocol",
    "LlmConfig": "atomic_agent.providers.llm_config",
    "read_llm_config": "atomic_agent.providers.llm_config",
    "structure_llm_block": "atomic_agent.providers.llm_config",
    "resolve_fallback_chain": "atomic_agent.providers.fallback_chain",
    "declared_links": "atomic_agent.providers.fallback_chain",
    "is_transport_retryable": "atomic_agent.reliability.failure_taxonomy",
    # commands and config
    "CliState": "atomic_agent.cli.cli_state",
    "current_cli_state": "atomic_agent.cli.cli_state",
    "fail": "atomic_agent.cli.cli_state",
    "runs_without_config": "atomic_agent.cli.cli_state",
    "print_json": "atomic_agent.cli.cli_state",
    "print_table": "atomic_agent.cli.cli_state",
    "int_field": "atomic_agent.config.config_fields",
    "value_field": "atomic_agent.config.config_fields",
    "read_raw_config": "atomic_agent.config.config_file",
    "save_raw_config": "atomic_agent.config.config_file",
    "structure_config_blocks": "atomic_agent.config.config_file",
    "set_key": "atomic_agent.config.config_file",
    "set_dotenv_key": "atomic_agent.config.dotenv_file",
    "parse_dotenv": "atomic_agent.config.dotenv_file",
    "write_atomic": "atomic_agent.config.atomic_write",
    "resolve_cache_dir": "atomic_agent.config.state_dir",
    "CACHE_DIR_ENV": "atomic_agent.config.state_dir",
    # SQLite state files (core/storage): open with a durability mode, migrate, transact, one clock
    "Durability": "atomic_agent.storage.sqlite_file",
    "open_sqlite": "atomic_agent.storage.sqlite_file",
    "open_sqlite_read_only": "atomic_agent.storage.sqlite_file",
    "open_sqlite_with_extensions": "atomic_agent.storage.sqlite_extensions",
    "ExtensionsUnavailableError": "atomic_agent.storage.sqlite_extensions",
    "is_lock_error": "atomic_agent.storage.sqlite_file",
    "Migration": "atomic_agent.storage.sqlite_migrations",
    "migrate": "atomic_agent.storage.sqlite_migrations",
    "read_schema_state": "atomic_agent.storage.sqlite_migrations",
    "NewerSchemaError": "atomic_agent.storage.sqlite_migrations",
    "refuse_newer_schema": "atomic_agent.storage.sqlite_migrations",
    "check_not_newer": "atomic_agent.storage.sqlite_migrations",
    "transaction": "atomic_agent.storage.sqlite_transaction",
    "store_clock": "atomic_agent.storage.store_clock",
    "OwnerLease": "atomic_agent.turns.turn_owner",
    # prompt pieces a sub-call plugin renders with (reflection, links, rewrite)
    "make_prompt_env": "atomic_agent.prompt.prompt_assets",
    "estimate_tokens": "atomic_agent.prompt.build_prompt",
    "capped_lines": "atomic_agent.prompt.capped_lines",
    # traces: the recorder and field builders; file layout, event names and prefix hashing for readers
    "TraceRecorder": "atomic_agent.tracing.trace_recorder",
    "TraceError": "atomic_agent.tracing.trace_paths",
    "trace_events": "atomic_agent.tracing.trace_events",
    "TRACE_SUFFIX": "atomic_agent.tracing.trace_paths",
    "trace_path": "atomic_agent.tracing.trace_paths",
    "traces_dir": "atomic_agent.tracing.trace_paths",
    "validate_session_id": "atomic_agent.tracing.trace_paths",
    "hash_prefix": "atomic_agent.tracing.prefix_hash",
    "load_or_create_salt": "atomic_agent.tracing.prefix_hash",
    "read_salt": "atomic_agent.tracing.prefix_hash",
    "salt_path": "atomic_agent.tracing.prefix_hash",
    "prompt_captured_fields": "atomic_agent.tracing.trace_events",
    "tool_invocation_fields": "atomic_agent.tracing.trace_events",
    "rebuild_stable_prefix": "atomic_agent.runtime.prompt_plan",
}

# Hosting the runtime (serve, the sidecar, a channel, an app that embeds atomic-agent):
# turns, sessions, approvals answered remotely, steering, graceful stop, failure codes.
EMBEDDERS: dict[str, str] = {
    # the runtime and its turns
    "create_runtime": "atomic_agent.runtime.runtime",
    "Runtime": "atomic_agent.runtime.runtime",
    "TurnResult": "atomic_agent.agent.agent_loop",
    "TurnAnswer": "atomic_agent.turns.turn_answers",
    "preview_prompt": "atomic_agent.runtime.prompt_plan",
    "UnknownToolChoiceError": "atomic_agent.turns.turn_execution",
    # sessions
    "SessionStore": "atomic_agent.sessions.session_store",
    "SessionRepository": "atomic_agent.sessions.session_database",
    "open_session_store": "atomic_agent.turns.session_backends",
    "SessionNotFoundError": "atomic_agent.sessions.session_store",
    "SessionStoreError": "atomic_agent.sessions.session_store",
    # approvals: answers, grants, bindings, audit, level changes, remote prompts, the terminal prompt
    "ApprovalGate": "atomic_agent.approval.approval_gate",
    "ApprovalRequest": "atomic_agent.approval.approval_gate",
    "ApprovalAnswer": "atomic_agent.approval.approval_gate",
    "AnswerKind": "atomic_agent.approval.approval_gate",
    "ApprovalBinding": "atomic_agent.approval.approval_gate",
    "ApprovalLevelError": "atomic_agent.approval.approval_gate",
    "ApprovalAuditLog": "atomic_agent.approval.approval_gate",
    "audit_path": "atomic_agent.approval.approval_gate",
    "bind_request_approval": "atomic_agent.approval.approval_gate",
    "resolve_boot_level": "atomic_agent.approval.approval_gate",
    "set_approval_level": "atomic_agent.approval.approval_gate",
    "LEVEL_NAMES": "atomic_agent.approval.approval_gate",
    "stdin_approver": "atomic_agent.approval.stdin_approver",
    "PendingApprovals": "atomic_agent.approval.pending_approvals",
    "ApprovalNotPendingError": "atomic_agent.approval.pending_approvals",
    "InvalidDecisionError": "atomic_agent.approval.pending_approvals",
    # steering and queues
    "SteerOutcome": "atomic_agent.turns.steering_inbox",
    "MAX_PENDING_STEERS": "atomic_agent.turns.steering_inbox",
    "SubmissionCancelledError": "atomic_agent.turns.turn_controller",
    "SteerAlreadyTakenError": "atomic_agent.turns.durable_steering",
    # admission, graceful stop, idempotent requests
    "InvalidTextError": "atomic_agent.turns.admissible_text",
    "check_text": "atomic_agent.turns.admissible_text",
    "text_problem": "atomic_agent.turns.admissible_text",
    "DEFAULT_GRACE_S": "atomic_agent.turns.graceful_stop",
    "DrainReport": "atomic_agent.turns.graceful_stop",
    "RuntimeStoppingError": "atomic_agent.turns.graceful_stop",
    "TurnParkedError": "atomic_agent.turns.graceful_stop",
    "DuplicateRequestError": "atomic_agent.turns.request_keys",
    "RequestKey": "atomic_agent.turns.request_keys",
    "request_fingerprint": "atomic_agent.turns.request_keys",
    # failure codes a host reports
    "FAILURE_CATEGORIES": "atomic_agent.reliability.failure_taxonomy",
    "classify_failure": "atomic_agent.reliability.failure_taxonomy",
    "environment_kind": "atomic_agent.reliability.failure_taxonomy",
    "error_code": "atomic_agent.reliability.failure_taxonomy",
    "openai_error_type": "atomic_agent.reliability.failure_taxonomy",
}

# Testing a plugin: plugin hosts, a tool context, a real runtime with chosen plugins, a
# scripted model.
TEST_KIT: dict[str, str] = {
    "fresh_plugin_host": "atomic_agent.testing.runtime_kit",
    "installed_plugin_host": "atomic_agent.testing.runtime_kit",
    "registered_plugin": "atomic_agent.testing.runtime_kit",
    "collected_tools": "atomic_agent.testing.runtime_kit",
    "make_tool_context": "atomic_agent.testing.tool_context_kit",
    "make_runtime_view": "atomic_agent.testing.tool_context_kit",
    "boot_for_test": "atomic_agent.testing.runtime_kit",
    "runtime_for_test": "atomic_agent.testing.runtime_kit",
    "ScriptedProvider": "atomic_agent.testing.scripted_provider",
}

_EXPORTS: dict[str, str] = {**PLUGIN_AUTHORS, **EMBEDDERS, **TEST_KIT}

# names that are modules themselves (read through at call time, so one monkeypatch reaches every caller)
_MODULES = frozenset({"store_clock", "trace_events"})

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"atomic_agent.api has no attribute {name!r}") from None
    imported = importlib.import_module(module)
    value = imported if name in _MODULES else getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
