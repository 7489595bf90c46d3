"""A plugin's own `templates/` and `grammars/` folders are found by the loader after the
user's overrides and before the core's files; two plugins are searched in name order."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from atomic_agent.prompt.prompt_assets import PromptAssets, core_templates_dir
from atomic_agent.testing.runtime_kit import fresh_plugin_host

PLUGIN = '''from atomic_agent.api import hookimpl


@hookimpl
def register_tools(runtime):
    return []
'''


def make_plugin(site: Path, name: str, templates: dict[str, str], grammars: dict[str, str]) -> object:
    package = site / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PLUGIN)
    for folder, files in (("templates", templates), ("grammars", grammars)):
        if files:
            (package / folder).mkdir()
            for file, text in files.items():
                (package / folder / file).write_text(text)
    __import__(name)
    return sys.modules[name]


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


def test_plugin_templates_come_after_the_users_and_before_the_cores(tmp_path: Path, site: Path) -> None:
    host = fresh_plugin_host()
    host.register(make_plugin(site, "aa_assets_one", {"greeting.j2": "plugin {{ who }}\n",
                                                      "stable_prefix_coached.j2": "plugin prefix\n"}, {}), "aa_assets_one")
    state = tmp_path / "state"
    env = PromptAssets.for_host(state, host).env()
    assert env.get_template("greeting.j2").render(who="x") == "plugin x\n"
    (state / "templates").mkdir(parents=True)
    (state / "templates" / "greeting.j2").write_text("user {{ who }}\n")
    env = PromptAssets.for_host(state, host).env()
    assert env.get_template("greeting.j2").render(who="x") == "user x\n"
    # a plugin's file shadows the core's of the same name; the core's is found when neither has it
    assert env.get_template("stable_prefix_coached.j2").render() == "plugin prefix\n"
    core_tail = (core_templates_dir() / "variable_tail_coached.j2").read_text()
    assert env.loader.get_source(env, "variable_tail_coached.j2")[0] == core_tail


def test_plugin_grammars_are_searched_in_plugin_name_order_after_the_user(tmp_path: Path, site: Path) -> None:
    host = fresh_plugin_host()
    host.register(make_plugin(site, "aa_grammar_b", {}, {"shared.gbnf": "from b\n"}), "zz_b")
    host.register(make_plugin(site, "aa_grammar_a", {}, {"shared.gbnf": "from a\n"}), "aa_a")
    assets = PromptAssets.for_host(tmp_path / "state", host)
    assert assets.grammar("shared.gbnf") == "from a\n"
    assert assets.grammar("tool-call.gbnf").startswith(("root", "#"))  # the core's own file
    with pytest.raises(FileNotFoundError, match="missing.gbnf"):
        assets.grammar("missing.gbnf")
    (tmp_path / "state" / "grammars").mkdir(parents=True)
    (tmp_path / "state" / "grammars" / "shared.gbnf").write_text("from the user\n")
    assert PromptAssets.for_host(tmp_path / "state", host).grammar("shared.gbnf") == "from the user\n"


def test_in_process_plugins_without_a_package_contribute_nothing(tmp_path: Path) -> None:
    class Plain:
        pass

    host = fresh_plugin_host()
    host.register(Plain(), "plain")
    assets = PromptAssets.for_host(tmp_path, host)
    assert assets.plugin_template_dirs == () and assets.plugin_grammar_dirs == ()
