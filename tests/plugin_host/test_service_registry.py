"""Services plugins provide to each other: one owner per name (two providers: both named,
neither wins), built lazily and once, a raising factory isolated and reported, the core's
names reserved, closes run for built services only, newest first."""

from __future__ import annotations

from typing import Any

import pytest

from atomic_agent.hook_records import ServiceSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.plugin_host.service_registry import (
    ServiceConflictError,
    ServiceNotFoundError,
    ServiceRegistry,
    ServiceUnavailableError,
)
from atomic_agent.testing.runtime_kit import fresh_plugin_host


class Provides:
    def __init__(self, *specs: ServiceSpec) -> None:
        self.specs = specs

    @hookimpl
    def register_services(self) -> list[ServiceSpec]:
        return list(self.specs)


class Raises:
    @hookimpl
    def register_services(self) -> list[ServiceSpec]:
        raise RuntimeError("no services today")


def host_with(**plugins: object) -> Any:
    host = fresh_plugin_host()
    for name, plugin in plugins.items():
        host.register(plugin, name)
    return host


def test_two_providers_of_one_name_are_both_named_and_neither_wins() -> None:
    built: list[str] = []
    host = host_with(alpha=Provides(ServiceSpec("shared.store", lambda rt: built.append("alpha") or "a")),
                     beta=Provides(ServiceSpec("shared.store", lambda rt: built.append("beta") or "b")))
    registry = ServiceRegistry(host)
    with pytest.raises(ServiceConflictError) as caught:
        registry.get("shared.store", None)
    assert "'alpha'" in str(caught.value) and "'beta'" in str(caught.value)
    assert built == []
    for name in ("alpha", "beta"):
        assert host.reports[name].status == "failed" and "shared.store" in (host.reports[name].error or "")


def test_a_service_is_built_on_first_ask_and_only_once() -> None:
    built: list[object] = []
    host = host_with(owner=Provides(ServiceSpec("counter", lambda rt: built.append(rt) or {"n": 0})))
    registry = ServiceRegistry(host)
    assert built == []
    first = registry.get("counter", "the-runtime")
    assert registry.get("counter", "the-runtime") is first
    assert built == ["the-runtime"] and registry.provider("counter") == "owner"


def test_a_raising_factory_is_reported_and_the_other_services_still_work() -> None:
    calls: list[int] = []

    def explode(rt: object) -> object:
        calls.append(1)
        raise OSError("disk gone")

    host = host_with(bad=Provides(ServiceSpec("bad.svc", explode)), good=Provides(ServiceSpec("good.svc", lambda rt: 7)))
    registry = ServiceRegistry(host)
    for _ in range(2):
        with pytest.raises(ServiceUnavailableError, match="disk gone"):
            registry.get("bad.svc", None)
    assert calls == [1]  # reported once, not rebuilt on every ask
    assert host.reports["bad"].status == "failed" and "disk gone" in (host.reports["bad"].error or "")
    assert registry.get("good.svc", None) == 7 and host.reports["good"].status == "loaded"


def test_a_raising_register_services_is_isolated_to_its_plugin() -> None:
    host = host_with(broken=Raises(), fine=Provides(ServiceSpec("fine.svc", lambda rt: "ok")))
    registry = ServiceRegistry(host)
    assert registry.get("fine.svc", None) == "ok"
    assert host.reports["broken"].status == "failed"
    assert "register_services" in (host.reports["broken"].error or "")


def test_core_service_names_are_reserved() -> None:
    host = host_with(grabby=Provides(ServiceSpec("approval_gate", lambda rt: "not the gate")))
    registry = ServiceRegistry(host)
    assert "approval_gate" not in registry.names
    assert "the core" in (host.reports["grabby"].error or "")


def test_unknown_service_is_a_key_error_naming_what_exists() -> None:
    registry = ServiceRegistry(host_with(owner=Provides(ServiceSpec("known", lambda rt: 1))))
    with pytest.raises(KeyError) as caught:
        registry.get("unknown", None)
    assert isinstance(caught.value, ServiceNotFoundError) and "known" in str(caught.value)


def test_a_service_that_needs_itself_is_refused() -> None:
    registry: ServiceRegistry

    def loop(rt: object) -> object:
        return registry.get("loop", rt)

    registry = ServiceRegistry(host_with(owner=Provides(ServiceSpec("loop", loop))))
    with pytest.raises(ServiceUnavailableError, match="depends on itself"):
        registry.get("loop", None)


async def test_close_runs_for_built_services_newest_first_and_survives_a_failing_close() -> None:
    closed: list[str] = []

    async def close_async(service: str) -> None:
        closed.append(service)

    def close_raises(service: str) -> None:
        closed.append(service)
        raise RuntimeError("close failed")

    host = host_with(owner=Provides(ServiceSpec("first", lambda rt: "first", close=close_async),
                                    ServiceSpec("second", lambda rt: "second", close=close_raises),
                                    ServiceSpec("never", lambda rt: "never", close=close_async)))
    registry = ServiceRegistry(host)
    registry.get("first", None)
    registry.get("second", None)
    await registry.close()
    assert closed == ["second", "first"]


async def test_after_close_built_services_stay_readable_and_nothing_new_is_built() -> None:
    closes: list[str] = []
    host = host_with(owner=Provides(ServiceSpec("kept", lambda rt: {"total": 3}, close=lambda s: closes.append("kept")),
                                    ServiceSpec("late", lambda rt: "late")))
    registry = ServiceRegistry(host)
    kept = registry.get("kept", None)
    await registry.close()
    await registry.close()
    assert closes == ["kept"] and registry.get("kept", None) is kept
    with pytest.raises(ServiceUnavailableError, match="closed"):
        registry.get("late", None)


def test_a_name_every_provider_marks_multiple_is_served_by_all_of_them_in_plugin_order() -> None:
    closes: list[str] = []
    host = host_with(beta=Provides(ServiceSpec("sink", lambda rt: "b", multiple=True, close=closes.append)),
                     alpha=Provides(ServiceSpec("sink", lambda rt: "a", multiple=True, close=closes.append)),
                     broken=Provides(ServiceSpec("sink", lambda rt: 1 / 0, multiple=True)))
    registry = ServiceRegistry(host)
    assert registry.get_all("sink", None) == ["a", "b"]  # the broken one is left out and reported
    assert host.reports["broken"].status == "failed" and host.reports["alpha"].status == "loaded"
    with pytest.raises(ServiceConflictError, match="runtime.services"):
        registry.get("sink", None)
    assert registry.get_all("nobody.provides", None) == []


async def test_each_provider_of_a_multiple_name_is_closed() -> None:
    closes: list[str] = []
    host = host_with(a=Provides(ServiceSpec("sink", lambda rt: "a", multiple=True, close=closes.append)),
                     b=Provides(ServiceSpec("sink", lambda rt: "b", multiple=True, close=closes.append)))
    registry = ServiceRegistry(host)
    registry.get_all("sink", None)
    await registry.close()
    assert sorted(closes) == ["a", "b"]


def test_one_provider_of_a_multiple_name_answers_service_and_a_single_owner_mixed_in_conflicts() -> None:
    alone = ServiceRegistry(host_with(a=Provides(ServiceSpec("sink", lambda rt: "a", multiple=True))))
    assert alone.get("sink", None) == "a" and alone.get_all("sink", None) == ["a"]
    mixed = ServiceRegistry(host_with(a=Provides(ServiceSpec("sink", lambda rt: "a", multiple=True)),
                                      b=Provides(ServiceSpec("sink", lambda rt: "b"))))
    with pytest.raises(ServiceConflictError):
        mixed.get_all("sink", None)


def test_every_service_error_is_a_service_unavailable_error() -> None:
    assert issubclass(ServiceNotFoundError, ServiceUnavailableError)
    assert issubclass(ServiceConflictError, ServiceUnavailableError)
