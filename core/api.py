"""The supported public surface of atomic-agent, grouped by who it is for: PLUGIN_AUTHORS
(hooks, records, tools, providers, config, storage, traces), EMBEDDERS (hosting the
runtime: turns, sessions, remote approvals, graceful stop, failure codes) and TEST_KIT
(hosts, a tool context, a real runtime with chosen plugins, a scripted model). Every name
is importable from this one module either way.

Plugins — built-in ones included — import only from here (a test enforces it), so the
internals can move without breaking anyone. docs/plugin-api.md says what each name is for;
`python -m tests.api_usage` shows which plugins use it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names for the type checker (a test keeps this block and _EXPORTS equal)
    from atomic_agent.agent.agent_loop import TurnResult as TurnResult
    from atomic_agent.agent.invoke_tool import compress_result as compress_result
    from atomic_agent.agent.invoke_tool import invoke_tool as invoke_tool
    from atomic_agent.approval import approval_gate as approval_gate
    from atomic_agent.approval.approval_answers import ApprovalAnswer as ApprovalAnswer
    from atomic_agent.approval.pending_approvals import ApprovalNotPendingError as ApprovalNotPendingError
    from atomic_agent.approval.pending_approvals import InvalidDecisionError as InvalidDecisionError
    from atomic_agent.approval.pending_approvals import PendingApprovals as PendingApprovals
    from atomic_agent.approval.stdin_approver import stdin_approver as stdin_approver
    from atomic_agent.cli.cli_state import current_cli_state as current_cli_state
    from atomic_agent.cli.cli_state import fail as fail
    from atomic_agent.cli.cli_state import parse_json_object as parse_json_object
    from atomic_agent.cli.cli_state import print_json as print_json
    from atomic_agent.cli.cli_state import print_table as print_table
    from atomic_agent.cli.cli_state import runs_without_config as runs_without_config
    from atomic_agent.config import config_file as config_file
    from atomic_agent.config import dotenv_file as dotenv_file
    from atomic_agent.config.atomic_write import write_atomic as write_atomic
    from atomic_agent.config.config_errors import ConfigError as ConfigError
    from atomic_agent.config.config_fields import int_field as int_field
    from atomic_agent.config.config_fields import value_field as value_field
    from atomic_agent.config.raw_config import read_raw_config as read_raw_config
    from atomic_agent.config.state_dir import resolve_cache_dir as resolve_cache_dir
    from atomic_agent.hook_records import TUI_PANEL_SERVICE as TUI_PANEL_SERVICE
    from atomic_agent.hook_records import ApprovalCategory as ApprovalCategory
    from atomic_agent.hook_records import Channel as Channel
    from atomic_agent.hook_records import ChannelSpec as ChannelSpec
    from atomic_agent.hook_records import ConfigBlock as ConfigBlock
    from atomic_agent.hook_records import DoctorFinding as DoctorFinding
    from atomic_agent.hook_records import ExchangePair as ExchangePair
    from atomic_agent.hook_records import MemoryPhase as MemoryPhase
    from atomic_agent.hook_records import PromptSection as PromptSection
    from atomic_agent.hook_records import ProviderCapabilities as ProviderCapabilities
    from atomic_agent.hook_records import ProviderKind as ProviderKind
    from atomic_agent.hook_records import ResourceClass as ResourceClass
    from atomic_agent.hook_records import ServiceSpec as ServiceSpec
    from atomic_agent.hook_records import TickSpec as TickSpec
    from atomic_agent.hook_records import Tier as Tier
    from atomic_agent.hook_records import ToolContext as ToolContext
    from atomic_agent.hook_records import ToolResult as ToolResult
    from atomic_agent.hook_records import ToolSpec as ToolSpec
    from atomic_agent.hook_records import TuiContext as TuiContext
    from atomic_agent.hook_records import TuiPanel as TuiPanel
    from atomic_agent.hook_records import TurnDigest as TurnDigest
    from atomic_agent.hook_records import TurnStart as TurnStart
    from atomic_agent.hookspecs import hookimpl as hookimpl
    from atomic_agent.llm.provider_protocol import Completion as Completion
    from atomic_agent.llm.provider_protocol import CompletionRequest as CompletionRequest
    from atomic_agent.llm.provider_protocol import EmbeddingUnavailable as EmbeddingUnavailable
    from atomic_agent.llm.provider_protocol import ProviderError as ProviderError
    from atomic_agent.llm.provider_protocol import ProviderUnavailableError as ProviderUnavailableError
    from atomic_agent.llm.provider_protocol import TextProvider as TextProvider
    from atomic_agent.llm.provider_protocol import slot_affinity as slot_affinity
    from atomic_agent.plugin_host.collect_registrations import call_each_plugin as call_each_plugin
    from atomic_agent.plugin_host.service_registry import ServiceConflictError as ServiceConflictError
    from atomic_agent.plugin_host.service_registry import ServiceUnavailableError as ServiceUnavailableError
    from atomic_agent.prompt.build_prompt import estimate_tokens as estimate_tokens
    from atomic_agent.prompt.capped_lines import capped_lines as capped_lines
    from atomic_agent.prompt.describe_tool import describe_full as describe_full
    from atomic_agent.providers import llm_config as llm_config
    from atomic_agent.providers.fallback_chain import resolve_fallback_chain as resolve_fallback_chain
    from atomic_agent.reliability import failure_taxonomy as failure_taxonomy
    from atomic_agent.runtime import trace_replay as trace_replay
    from atomic_agent.runtime.runtime import create_runtime as create_runtime
    from atomic_agent.runtime.runtime_host import RuntimeHost as RuntimeHost
    from atomic_agent.runtime.runtime_view import RuntimeView as RuntimeView
    from atomic_agent.sessions.session_database import SessionRepository as SessionRepository
    from atomic_agent.sessions.session_store import SessionNotFoundError as SessionNotFoundError
    from atomic_agent.sessions.session_store import SessionStoreError as SessionStoreError
    from atomic_agent.storage import sqlite_migrations as sqlite_migrations
    from atomic_agent.storage import store_clock as store_clock
    from atomic_agent.storage.sqlite_file import Durability as Durability
    from atomic_agent.storage.sqlite_file import open_sqlite_read_only as open_sqlite_read_only
    from atomic_agent.storage.sqlite_store import SqliteStore as SqliteStore
    from atomic_agent.subprocess_env import child_environment as child_environment
    from atomic_agent.testing.runtime_kit import boot_for_test as boot_for_test
    from atomic_agent.testing.runtime_kit import collected_tools as collected_tools
    from atomic_agent.testing.runtime_kit import fresh_plugin_host as fresh_plugin_host
    from atomic_agent.testing.runtime_kit import installed_plugin_host as installed_plugin_host
    from atomic_agent.testing.runtime_kit import registered_plugin as registered_plugin
    from atomic_agent.testing.runtime_kit import runtime_for_test as runtime_for_test
    from atomic_agent.testing.scripted_provider import ScriptedProvider as ScriptedProvider
    from atomic_agent.testing.tool_context_kit import make_runtime_view as make_runtime_view
    from atomic_agent.testing.tool_context_kit import make_tool_context as make_tool_context
    from atomic_agent.tools.tool_registry import args_errors as args_errors
    from atomic_agent.tracing import trace_events as trace_events
    from atomic_agent.tracing import trace_files as trace_files
    from atomic_agent.turns.admissible_text import InvalidTextError as InvalidTextError
    from atomic_agent.turns.admissible_text import text_problem as text_problem
    from atomic_agent.turns.durable_steering import SteerAlreadyTakenError as SteerAlreadyTakenError
    from atomic_agent.turns.graceful_stop import RuntimeStoppingError as RuntimeStoppingError
    from atomic_agent.turns.graceful_stop import TurnParkedError as TurnParkedError
    from atomic_agent.turns.request_keys import DuplicateRequestError as DuplicateRequestError
    from atomic_agent.turns.request_keys import RequestKey as RequestKey
    from atomic_agent.turns.session_backends import open_session_store as open_session_store
    from atomic_agent.turns.steering_inbox import MAX_PENDING_STEERS as MAX_PENDING_STEERS
    from atomic_agent.turns.steering_inbox import SteerOutcome as SteerOutcome
    from atomic_agent.turns.turn_controller import SubmissionCancelledError as SubmissionCancelledError
    from atomic_agent.turns.turn_execution import UnknownToolChoiceError as UnknownToolChoiceError
    from atomic_agent.turns.turn_owner import OwnerLease as OwnerLease

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
    "TUI_PANEL_SERVICE": "atomic_agent.hook_records",
    "TuiContext": "atomic_agent.hook_records",
    "TuiPanel": "atomic_agent.hook_records",
    "ServiceUnavailableError": "atomic_agent.plugin_host.service_registry",
    "ServiceConflictError": "atomic_agent.plugin_host.service_registry",
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
    "slot_affinity": "atomic_agent.llm.provider_protocol",
    "Completion": "atomic_agent.llm.provider_protocol",
    "CompletionRequest": "atomic_agent.llm.provider_protocol",
    "ProviderError": "atomic_agent.llm.provider_protocol",
    "ProviderUnavailableError": "atomic_agent.llm.provider_protocol",
    "EmbeddingUnavailable": "atomic_agent.llm.provider_protocol",
    "llm_config": "atomic_agent.providers.llm_config",
    "resolve_fallback_chain": "atomic_agent.providers.fallback_chain",
    # commands and config
    "current_cli_state": "atomic_agent.cli.cli_state",
    "fail": "atomic_agent.cli.cli_state",
    "parse_json_object": "atomic_agent.cli.cli_state",
    "runs_without_config": "atomic_agent.cli.cli_state",
    "print_json": "atomic_agent.cli.cli_state",
    "print_table": "atomic_agent.cli.cli_state",
    "int_field": "atomic_agent.config.config_fields",
    "value_field": "atomic_agent.config.config_fields",
    "read_raw_config": "atomic_agent.config.raw_config",
    "config_file": "atomic_agent.config.config_file",
    "dotenv_file": "atomic_agent.config.dotenv_file",
    "write_atomic": "atomic_agent.config.atomic_write",
    "resolve_cache_dir": "atomic_agent.config.state_dir",
    # SQLite state files (core/storage): a store (opened, migrated, written, refused in its own
    # words), read-only inspection, one clock
    "SqliteStore": "atomic_agent.storage.sqlite_store",
    "Durability": "atomic_agent.storage.sqlite_file",
    "open_sqlite_read_only": "atomic_agent.storage.sqlite_file",
    "sqlite_migrations": "atomic_agent.storage.sqlite_migrations",
    "store_clock": "atomic_agent.storage.store_clock",
    "OwnerLease": "atomic_agent.turns.turn_owner",
    # prompt pieces a sub-call plugin renders with (reflection, links, rewrite)
    "estimate_tokens": "atomic_agent.prompt.build_prompt",
    "capped_lines": "atomic_agent.prompt.capped_lines",
    # traces, for a plugin that reads them: the files, event names, replay (the stable prefix to
    # compare hashes with, and a rerun of a whole session against today's prompt builder)
    "trace_files": "atomic_agent.tracing.trace_files",
    "trace_events": "atomic_agent.tracing.trace_events",
    "trace_replay": "atomic_agent.runtime.trace_replay",
}

# Hosting the runtime (serve, the sidecar, a channel, an app that embeds atomic-agent):
# turns, sessions, approvals answered remotely, steering, graceful stop, failure codes.
EMBEDDERS: dict[str, str] = {
    # the runtime and its turns
    "create_runtime": "atomic_agent.runtime.runtime",
    "RuntimeHost": "atomic_agent.runtime.runtime_host",
    "TurnResult": "atomic_agent.agent.agent_loop",
    "UnknownToolChoiceError": "atomic_agent.turns.turn_execution",
    # sessions
    "SessionRepository": "atomic_agent.sessions.session_database",
    "open_session_store": "atomic_agent.turns.session_backends",
    "SessionNotFoundError": "atomic_agent.sessions.session_store",
    "SessionStoreError": "atomic_agent.sessions.session_store",
    # approvals: answers, grants, bindings, audit, level changes, remote prompts, the terminal prompt
    "ApprovalAnswer": "atomic_agent.approval.approval_answers",
    "approval_gate": "atomic_agent.approval.approval_gate",
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
    "text_problem": "atomic_agent.turns.admissible_text",
    "RuntimeStoppingError": "atomic_agent.turns.graceful_stop",
    "TurnParkedError": "atomic_agent.turns.graceful_stop",
    "DuplicateRequestError": "atomic_agent.turns.request_keys",
    "RequestKey": "atomic_agent.turns.request_keys",
    # failure codes a host reports
    "failure_taxonomy": "atomic_agent.reliability.failure_taxonomy",
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
_MODULES = frozenset({"approval_gate", "config_file", "dotenv_file", "failure_taxonomy", "llm_config", "sqlite_migrations", "store_clock", "trace_events", "trace_files", "trace_replay"})

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
