"""Converting a BERT sentence-embedding checkpoint to the GGUF llama-server loads with
--embeddings: metadata, WordPiece vocabulary in llama.cpp's spelling, tensor layout."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from atomic_agent.plugins.llama_server.bert_gguf import convert_bert_to_gguf, wordpiece_to_wpm
from atomic_agent.plugins.llama_server.llama_errors import BuildError

VOCAB = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "guitar", "##s", "play"]
HIDDEN, FFN, LAYERS = 8, 16, 2


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, array in tensors.items():
        raw = array.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))


def tiny_bert(folder: Path) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    tensors = {"embeddings.word_embeddings.weight": rng.normal(size=(len(VOCAB), HIDDEN)),
               "embeddings.position_embeddings.weight": rng.normal(size=(16, HIDDEN)),
               "embeddings.token_type_embeddings.weight": rng.normal(size=(2, HIDDEN)),
               "embeddings.LayerNorm.weight": np.ones(HIDDEN), "embeddings.LayerNorm.bias": np.zeros(HIDDEN),
               "pooler.dense.weight": rng.normal(size=(HIDDEN, HIDDEN))}
    for i in range(LAYERS):
        for module, shape in (("attention.self.query", (HIDDEN, HIDDEN)), ("attention.self.key", (HIDDEN, HIDDEN)),
                              ("attention.self.value", (HIDDEN, HIDDEN)), ("attention.output.dense", (HIDDEN, HIDDEN)),
                              ("attention.output.LayerNorm", None), ("intermediate.dense", (FFN, HIDDEN)),
                              ("output.dense", (HIDDEN, FFN)), ("output.LayerNorm", None)):
            out = shape[0] if shape else HIDDEN
            tensors[f"encoder.layer.{i}.{module}.weight"] = rng.normal(size=shape) if shape else np.ones(HIDDEN)
            tensors[f"encoder.layer.{i}.{module}.bias"] = rng.normal(size=out)
    folder.mkdir(parents=True, exist_ok=True)
    write_safetensors(folder / "model.safetensors", tensors)
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (folder / "config.json").write_text(json.dumps({
        "model_type": "bert", "hidden_size": HIDDEN, "intermediate_size": FFN, "num_hidden_layers": LAYERS,
        "num_attention_heads": 2, "max_position_embeddings": 16, "layer_norm_eps": 1e-12, "type_vocab_size": 2,
        "vocab_size": len(VOCAB)}))
    return tensors


def read_gguf(path: Path) -> tuple[dict[str, Any], dict[str, tuple[tuple[int, ...], int, int]], int]:
    """(metadata, {tensor: (dims innermost first, ggml type, offset)}, data start) of a GGUF v3 file."""
    data = path.read_bytes()
    pos = 0

    def take(fmt: str) -> Any:
        nonlocal pos
        values = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return values[0]

    def text() -> str:
        nonlocal pos
        size = take("<Q")
        pos += size
        return data[pos - size:pos].decode()

    scalar = {4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q"}

    def value(kind: int) -> Any:
        if kind == 8:
            return text()
        if kind == 9:
            item, count = take("<I"), take("<Q")
            return [value(item) for _ in range(count)]
        return take(scalar[kind])

    assert data[:4] == b"GGUF"
    pos = 4
    assert take("<I") == 3
    n_tensors, n_kv = take("<Q"), take("<Q")
    meta = {}
    for _ in range(n_kv):
        key = text()
        meta[key] = value(take("<I"))
    tensors = {}
    for _ in range(n_tensors):
        name = text()
        dims = tuple(take("<Q") for _ in range(take("<I")))
        tensors[name] = (dims, take("<I"), take("<Q"))
    return meta, tensors, pos + (-pos % 32)


def test_wordpiece_tokens_take_llama_cpp_spelling() -> None:
    assert [wordpiece_to_wpm(t) for t in ("[CLS]", "guitar", "##s")] == ["[CLS]", "\u2581guitar", "s"]


def test_a_bert_checkpoint_converts_to_a_gguf_llama_server_reads(tmp_path: Path) -> None:
    source = tiny_bert(tmp_path / "model")
    convert_bert_to_gguf(tmp_path / "model", tmp_path / "out.gguf", "tiny")
    meta, tensors, start = read_gguf(tmp_path / "out.gguf")
    assert meta["general.architecture"] == "bert" and meta["bert.block_count"] == LAYERS
    assert meta["bert.pooling_type"] == 1 and meta["bert.attention.causal"] is False
    assert meta["tokenizer.ggml.model"] == "bert" and meta["tokenizer.ggml.tokens"][7] == "\u2581guitar"
    assert meta["tokenizer.ggml.cls_token_id"] == 3 and meta["tokenizer.ggml.token_type"][:3] == [3, 5, 2]
    assert len(tensors) == 5 + 16 * LAYERS and not any(n.startswith("pooler") for n in tensors)
    dims, kind, offset = tensors["blk.1.ffn_up.weight"]
    assert dims == (HIDDEN, FFN) and kind == 1  # F16, innermost dimension first
    assert tensors["token_types.weight"][1] == 0 and tensors["blk.0.attn_q.bias"][1] == 0  # F32
    raw = (tmp_path / "out.gguf").read_bytes()[start + offset:start + offset + FFN * HIDDEN * 2]
    stored = np.frombuffer(raw, dtype="<f2").reshape(FFN, HIDDEN)
    np.testing.assert_allclose(stored, source["encoder.layer.1.intermediate.dense.weight"], rtol=1e-3, atol=1e-3)


def test_a_checkpoint_that_is_not_bert_is_refused(tmp_path: Path) -> None:
    tiny_bert(tmp_path / "model")
    config = json.loads((tmp_path / "model" / "config.json").read_text())
    (tmp_path / "model" / "config.json").write_text(json.dumps({**config, "model_type": "llama"}))
    with pytest.raises(BuildError, match="only BERT"):
        convert_bert_to_gguf(tmp_path / "model", tmp_path / "out.gguf", "x")
    assert not (tmp_path / "out.gguf").exists()


def test_embedding_daemon_command_line_is_pooling_only() -> None:
    from atomic_agent.plugins.llama_server.server_process import LaunchSpec

    argv = LaunchSpec(binary=Path("/b/llama-server"), model=Path("/m.gguf"), port=19092, ctx_size=2048, parallel=4,
                      pooling="mean").argv()
    assert argv[argv.index("--pooling") + 1] == "mean" and "--embeddings" in argv
    assert argv[argv.index("--ubatch-size") + 1] == "512"
    assert "--embeddings" not in LaunchSpec(binary=Path("/b"), model=Path("/m.gguf")).argv()
