"""The os plugin registers every fs tool with a structured schema, tier, class and example."""

from __future__ import annotations

import json

import pytest

import atomic_agent.plugins.os as os_plugin
from atomic_agent.api import (
    ResourceClass,
    Tier,
    args_errors,
    collected_tools,
    fresh_plugin_host,
    make_runtime_view,
    registered_plugin,
)

FS_TOOLS = {
    "os.fs.read": Tier.FREQUENT, "os.fs.write": Tier.FREQUENT, "os.fs.edit": Tier.FREQUENT,
    "os.fs.list": Tier.FREQUENT, "os.fs.glob": Tier.FREQUENT, "os.fs.grep": Tier.FREQUENT,
    "os.fs.locate_project": Tier.FREQUENT, "os.fs.hash": Tier.RARE, "os.fs.diff": Tier.RARE,
    "os.fs.patch": Tier.RARE, "os.fs.trash": Tier.RARE, "os.fs.archive.list": Tier.RARE,
    "os.fs.archive.read_entry": Tier.RARE, "os.fs.archive.extract": Tier.RARE, "os.fs.read_document": Tier.RARE,
}
GATED = {"os.fs.write", "os.fs.edit", "os.fs.patch", "os.fs.trash", "os.fs.archive.extract"}


@pytest.fixture
def fs_specs(tmp_path):
    host = fresh_plugin_host()
    with registered_plugin(host, os_plugin, "os"):
        specs = collected_tools(host, make_runtime_view(tmp_path))
    return {s.name: s for s in specs if s.name.startswith("os.fs.")}


def test_every_fs_tool_is_registered_by_the_os_plugin_with_its_tier(fs_specs) -> None:
    assert {name: spec.tier for name, spec in fs_specs.items()} == FS_TOOLS
    assert {spec.plugin for spec in fs_specs.values()} == {"os"}


def test_reads_are_pure_read_and_mutations_are_gated_with_a_category(fs_specs) -> None:
    for name, spec in fs_specs.items():
        if name in GATED:
            assert spec.resource_class is ResourceClass.APPROVAL_GATED and spec.approval_category, name
        else:
            assert spec.resource_class is ResourceClass.PURE_READ and spec.approval_category is None, name


def test_every_fs_tool_ships_a_structured_args_schema(fs_specs) -> None:
    for name, spec in fs_specs.items():
        schema = spec.args_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False, name
        assert all("description" in p or "enum" in p for p in schema["properties"].values()), name
        assert args_errors(schema, {"unexpected": 1}), name


def test_every_example_is_a_valid_call_of_its_tool(fs_specs) -> None:
    for name, spec in fs_specs.items():
        example = json.loads(spec.example)
        assert example["tool"] == name and not args_errors(spec.args_schema, example["args"]), name


def test_summaries_stay_small_for_the_prompt(fs_specs) -> None:
    assert all(len(spec.summary) <= 110 for spec in fs_specs.values())


def test_a_missing_sub_package_is_tolerated(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(os_plugin, "SUBPACKAGES", ("fs", "not_built_yet"))
    assert len(os_plugin.register_tools(make_runtime_view(tmp_path))) == len(FS_TOOLS)


def test_a_broken_sub_package_is_reported_and_skipped(tmp_path, monkeypatch, capsys) -> None:
    real = os_plugin.importlib.import_module

    def flaky(name: str):
        if name.endswith(".shell"):
            raise SyntaxError("bad code")
        return real(name)

    monkeypatch.setattr(os_plugin, "SUBPACKAGES", ("fs", "shell"))
    monkeypatch.setattr(os_plugin.importlib, "import_module", flaky)
    specs = os_plugin.register_tools(make_runtime_view(tmp_path))
    assert {s.name for s in specs} == set(FS_TOOLS)
    assert "skipped os.shell tools (SyntaxError: bad code)" in capsys.readouterr().err


def test_projects_config_block_is_registered(tmp_path) -> None:
    from atomic_agent.runtime.boot_context import boot

    (tmp_path / "config.json").write_text(json.dumps({"projects": {"roots": ["~/code"]}}))
    host = fresh_plugin_host()
    with registered_plugin(host, os_plugin, "os"):
        ctx = boot(tmp_path, environ={}, host=host)
    assert ctx.config.block("projects").roots == ("~/code",)
