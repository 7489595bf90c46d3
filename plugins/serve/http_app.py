"""The starlette application of `serve`: the request guard (Host, Origin, body type, CORS),
bearer auth, routes, errors in the OpenAI envelope."""

from __future__ import annotations

import sys
import traceback
from typing import Any

from atomic_agent.plugins.serve.error_envelope import ApiError, envelope_response, storage_unavailable_error


def build_app(ctx: Any) -> Any:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.routing import Route

    from atomic_agent.plugins.serve.bearer_auth import BearerAuth
    from atomic_agent.plugins.serve.origin_policy import OriginPolicy
    from atomic_agent.plugins.serve.request_guard import RequestGuard
    from atomic_agent.plugins.serve.route_approvals import answer_approval, list_approvals
    from atomic_agent.plugins.serve.route_capabilities import capabilities
    from atomic_agent.plugins.serve.route_chat_completions import chat_completions, list_models
    from atomic_agent.plugins.serve.route_events import events
    from atomic_agent.plugins.serve.route_mcp import add_servers, approve_tools, list_servers, remove_server
    from atomic_agent.plugins.serve.route_memory import memory_embeddings, memory_phases, note_links
    from atomic_agent.plugins.serve.route_sessions import (
        create_session,
        delete_session,
        get_session,
        list_sessions,
        search_sessions,
    )
    from atomic_agent.plugins.serve.route_steer import delete_steer, get_steer, post_steer
    from atomic_agent.plugins.serve.route_tasks import (
        cancel_task,
        create_task,
        get_task,
        list_tasks,
        run_task,
        task_history,
    )
    from atomic_agent.plugins.serve.route_telegram import telegram_control, telegram_status
    from atomic_agent.plugins.serve.route_webhooks import receive_webhook

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/api/capabilities", capabilities, methods=["GET"]),
        Route("/api/sessions", list_sessions, methods=["GET"]),
        Route("/api/sessions", create_session, methods=["POST"]),
        Route("/api/sessions/search", search_sessions, methods=["GET"]),  # before {session_id}: it would match
        Route("/api/sessions/{session_id}", get_session, methods=["GET"]),
        Route("/api/sessions/{session_id}", delete_session, methods=["DELETE"]),
        Route("/api/sessions/{session_id}/steer", post_steer, methods=["POST"]),
        Route("/api/sessions/{session_id}/steer", get_steer, methods=["GET"]),
        Route("/api/sessions/{session_id}/steer", delete_steer, methods=["DELETE"]),
        Route("/api/events", events, methods=["GET"]),
        Route("/api/approvals", list_approvals, methods=["GET"]),
        Route("/api/approvals/{approval_id}", answer_approval, methods=["POST"]),
        Route("/api/telegram", telegram_status, methods=["GET"]),
        Route("/api/telegram", telegram_control, methods=["POST"]),
        Route("/api/mcp/servers", list_servers, methods=["GET"]),
        Route("/api/mcp/servers", add_servers, methods=["POST"]),
        Route("/api/mcp/servers/{name}", remove_server, methods=["DELETE"]),
        Route("/api/mcp/servers/{name}/approve", approve_tools, methods=["POST"]),
        Route("/api/memory/phases", memory_phases, methods=["GET"]),
        Route("/api/memory/embeddings", memory_embeddings, methods=["GET"]),
        Route("/api/memory/notes/{note_id}/links", note_links, methods=["GET"]),
        Route("/api/tasks", list_tasks, methods=["GET"]),
        Route("/api/tasks", create_task, methods=["POST"]),
        Route("/api/tasks/{task_id}", get_task, methods=["GET"]),
        Route("/api/tasks/{task_id}", cancel_task, methods=["DELETE"]),
        Route("/api/tasks/{task_id}/run", run_task, methods=["POST"]),
        Route("/api/tasks/{task_id}/history", task_history, methods=["GET"]),
        Route("/api/webhooks/{name}", receive_webhook, methods=["POST"]),
    ]

    async def api_error(_request: Any, exc: Exception) -> Any:
        assert isinstance(exc, ApiError)
        return envelope_response(exc)

    async def http_error(request: Any, exc: Exception) -> Any:
        assert isinstance(exc, HTTPException)
        message = {404: f"no route {request.method} {request.url.path}",
                   405: f"{request.method} is not allowed on {request.url.path}"}.get(exc.status_code, str(exc.detail))
        code = "not_found" if exc.status_code == 404 else None
        return envelope_response(ApiError(exc.status_code, message, code=code))

    async def crash(_request: Any, exc: Exception) -> Any:
        from atomic_agent.api import SessionStoreError

        traceback.print_exception(exc, file=sys.stderr)
        if isinstance(exc, SessionStoreError):  # the route raised before its response: nothing was acknowledged
            return envelope_response(storage_unavailable_error(exc))
        return envelope_response(ApiError(500, f"internal error: {type(exc).__name__}: {exc}", "server_error",
                                          "internal_error"))

    settings = ctx.settings
    policy = OriginPolicy.of(settings.allowed_hosts, settings.allowed_origins, keyed=bool(settings.api_key))
    # the guard runs first: a preflight carries no credentials, a foreign page gets no further
    middleware = [Middleware(RequestGuard, policy=policy)]
    if settings.api_key:
        middleware.append(Middleware(BearerAuth, api_key=settings.api_key))
    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={ApiError: api_error, HTTPException: http_error, Exception: crash})
    app.state.ctx = ctx
    return app
