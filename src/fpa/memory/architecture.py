"""The shapes of a decoder-only LM that its memory depends on, read from its HF ``config.json``.

A hub model's ``config.json`` is on disk only after rule ``fetch_model`` ran, so a config may
state the same fields under the model's ``architecture`` key (copied from that file at the
pinned revision); a fetched ``config.json`` is preferred, and must agree with them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Mapping

from fpa.io import read_json

# config.json fields (Qwen2, Qwen3 and Llama name them alike)
REQUIRED = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads")
#: sizes a config.json may leave out or null (derived from the required ones), and flags it may leave out
OPTIONAL_SIZES, FLAGS = ("num_key_value_heads", "head_dim"), ("tie_word_embeddings", "attention_bias")
#: the largest size: a C int, as the config schema bounds its integers
SIZE_MAX = 2**31 - 1


@dataclass(frozen=True)
class Architecture:
    """Shapes of a Qwen2/Qwen3/Llama-style decoder (SwiGLU MLP, RMSNorm, grouped-query attention)."""

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    tie_word_embeddings: bool
    attention_bias: bool = False  # Qwen2: biases on q, k, v
    qk_norm: bool = False  # Qwen3: RMSNorm on each head's q and k

    @classmethod
    def from_hf(cls, config: Mapping, where: str) -> "Architecture":
        """The shapes of a config.json (or a config's ``architecture``); a ``ValueError`` naming ``where``
        and the field for a missing field, a size that is not an integer 1..``SIZE_MAX``, a flag that
        is not a boolean, or attention heads that the key/value heads do not divide into groups."""
        check_fields(config, where)
        heads = config["num_attention_heads"]
        model_type = config.get("model_type", "")
        return cls(
            vocab_size=config["vocab_size"],
            hidden_size=config["hidden_size"],
            intermediate_size=config["intermediate_size"],
            num_hidden_layers=config["num_hidden_layers"],
            num_attention_heads=heads,
            num_key_value_heads=config.get("num_key_value_heads") or heads,
            head_dim=config.get("head_dim") or config["hidden_size"] // heads,
            tie_word_embeddings=config.get("tie_word_embeddings", False),
            attention_bias=config.get("attention_bias", model_type == "qwen2"),
            qk_norm=model_type == "qwen3",
        )

    @classmethod
    def from_model_dir(cls, path: str | Path) -> "Architecture":
        file = Path(path) / "config.json"
        return cls.from_hf(read_json(file), str(file))

    def to_hf(self) -> dict:
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @property
    def q_width(self) -> int:
        return self.num_attention_heads * self.head_dim

    @property
    def kv_width(self) -> int:
        return self.num_key_value_heads * self.head_dim

    @property
    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    @property
    def layer_linear_params(self) -> int:
        """Weights of one layer's matmuls (what bf16 autocast casts), biases included."""
        d, f = self.hidden_size, self.intermediate_size
        attention = d * self.q_width + 2 * d * self.kv_width + self.q_width * d
        bias = self.q_width + 2 * self.kv_width if self.attention_bias else 0
        return attention + bias + 3 * d * f

    @property
    def layer_params(self) -> int:
        norms = 2 * self.hidden_size + (2 * self.head_dim if self.qk_norm else 0)
        return self.layer_linear_params + norms

    @property
    def params(self) -> int:
        head = 0 if self.tie_word_embeddings else self.embedding_params
        return self.embedding_params + head + self.num_hidden_layers * self.layer_params + self.hidden_size


def check_fields(config: Mapping, where: str, keys: str = "") -> None:
    """What ``Architecture.from_hf`` reads of ``config`` is there and of its kind (see there); a message
    names ``where`` and the field after ``keys`` (a config's ``models.<m>.architecture.``)."""
    missing = [key for key in REQUIRED if key not in config]
    if missing:
        raise ValueError(f"{where}: expected the config.json fields {list(REQUIRED)}, missing {missing}")
    sizes = [*REQUIRED, *(key for key in OPTIONAL_SIZES if config.get(key) is not None)]
    for key in sizes:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= SIZE_MAX:
            raise ValueError(f"{where}: {keys}{key}: expected an integer 1 <= {key} <= {SIZE_MAX}, got {value!r}")
    for key in FLAGS:
        if key in config and not isinstance(config[key], bool):
            raise ValueError(f"{where}: {keys}{key}: expected true or false, got {config[key]!r}")
    if config.get("head_dim") is None and config["num_attention_heads"] > config["hidden_size"]:
        raise ValueError(f"{where}: {keys}num_attention_heads: expected at most hidden_size ({config['hidden_size']}) "
                         f"without a head_dim (each head hidden_size / heads wide), got {config['num_attention_heads']}")
    groups = config.get("num_key_value_heads")
    if groups is not None and config["num_attention_heads"] % groups:
        raise ValueError(f"{where}: {keys}num_key_value_heads: expected a divisor of num_attention_heads "
                         f"({config['num_attention_heads']}; each key/value head serves a group of them), got {groups}")
