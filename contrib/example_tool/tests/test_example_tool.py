"""Tests a third party would keep next to their plugin; they use only the public kit."""

from pathlib import Path

import atomic_agent.contrib.example_tool as example_tool
from atomic_agent.api import collected_tools, make_runtime_view, make_tool_context


def test_plugin_is_installed(plugin_host, register_plugin):
    report = register_plugin(example_tool, "example_tool")
    assert report.status == "loaded"
    assert "register_tools" in report.hooks


def test_registers_word_count_as_rare_pure_read(plugin_host, register_plugin, tmp_path: Path):
    register_plugin(example_tool, "example_tool")
    tools = {t.name: t for t in collected_tools(plugin_host, make_runtime_view(tmp_path / "state"))}
    spec = tools["example.word_count"]
    assert spec.plugin == "example_tool"
    assert spec.resource_class.value == "pure_read"
    assert spec.tier.value == "rare"


async def test_word_count_counts(tmp_path: Path):
    result = await example_tool.count_words({"text": "one two\nthree"}, make_tool_context(tmp_path))
    assert result.status == "ok"
    assert result.details == {"lines": 2, "words": 3, "characters": 13}


async def test_word_count_rejects_non_string(tmp_path: Path):
    result = await example_tool.count_words({"text": 3}, make_tool_context(tmp_path))
    assert result.status == "error" and "must be a string" in result.summary
