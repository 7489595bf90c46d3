"""`llama start` loads a registered model's projector (with its image budget) only while vision
is on and the file is there; `models add --mmproj` refuses what is not a projector."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.command_context import vision_enabled
from atomic_agent.plugins.llama_server.llama_config import LlamaConfig
from atomic_agent.plugins.llama_server.llama_errors import ModelRegistryError
from atomic_agent.plugins.llama_server.model_registry import register_model, stored_models
from atomic_agent.plugins.llama_server.server_launch import launch_spec_from_config
from atomic_agent.plugins.vision.vision_config import VisionConfig


@pytest.fixture
def registered(tmp_path: Path) -> tuple[LlamaConfig, Path, Path, Path]:
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\necho 'version: 6414 (4f2a8a3d)' >&2\n")
    binary.chmod(0o755)
    model, projector = tmp_path / "gemma.gguf", tmp_path / "mmproj-gemma.gguf"
    model.write_bytes(b"GGUF" + b"\x00" * 32)
    projector.write_bytes(b"GGUF" + b"\x01" * 32)
    state, cache = tmp_path / "state", tmp_path / "cache"
    register_model(state, cache, model, "gemma-vl", mmproj=projector)
    return LlamaConfig(binary=str(binary), model="gemma-vl"), state, cache, projector


def test_vision_on_loads_the_projector_with_its_budget(registered) -> None:
    cfg, state, cache, projector = registered
    argv = launch_spec_from_config(cfg, state, cache, vision=True).argv()
    at = argv.index("--mmproj")
    assert argv[at + 1] == str(projector.resolve())
    assert argv[at + 2:at + 10] == ["--image-min-tokens", "560", "--image-max-tokens", "560", "--ubatch-size", "1024",
                                    "--batch-size", "2048"]


def test_vision_off_or_a_missing_projector_starts_text_only(registered) -> None:
    cfg, state, cache, projector = registered
    for argv in (launch_spec_from_config(cfg, state, cache, vision=False).argv(),):
        assert "--mmproj" not in argv and "--image-min-tokens" not in argv
    projector.unlink()
    argv = launch_spec_from_config(cfg, state, cache, vision=True).argv()
    assert "--mmproj" not in argv and "--image-min-tokens" not in argv and "--ubatch-size" not in argv


def test_vision_enabled_reads_the_vision_block_and_is_off_without_it() -> None:
    class Config:
        def __init__(self, blocks: dict) -> None:
            self.blocks = blocks

    assert vision_enabled(Config({"vision": VisionConfig()})) is True
    assert vision_enabled(Config({"vision": VisionConfig(enabled=False)})) is False
    assert vision_enabled(Config({})) is False


def test_a_registry_without_projectors_is_written_as_before(tmp_path: Path) -> None:
    model = tmp_path / "plain.gguf"
    model.write_bytes(b"GGUF" + b"\x00" * 8)
    register_model(tmp_path / "state", tmp_path / "cache", model, "plain")
    text = (tmp_path / "state" / "llamacpp" / "models.json").read_text()
    assert "mmproj" not in text and stored_models(tmp_path / "state")[0].mmproj == ""


def test_the_model_itself_is_not_its_own_projector(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"\x00" * 8)
    with pytest.raises(ModelRegistryError, match="both the model and its projector"):
        register_model(tmp_path / "state", tmp_path / "cache", model, "m", mmproj=model)
    with pytest.raises(ModelRegistryError, match="does not exist"):
        register_model(tmp_path / "state", tmp_path / "cache", model, "m", mmproj=tmp_path / "absent.gguf")
