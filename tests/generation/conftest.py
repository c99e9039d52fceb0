import sys
from pathlib import Path

import pytest

from fpa.toy.model import build_toy_model
from fpa.toy.settings import ToyModelConfig


@pytest.fixture(scope="session")
def micro_model_dir(tmp_path_factory):
    """A barely trained toy model: random-ish text, but a real HF model directory."""
    out = tmp_path_factory.mktemp("models") / "micro"
    cfg = ToyModelConfig(n_train_problems=50, d_model=64, n_heads=1, n_layers=1, d_ff=64, steps=5, batch_size=8)
    build_toy_model(out, cfg)
    return out


sys.path.insert(0, str(Path(__file__).resolve().parent))  # tiny_decoders, the samplers' tiny model
