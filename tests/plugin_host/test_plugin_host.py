"""Plugin discovery, selection and failure isolation."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from atomic_agent.hook_records import ApprovalCategory
from atomic_agent.hookspecs import hookimpl
from atomic_agent.plugin_host.collect_registrations import collect_records
from atomic_agent.plugin_host.plugin_host import build_plugin_host
from atomic_agent.testing.runtime_kit import fresh_plugin_host, registered_plugin


def ep(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group="atomic_agent")


@pytest.fixture
def plugin_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "good_plugin.py").write_text(
        "from atomic_agent import hookimpl\n"
        "from atomic_agent.api import ApprovalCategory\n"
        "@hookimpl\n"
        "def register_approval_categories():\n"
        "    return [ApprovalCategory('good_cat', 3, 'good')]\n")
    (tmp_path / "raising_plugin.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "misspelled_plugin.py").write_text(
        "from atomic_agent import hookimpl\n@hookimpl\ndef register_toolz():\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_plugins_load_in_name_order(plugin_modules: Path):
    host = fresh_plugin_host([ep("zeta", "good_plugin"), ep("alpha", "raising_plugin")])
    assert list(host.reports) == ["core", "alpha", "zeta"]


def test_plugin_that_raises_on_import_is_reported_and_skipped(plugin_modules: Path, capsys):
    host = fresh_plugin_host([ep("broken", "raising_plugin"), ep("good", "good_plugin")])
    assert host.reports["broken"].status == "failed"
    assert "boom at import" in (host.reports["broken"].error or "")
    assert host.reports["good"].status == "loaded"
    assert "plugin 'broken'" in capsys.readouterr().err


def test_misspelled_hook_is_an_error_not_silence(plugin_modules: Path):
    host = fresh_plugin_host([ep("typo", "misspelled_plugin")])
    report = host.reports["typo"]
    assert report.status == "failed" and "register_toolz" in (report.error or "")
    assert host.pm.get_plugin("typo") is None  # rolled back


def test_plugins_disabled_is_honoured_before_loading(plugin_modules: Path):
    host = fresh_plugin_host([ep("broken", "raising_plugin")], disabled=["broken"])
    assert host.reports["broken"].status == "disabled"
    assert "raising_plugin" not in sys.modules


def test_env_allow_list_loads_only_named_plugins(plugin_modules: Path):
    eps = [ep("a", "good_plugin"), ep("b", "raising_plugin")]
    host = fresh_plugin_host(eps, environ={"ATOMIC_AGENT_PLUGINS": "a"})
    assert host.reports["a"].status == "loaded" and host.reports["b"].status == "disabled"


def test_empty_env_allow_list_loads_none_but_core(plugin_modules: Path):
    host = fresh_plugin_host([ep("a", "good_plugin")], environ={"ATOMIC_AGENT_PLUGINS": ""})
    assert host.reports["a"].status == "disabled"
    assert host.reports["core"].status == "loaded"


def test_core_plugin_cannot_be_disabled():
    host = fresh_plugin_host(disabled=["core"], environ={"ATOMIC_AGENT_PLUGINS": ""})
    assert host.reports["core"].status == "loaded" and host.reports["core"].essential


def test_strict_mode_reraises(plugin_modules: Path):
    with pytest.raises(RuntimeError, match="boom at import"):
        build_plugin_host(environ={"ATOMIC_AGENT_STRICT_PLUGINS": "1"},
                          entry_points_list=[ep("broken", "raising_plugin")])


def test_records_are_stamped_and_sorted_by_name(plugin_modules: Path):
    host = fresh_plugin_host([ep("good", "good_plugin")])
    cats = collect_records(host, "register_approval_categories", ApprovalCategory)
    assert [c.name for c in cats] == sorted(c.name for c in cats)
    assert {c.name: c.plugin for c in cats}["good_cat"] == "good"
    assert {c.name: c.plugin for c in cats}["shell"] == "core"


def test_a_duplicate_name_keeps_the_built_in_record_and_reports_the_other_plugin():
    class Dup:
        @hookimpl
        def register_approval_categories(self):
            return [ApprovalCategory("shell", 1, "again")]

    host = fresh_plugin_host()
    with registered_plugin(host, Dup(), "dup") as report:
        cats = collect_records(host, "register_approval_categories", ApprovalCategory)
        assert {c.name: c.plugin for c in cats}["shell"] == "core"
        assert report.conflicts == ["ApprovalCategory 'shell' is also registered by plugin 'core', whose one is used"]


def test_a_raising_registration_hook_skips_only_that_plugin(capsys):
    class Raises:
        @hookimpl
        def register_approval_categories(self):
            raise ValueError("nope")

    host = fresh_plugin_host()
    with registered_plugin(host, Raises(), "raises"):
        cats = collect_records(host, "register_approval_categories", ApprovalCategory)
        assert len(cats) == 10
        assert host.reports["raises"].status == "failed"
    assert "failed in register_approval_categories" in capsys.readouterr().err


def test_wrong_record_type_is_reported():
    class Wrong:
        @hookimpl
        def register_approval_categories(self):
            return ["shell"]

    host = fresh_plugin_host()
    with registered_plugin(host, Wrong(), "wrong"):
        collect_records(host, "register_approval_categories", ApprovalCategory)
        assert "expected ApprovalCategory" in (host.reports["wrong"].error or "")


def test_a_renamed_built_in_plugin_still_answers_to_its_former_name():
    from atomic_agent.plugin_host.plugin_host import is_selected

    assert is_selected("serve", None, ["http"]) == (False, "listed in plugins.disabled")
    assert is_selected("serve", {"http"}, [])[0] is True
    assert is_selected("serve", {"os"}, [])[0] is False
    assert is_selected("http", None, ["serve"])[0] is True  # only old -> new, never the reverse
