"""The session backend a command without a runtime uses: the one the runtime would pick.

`sessions ...`, `task create`, `status` and the like read and write the session state
without booting a runtime. When a plugin provides the `session_backend` service (the
`postgresql` plugin when storage.url is set) they must see the same state the fleet does,
not an empty `sessions.sqlite` beside it, so the service is built here from the boot
context alone (state dir, config, plugin host): its factory is given a `CommandView` that
carries what a backend factory reads (config, environ, state dir, the session_backend_kit
service) and nothing else (any other service is unavailable to it: there is no runtime).
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.turns import session_backend_kit
from atomic_agent.turns.session_backend_kit import SESSION_BACKEND_KIT_SERVICE
from atomic_agent.turns.session_backends import DEFAULT_BACKEND, SESSION_BACKEND_SERVICE, SessionBackend

if TYPE_CHECKING:
    from atomic_agent.config.app_config import AppConfig
    from atomic_agent.plugin_host.plugin_host import PluginHost

NO_DEFAULT: Any = object()


class CommandView:
    """The part of a RuntimeView a session backend's factory reads, over a boot context."""

    def __init__(self, state_dir: Path, config: AppConfig, environ: Mapping[str, str] | None = None,
                 backend: Any = None) -> None:
        self._state_dir = state_dir
        self._config = config
        self._environ = dict(os.environ if environ is None else environ)
        self._backend = backend  # the configured session backend a plugin's backend, or None (SQLite)

    @property
    def config(self) -> AppConfig:
        return self._config

    @property
    def state_dir(self) -> Path:
        return self._state_dir

    @property
    def environ(self) -> Mapping[str, str]:
        return self._environ

    def service(self, name: str, default: Any = NO_DEFAULT) -> Any:
        if name == SESSION_BACKEND_KIT_SERVICE:
            return session_backend_kit
        if name == "state_dir":
            return self._state_dir
        if name == SESSION_BACKEND_SERVICE and self._backend is not None:
            return self._backend
        if default is not NO_DEFAULT:
            return default
        raise LookupError(f"service {name!r} is not available to a command that runs without a runtime "
                          "(only config, environ, state_dir, session_backend_kit and session_backend are)")


def configured_backend(state_dir: Path, config: AppConfig, host: PluginHost,
                       environ: Mapping[str, str] | None = None) -> SessionBackend:
    """SQLite, or the backend a plugin's `session_backend` service builds from this config
    (the runtime's choice, made the same way: one provider or none). A backend that cannot be
    built, or two plugins claiming the state, raise SessionStoreError saying why: nothing is
    read from the wrong store. The backend is closed when the process exits."""
    from atomic_agent.sessions.store_errors import SessionStoreError

    try:  # the plugin host's hook relay: the registry itself lives above this package
        specs = [spec for provided in host.hook.register_services() for spec in (provided or ())
                 if getattr(spec, "name", None) == SESSION_BACKEND_SERVICE]
    except Exception as exc:
        raise SessionStoreError(f"the plugins' services could not be listed: {type(exc).__name__}: {exc}") from None
    if not specs:
        return DEFAULT_BACKEND
    if len(specs) > 1:
        raise SessionStoreError(f"{len(specs)} plugins provide the {SESSION_BACKEND_SERVICE!r} service, so none is "
                                "used; disable all but one (plugins.disabled in config.json)")
    try:
        provided = specs[0].factory(CommandView(state_dir, config, environ))
    except SessionStoreError:
        raise
    except Exception as exc:  # a bad storage.url: the plugin's message says how to write it
        raise SessionStoreError(str(exc)) from None
    if provided is None:
        return DEFAULT_BACKEND
    close = getattr(provided, "close", None)
    if callable(close):
        atexit.register(close)
    return provided  # type: ignore[no-any-return]


def command_service(state_dir: Path, config: AppConfig, host: PluginHost, name: str) -> Any:
    """A plugin's service `name` as a command without a runtime sees it (e.g. `shared_database`,
    the fleet's PostgreSQL for the tasks a `task ...` command reads): built by its factory over
    a CommandView whose `session_backend` is the configured one. None when no plugin provides
    it or its factory answers None (the embedded state); SessionStoreError when the configured
    backend cannot be built; a factory that needs more than a CommandView offers raises."""
    built = command_services(state_dir, config, host, name)
    return built[0] if built else None


def command_services(state_dir: Path, config: AppConfig, host: PluginHost, name: str) -> list[Any]:
    """Every provider's service `name` (a `multiple` name, e.g. `shared_state`, what each
    plugin's state is for `storage migrate`), built as command_service builds one; a provider
    answering None is left out."""
    from atomic_agent.sessions.store_errors import SessionStoreError

    try:
        specs = [spec for provided in host.hook.register_services() for spec in (provided or ())
                 if getattr(spec, "name", None) == name]
    except Exception as exc:
        raise SessionStoreError(f"the plugins' services could not be listed: {type(exc).__name__}: {exc}") from None
    if not specs:
        return []
    backend = configured_backend(state_dir, config, host)
    view = CommandView(state_dir, config, backend=None if backend is DEFAULT_BACKEND else backend)
    return [service for service in (spec.factory(view) for spec in specs) if service is not None]
