"""benchmarks/training/trl_step.py times the same work on both sides: at a tiny size, our trainer's
step and TRL's trainer step see the same token ids and compute the same first-step loss.
No timing here (speed targets live in benchmarks/)."""

import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("trl")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from training import trl_step  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")  # TRL and datasets warn about the toy setup
TINY = ["--vocab", "300", "--hidden", "64", "--layers", "1", "--ffn", "128", "--seq", "40", "--prompt", "8",
        "--threads", "1"]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    args, workdir = trl_step.parse_args(TINY), tmp_path_factory.mktemp("trl_step")
    trl_step.prepare(args, workdir)
    return args, workdir


@pytest.mark.parametrize("case", list(trl_step.CASES))
def test_both_sides_compute_the_same_first_step_loss(prepared, case):
    args, workdir = prepared
    sides = {side: trl_step.build_side(args, workdir, case, side, chunk_size=16) for side in ("ours", "trl")}
    losses = {side: runner.step() for side, runner in sides.items()}
    ids = {side: runner.input_ids() for side, runner in sides.items()}
    assert ids["ours"].shape == (1 if case == "sft" else 2, 40)
    trl_step.check_same_work(case, losses, ids)


def test_check_same_work_refuses_different_work():
    ids = torch.arange(6).reshape(2, 3)
    with pytest.raises(AssertionError, match="losses differ"):
        trl_step.check_same_work("dpo", {"ours": 0.69, "trl": 0.70}, {"ours": ids, "trl": ids})
    with pytest.raises(AssertionError, match="batches differ"):
        trl_step.check_same_work("dpo", {"ours": 0.69, "trl": 0.69}, {"ours": ids, "trl": ids[:1]})
