"""Where the runtime finds prompt templates and GBNF grammars, in one search order:

1. the user's overrides, `<state>/templates/` and `<state>/grammars/`;
2. every plugin's own `templates/` and `grammars/` folder beside its code (plugin name order);
3. the core's `atomic_agent.templates` and `atomic_agent.grammars` package data.

A plugin that is a package (its module is an `__init__.py`) contributes the folders next to
it; in-process plugins without a file contribute nothing. Plugins are taken in name order,
so which folder wins between two plugins never depends on load order.

Plugins reach it as the `prompt_assets` service: `.env()` is the Jinja environment their
templates render with (`make_prompt_env`, the one factory: StrictUndefined, no autoescape),
`.grammar(name)` the text of a grammar file.

Compiled templates are kept in the per-user cache (`<cache>/templates/`), shared by every
state dir like Python's own bytecode: a new state dir starts without compiling the prompt
templates again. Jinja keys each one by its file's path and checks its source's checksum, so
an edited or overriding template is compiled afresh; the folder's name carries the Jinja
version and this environment's options, which the compiled code depends on and Jinja's key
does not cover. Each entry is signed with a per-user key and loaded only when the signature
verifies (`signed_bytecode_cache`): a compiled template planted in the cache never runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TypedDict

TEMPLATES = "templates"
GRAMMARS = "grammars"
TEMPLATE_BYTECODE = "templates"  # compiled prompt templates, under the per-user cache
CORE_GRAMMARS_PACKAGE = "atomic_agent.grammars"


def plugin_asset_dirs(host: Any, folder: str) -> list[Path]:
    """Each plugin's `folder` (templates or grammars) beside its package, in plugin name order."""
    found = []
    for _name, plugin in sorted(host.pm.list_name_plugin(), key=lambda pair: str(pair[0])):
        source = getattr(plugin, "__file__", None)
        if not source or Path(source).name != "__init__.py":
            continue
        candidate = Path(source).parent / folder
        if candidate.is_dir():
            found.append(candidate)
    return found


def core_templates_dir() -> Path:
    return Path(str(resources.files("atomic_agent.templates")))


# how every prompt template is parsed and rendered (the compiled code depends on these)
class EnvOptions(TypedDict):
    keep_trailing_newline: bool
    trim_blocks: bool
    lstrip_blocks: bool
    autoescape: bool


ENV_OPTIONS: EnvOptions = {"keep_trailing_newline": True, "trim_blocks": True, "lstrip_blocks": True,
                           "autoescape": False}


def make_prompt_env(override_dirs: Sequence[Path] = (), plugin_dirs: Sequence[Path] = (),
                    cache_dir: Path | None = None) -> Any:
    """The one Jinja environment factory. With `cache_dir` (the per-user cache), compiled
    templates are kept under it: a start-up then skips compiling the prompt templates, about
    20-25 ms of `run`."""
    import jinja2

    searched = [*override_dirs, *plugin_dirs]
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader([str(d) for d in searched if d.is_dir()])]
    loaders.append(jinja2.FileSystemLoader(str(core_templates_dir())))
    from atomic_agent.prompt.describe_tool import first_clause
    from atomic_agent.prompt.reference_data import quote_continuation, quote_lines

    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache(cache_dir) if cache_dir is not None else None,
        **ENV_OPTIONS,
    )
    env.filters["first_clause"] = first_clause
    env.filters["quote_lines"] = quote_lines
    env.filters["quote_continuation"] = quote_continuation
    return env


def template_cache_dir(cache_dir: Path) -> Path:
    """Where compiled templates go: one folder per Jinja version and environment options."""
    import hashlib

    import jinja2

    options = hashlib.sha256(repr(sorted(ENV_OPTIONS.items())).encode())
    return cache_dir / TEMPLATE_BYTECODE / f"jinja-{jinja2.__version__}-{options.hexdigest()[:12]}"


def _bytecode_cache(cache_dir: Path) -> Any:
    """The signed cache of compiled templates (`signed_bytecode_cache`), or None when the
    cache or its key cannot be used: that only costs the compile."""
    from atomic_agent.prompt.signed_bytecode_cache import signed_bytecode_cache, template_key

    folder = template_cache_dir(cache_dir)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    key = template_key(cache_dir)
    return signed_bytecode_cache(folder, key) if key is not None else None


class PromptAssets:
    def __init__(self, state_dir: Path, plugin_template_dirs: Sequence[Path] = (),
                 plugin_grammar_dirs: Sequence[Path] = (), cache_dir: Path | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.plugin_template_dirs = tuple(plugin_template_dirs)
        self.plugin_grammar_dirs = tuple(plugin_grammar_dirs)
        self.cache_dir = cache_dir  # None: templates are compiled at every start
        self._env: Any = None

    @classmethod
    def for_host(cls, state_dir: Path, host: Any, cache_dir: Path | None = None) -> PromptAssets:
        return cls(state_dir, plugin_asset_dirs(host, TEMPLATES), plugin_asset_dirs(host, GRAMMARS), cache_dir)

    def env(self) -> Any:
        """The Jinja environment (built once): user overrides > plugin templates > the core's."""
        if self._env is None:
            self._env = make_prompt_env([self.state_dir / TEMPLATES], self.plugin_template_dirs, self.cache_dir)
        return self._env

    def grammar(self, name: str) -> str:
        """The text of grammar file `name`, from the first folder in search order that has it."""
        for folder in (self.state_dir / GRAMMARS, *self.plugin_grammar_dirs):
            candidate = folder / name
            if candidate.is_file():
                return candidate.read_text(encoding="utf-8")
        shipped = resources.files(CORE_GRAMMARS_PACKAGE) / name
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8")
        searched = [str(self.state_dir / GRAMMARS), *(str(d) for d in self.plugin_grammar_dirs), CORE_GRAMMARS_PACKAGE]
        raise FileNotFoundError(f"no grammar {name!r} in {', '.join(searched)}")


# shipped prompt files that were renamed: an override under the old name now overrides nothing
FORMER_TEMPLATE_NAMES = {"stable_prefix.j2": "stable_prefix_coached.j2",
                         "variable_tail.j2": "variable_tail_coached.j2"}


def unused_overrides(state_dir: Path, host: Any) -> list[tuple[Path, str]]:
    """The files in `<state>/templates/` and `<state>/grammars/` that no shipped or plugin
    file of that name exists for (so nothing ever loads them), each with what to do."""
    found: list[tuple[Path, str]] = []
    for folder, shipped in ((TEMPLATES, [core_templates_dir()]),
                            (GRAMMARS, [Path(str(resources.files(CORE_GRAMMARS_PACKAGE)))])):
        overrides = Path(state_dir) / folder
        if not overrides.is_dir():
            continue
        searched = [*plugin_asset_dirs(host, folder), *shipped]
        for path in sorted(p for p in overrides.rglob("*") if p.is_file()):
            name = path.relative_to(overrides).as_posix()
            if any((d / name).is_file() for d in searched):
                continue
            renamed = FORMER_TEMPLATE_NAMES.get(name) if folder == TEMPLATES else None
            found.append((path, f"rename it to {renamed} (the shipped file was renamed)" if renamed else
                          f"no {folder[:-1]} of this build is called {name}: rename it to the file it should "
                          "replace, or remove it"))
    return found
