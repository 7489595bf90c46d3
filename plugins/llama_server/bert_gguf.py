"""Converting a BERT sentence-embedding model (Hugging Face layout: config.json, vocab.txt,
model.safetensors) into the GGUF llama-server loads with `--embeddings`.

Tensor names and metadata keys are the ones llama.cpp's `bert` architecture reads. The
WordPiece vocabulary is rewritten the way llama.cpp's WPM tokenizer expects: a word-start
token gains the U+2581 "phantom space" prefix, a `##` continuation loses its `##`, and
bracketed specials ([CLS], [SEP], ...) stay as they are. Matrices are stored as F16, norms
biases and the added embeddings as F32.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .gguf_writer import I32, STRING, Value, array, boolean, f32, string, u32, write_gguf
from .llama_errors import BuildError
from .safetensors_file import SafetensorsFile

if TYPE_CHECKING:
    import numpy as np

POOLING_MEAN = 1
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_UNUSED = 1, 2, 3, 5
FILE_TYPE_F16 = 1
_EMBEDDING_TENSORS = {
    "embeddings.word_embeddings.weight": "token_embd.weight",
    "embeddings.position_embeddings.weight": "position_embd.weight",
    "embeddings.token_type_embeddings.weight": "token_types.weight",
    "embeddings.LayerNorm.weight": "token_embd_norm.weight",
    "embeddings.LayerNorm.bias": "token_embd_norm.bias",
}
_KEPT_F32 = frozenset({"token_types.weight", "position_embd.weight"})
_LAYER_TENSORS = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}


def wordpiece_to_wpm(token: str) -> str:
    """A vocab.txt entry as llama.cpp's WPM vocabulary spells it."""
    if token.startswith("[") and token.endswith("]"):
        return token
    if token.startswith("##"):
        return token[2:]
    return "\u2581" + token


def token_kind(token: str) -> int:
    if token == "[UNK]":
        return TOKEN_UNKNOWN
    if token.startswith("[unused"):
        return TOKEN_UNUSED
    if token in ("[PAD]", "[CLS]", "[SEP]", "[MASK]"):
        return TOKEN_CONTROL
    return TOKEN_NORMAL


def _gguf_name(hf_name: str) -> str | None:
    name = hf_name.removeprefix("bert.")
    if name in _EMBEDDING_TENSORS:
        return _EMBEDDING_TENSORS[name]
    if name.startswith("encoder.layer."):
        rest = name[len("encoder.layer."):]
        index, _, tail = rest.partition(".")
        module, _, part = tail.rpartition(".")
        mapped = _LAYER_TENSORS.get(module)
        if mapped is not None and index.isdigit() and part in ("weight", "bias"):
            return f"blk.{index}.{mapped}.{part}"
    return None  # position_ids, the pooler: not used by an embedding server


def _stored_as_f16(gguf_name: str, data: np.ndarray) -> bool:
    """Weight matrices go to F16; vectors, and the embeddings llama.cpp adds without a row
    lookup (token types, positions), stay F32: ggml's CPU add takes no F16 operand."""
    return data.ndim > 1 and gguf_name not in _KEPT_F32


def _read_config(folder: Path) -> dict[str, Any]:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BuildError(f"{folder} has no readable config.json ({exc})") from exc
    if config.get("model_type") != "bert":
        raise BuildError(f"{folder}/config.json describes a {config.get('model_type')!r} model; only BERT "
                         "sentence-embedding models convert")
    return config


def bert_metadata(config: dict[str, Any], tokens: list[str], name: str) -> dict[str, Value]:
    arch = "bert"
    return {
        "general.architecture": string(arch),
        "general.name": string(name),
        "general.file_type": u32(FILE_TYPE_F16),
        f"{arch}.context_length": u32(config["max_position_embeddings"]),
        f"{arch}.embedding_length": u32(config["hidden_size"]),
        f"{arch}.feed_forward_length": u32(config["intermediate_size"]),
        f"{arch}.block_count": u32(config["num_hidden_layers"]),
        f"{arch}.attention.head_count": u32(config["num_attention_heads"]),
        f"{arch}.attention.layer_norm_epsilon": f32(config.get("layer_norm_eps", 1e-12)),
        f"{arch}.attention.causal": boolean(False),
        f"{arch}.pooling_type": u32(POOLING_MEAN),
        "tokenizer.ggml.model": string("bert"),
        "tokenizer.ggml.tokens": array(STRING, [wordpiece_to_wpm(t) for t in tokens]),
        "tokenizer.ggml.token_type": array(I32, [token_kind(t) for t in tokens]),
        "tokenizer.ggml.token_type_count": u32(config.get("type_vocab_size", 2)),
        "tokenizer.ggml.unknown_token_id": u32(tokens.index("[UNK]")),
        "tokenizer.ggml.seperator_token_id": u32(tokens.index("[SEP]")),
        "tokenizer.ggml.padding_token_id": u32(tokens.index("[PAD]")),
        "tokenizer.ggml.cls_token_id": u32(tokens.index("[CLS]")),
        "tokenizer.ggml.mask_token_id": u32(tokens.index("[MASK]")),
    }


def convert_bert_to_gguf(folder: Path, target: Path, name: str) -> None:
    """Write `target` (GGUF, F16 matrices) from the BERT model in `folder`."""
    import numpy as np

    config = _read_config(folder)
    try:
        tokens = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BuildError(f"{folder} has no readable vocab.txt ({exc})") from exc
    missing = [t for t in ("[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]") if t not in tokens]
    if missing or len(tokens) != config.get("vocab_size", len(tokens)):
        raise BuildError(f"{folder}/vocab.txt does not match config.json (missing {missing}, "
                         f"{len(tokens)} tokens for vocab_size {config.get('vocab_size')})")
    weights = SafetensorsFile(folder / "model.safetensors")
    tensors: list[tuple[str, np.ndarray]] = []
    for hf_name in weights:
        gguf_name = _gguf_name(hf_name)
        if gguf_name is None:
            continue
        data = weights.tensor(hf_name).astype(np.float32)
        tensors.append((gguf_name, data.astype(np.float16) if _stored_as_f16(gguf_name, data) else data))
    expected = 5 + 16 * int(config["num_hidden_layers"])
    if len(tensors) != expected:
        raise BuildError(f"{folder}/model.safetensors gave {len(tensors)} of the {expected} BERT tensors; "
                         "it is not a plain BertModel checkpoint")
    tensors.sort(key=lambda item: item[0])
    write_gguf(target, bert_metadata(config, tokens, name), tensors)
