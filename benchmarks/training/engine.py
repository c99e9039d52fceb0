"""Cost of the FPA engine: chunked loss head and full training steps, CPU, side by side.

    python benchmarks/training/engine.py                      # full run (~25 min on 2 idle cores)
    python benchmarks/training/engine.py --vocab 4096 --layers 2 --reps 1   # smoke run

(a) loss head, FPA statistics (logp, ref_logp, hat_logp), fwd+bwd: chunked vs naive.
(b) one training step (forward, backward, AdamW) of a small tied-head Qwen2 for
    Off-RL, FPA with cached z_ref (only W_ref in memory), FPA with the online
    reference body, and DPO (ref log-probs from the cache); plus the floor: one
    forward of the reference output head (h_ref = z_ref·W_refᵀ and its log-normaliser).

Memory: each measurement runs in a fresh subprocess; after setup the kernel's RSS
high-water mark is reset (``echo 5 > /proc/self/clear_refs``) and VmHWM is read after
the measured op. torch's CPU allocator is plain malloc, so RSS is the real footprint
(tracemalloc does not see it). Time: one subprocess, cases interleaved round-robin,
medians over ``--reps`` rounds after one warm-up each, of wall time and of process
CPU time (OMP_WAIT_POLICY=PASSIVE); the targets use CPU time, which other jobs on
shared cores do not inflate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from shared.harness import add_model_args, build_model, interleaved, peak_memory, spawn  # noqa: E402

from fpa.io import write_json  # noqa: E402
from fpa.objectives import SequenceStats, get_objective  # noqa: E402
from fpa.reference.model import online_reference_hidden  # noqa: E402
from fpa.training.head import token_statistics, token_statistics_naive  # noqa: E402

# offrl: the bare step (training.diagnostics: false); offrl_diag: Off-RL reading the cached
# per-sequence log pi_ref for its logged log-ratios, as every run does by default
STEPS = ("offrl", "offrl_diag", "fpa_cached", "fpa_online", "dpo")
HEADS = ("head_naive", "head_chunked")
LAM = 2.0


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add_model_args(parser)
    add("--batch", type=int, default=2, help="sequences per step (DPO: 1 pair)")
    add("--out", default=str(Path(__file__).parent / "results" / "engine.json"))
    add("--worker", choices=("prepare", "time", *HEADS, *STEPS), help=argparse.SUPPRESS)
    add("--workdir", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ---------------------------------------------------------------- setup
def build_batch(args):
    gen = torch.Generator().manual_seed(1)
    input_ids = torch.randint(0, args.vocab, (args.batch, args.seq), generator=gen)
    predict = torch.zeros_like(input_ids, dtype=torch.bool)
    predict[:, args.prompt - 1 : -1] = True
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids), "predict_mask": predict,
            "targets": input_ids[:, args.prompt :].reshape(-1),
            "length": torch.full((args.batch,), args.seq - args.prompt)}


def prepare(args, workdir):
    """The cache a real run would read: z_ref (bf16), per-token ref logsumexp and sequence ref log-probs."""
    from safetensors.torch import save_file

    model, batch = build_model(args).eval(), build_batch(args)
    z = online_reference_hidden(model, batch["input_ids"], batch["attention_mask"], batch["predict_mask"])
    z = z.to(torch.bfloat16)
    with torch.no_grad():
        head = token_statistics(z, model.lm_head.weight, batch["targets"], chunk_size=args.chunk_size)
        logits_y = (z.float() * model.lm_head.weight[batch["targets"]]).sum(-1)
    seq_logp = torch.stack([t.sum() for t in head.logp.split(batch["length"].tolist())])
    cache = {"z_ref": z, "ref_lse": logits_y - head.logp, "ref_seq_logp": seq_logp}
    save_file(cache, str(workdir / "cache.safetensors"))


class Setup:
    """Everything a step needs, built once per process."""

    def __init__(self, args, workdir, method):
        from safetensors.torch import load_file

        self.args, self.method = args, method
        self.model = build_model(args)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-6)
        self.batch = build_batch(args)
        self.cache = load_file(str(workdir / "cache.safetensors"))
        if method in ("fpa_cached", "time"):
            self.w_ref = self.model.lm_head.weight.detach().clone()  # the only reference tensor kept
        if method in ("fpa_online", "time"):
            self.ref_model = build_model(args).eval().requires_grad_(False)

    def sequence_stats(self, tokens, ref_logp=None, **extra):
        def seq(t):
            return None if t is None else torch.stack([x.sum() for x in t.split(self.batch["length"].tolist())])

        reward = torch.tensor([1.0, -1.0] * (self.args.batch // 2) + [1.0] * (self.args.batch % 2))
        return SequenceStats(logp=seq(tokens.logp), length=self.batch["length"].float(), reward=reward,
                             group=torch.zeros(self.args.batch, dtype=torch.long),
                             ref_logp=seq(tokens.ref_logp) if ref_logp is None else ref_logp,
                             hat_logp=seq(tokens.hat_logp), **extra)

    def step(self, method):
        b, chunk = self.batch, self.args.chunk_size
        self.optimizer.zero_grad(set_to_none=True)
        hidden = self.model.get_decoder()(input_ids=b["input_ids"], attention_mask=b["attention_mask"])
        hidden = hidden.last_hidden_state[b["predict_mask"]]
        weight = self.model.lm_head.weight
        if method == "fpa_cached":
            tokens = token_statistics(hidden, weight, b["targets"], ref_hidden=self.cache["z_ref"],
                                      ref_weight=self.w_ref, ref_logsumexp=self.cache["ref_lse"], lam=LAM,
                                      chunk_size=chunk)
        elif method == "fpa_online":
            z = online_reference_hidden(self.ref_model, b["input_ids"], b["attention_mask"], b["predict_mask"])
            tokens = token_statistics(hidden, weight, b["targets"], ref_hidden=z,
                                      ref_weight=self.ref_model.lm_head.weight, lam=LAM, chunk_size=chunk)
        else:
            tokens = token_statistics(hidden, weight, b["targets"], chunk_size=chunk)
        if method == "dpo":
            pairs = {"chosen": torch.tensor([0]), "rejected": torch.tensor([1])}
            stats = self.sequence_stats(tokens, ref_logp=self.cache["ref_seq_logp"], **pairs)
        elif method == "offrl_diag":
            stats = self.sequence_stats(tokens, ref_logp=self.cache["ref_seq_logp"])
        else:
            stats = self.sequence_stats(tokens)
        objective = get_objective({"fpa_cached": "fpa", "fpa_online": "fpa", "offrl_diag": "offrl"}.get(method,
                                                                                                      method))
        loss, _ = objective.loss(stats, objective.params_type())
        loss.backward()
        self.optimizer.step()


def head_inputs(args):
    gen = torch.Generator().manual_seed(2)
    n, d = args.batch * args.seq, args.hidden
    return {"hidden": torch.randn(n, d, generator=gen).requires_grad_(),
            "weight": (torch.randn(args.vocab, d, generator=gen) * 0.05).requires_grad_(),
            "targets": torch.randint(0, args.vocab, (n,), generator=gen),
            "ref_hidden": torch.randn(n, d, generator=gen),
            "ref_weight": torch.randn(args.vocab, d, generator=gen) * 0.05}


def head_step(fn, x, chunk):
    stats = fn(x["hidden"], x["weight"], x["targets"], ref_hidden=x["ref_hidden"], ref_weight=x["ref_weight"],
               lam=LAM, chunk_size=chunk)
    stats.logp.sum().backward()
    x["hidden"].grad = x["weight"].grad = None


# ---------------------------------------------------------------- workers
def memory_worker(args, workdir):
    if args.worker in HEADS:
        x = head_inputs(args)
        fn = token_statistics_naive if args.worker == "head_naive" else token_statistics
        run = lambda: head_step(fn, x, args.chunk_size)  # noqa: E731
    else:
        setup = Setup(args, workdir, args.worker)
        run = lambda: setup.step(args.worker)  # noqa: E731
    return peak_memory(run)[0]


def time_worker(args, workdir):
    setup, x = Setup(args, workdir, "time"), head_inputs(args)
    z, w_ref, targets = setup.cache["z_ref"], setup.w_ref, setup.batch["targets"]
    jobs = {name: (lambda m=name: setup.step(m)) for name in STEPS}
    jobs["head_naive"] = lambda: head_step(token_statistics_naive, x, args.chunk_size)
    jobs["head_chunked"] = lambda: head_step(token_statistics, x, args.chunk_size)
    jobs["floor"] = lambda: token_statistics(z, w_ref, targets, chunk_size=args.chunk_size)
    jobs["floor_matmul"] = lambda: [c.float() @ w_ref.T for c in z.split(args.chunk_size)]
    with torch.no_grad():
        return interleaved(jobs, args.reps, before=lambda name: torch.set_grad_enabled(name in STEPS or name in HEADS))


# ---------------------------------------------------------------- report
def report(args, memory, times, sizes):
    t, wall = ({k: v[unit] for k, v in times.items()} for unit in ("cpu_s", "wall_s"))
    mem = {k: v["peak_mb"] for k, v in memory.items()}
    lines = [f"model: body {sizes['body_params'] / 1e6:.1f}M params = {sizes['body_params'] / sizes['head_params']:.1f}x "
             f"the tied head's {sizes['head_params'] / 1e6:.1f}M (a body not dwarfed by its head); "
             f"V={args.vocab} d={args.hidden} layers={args.layers} ffn={args.ffn}; {args.batch}x{args.seq} tokens/step; "
             f"CPU fp32",
             f"{'case':<19}{'wall s':>8}{'CPU s':>8}{'CPU ratio':>10}{'peak MB':>9}{'mem ratio':>10}{'extra MB':>9}"
             "   ratios: head rows / naive head, step rows / offrl"]
    for key in (*HEADS, *STEPS):
        base = "head_naive" if key in HEADS else "offrl"
        lines.append(f"{key:<19}{wall[key]:>8.2f}{t[key]:>8.2f}{t[key] / t[base]:>10.3f}{mem[key]:>9.0f}"
                     f"{mem[key] / mem[base]:>10.3f}{memory[key]['extra_mb']:>9.0f}")
    for key, label in (("floor", "floor: ref head fwd"), ("floor_matmul", "  (its matmul alone)")):
        lines.append(f"{label:<19}{wall[key]:>8.2f}{t[key]:>8.2f}")
    # Paired per round (cases are interleaved): the difference of two noisy ~1-minute steps is only
    # as stable as the background load between them, so take the median of the per-round differences.
    extra = statistics.median(fpa[1] - off[1] for fpa, off in zip(times["fpa_cached"]["all_wall_cpu_s"],
                                                                  times["offrl"]["all_wall_cpu_s"]))
    head_mem = memory["head_chunked"]["extra_mb"] / memory["head_naive"]["extra_mb"]
    targets = {
        "chunked/naive loss-head extra memory <= 0.1": head_mem <= 0.1,
        "FPA(cached) - Off-RL step CPU time <= 1.2 x floor": extra <= 1.2 * t["floor"],
        "FPA(cached) faster than FPA(online) (CPU time)": t["fpa_cached"] < t["fpa_online"],
        "FPA(cached)/Off-RL peak memory <= 1.03": mem["fpa_cached"] / mem["offrl"] <= 1.03,
    }
    lines.append(f"FPA(cached) - Off-RL (median of per-round differences): {extra:.2f} CPU s = "
                 f"{extra / t['floor']:.2f} x floor; "
                 f"{mem['fpa_cached'] - mem['offrl']:.0f} MB peak, of which W_ref = {sizes['w_ref_mb']:.0f} MB; "
                 f"head extra memory chunked/naive = {head_mem:.3f}")
    lines.append(f"diagnostics (Off-RL reading the cached log pi_ref(y|x) for its log-ratios) cost "
                 f"{t['offrl_diag'] / t['offrl'] - 1:+.1%} CPU time and "
                 f"{mem['offrl_diag'] - mem['offrl']:+.0f} MB peak over the bare step (training.diagnostics: false)")
    lines += [f"[{'PASS' if ok else 'FAIL'}] {name}" for name, ok in targets.items()]
    return "\n".join(lines), targets


def markdown(record: dict) -> str:
    """The recorded run's printed table, as a Markdown code block (``report.py``)."""
    return "```\n" + record["table"] + "\n```"


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.worker:
        workdir = Path(args.workdir)
        result = prepare(args, workdir) if args.worker == "prepare" else (
            time_worker(args, workdir) if args.worker == "time" else memory_worker(args, workdir))
        print(json.dumps(result))
        return
    model = build_model(args)
    head_params = model.lm_head.weight.numel()
    sizes = {"body_params": sum(p.numel() for p in model.parameters()) - head_params, "head_params": head_params,
             "w_ref_mb": head_params * 4 / 2**20, "tokens_per_step": args.batch * args.seq,
             "completion_tokens": args.batch * (args.seq - args.prompt)}
    del model
    print(f"model: body {sizes['body_params'] / 1e6:.1f}M params, head (tied) {head_params / 1e6:.1f}M; "
          f"V={args.vocab} d={args.hidden} layers={args.layers}; {args.batch}x{args.seq} tokens/step; "
          f"chunk {args.chunk_size}; {args.threads} threads; CPU fp32", flush=True)
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as workdir:
        spawn(__file__, args, "prepare", workdir)
        memory = {case: spawn(__file__, args, case, workdir) for case in (*HEADS, *STEPS)}
        times = spawn(__file__, args, "time", workdir)
    load.append(os.getloadavg()[0])
    table, targets = report(args, memory, times, sizes)
    table += f"\n1-min load average at start/end: {load[0]:.1f} / {load[1]:.1f} on {os.cpu_count()} cores"
    print(table)
    run_args = {k: v for k, v in vars(args).items() if k not in ("worker", "workdir", "out")}
    write_json(args.out, {"args": run_args, "sizes": sizes, "load_average": load, "memory": memory, "time": times,
                          "targets": targets, "table": table, "device": "CPU only (no GPU in this task)",
                          "torch": torch.__version__})


if __name__ == "__main__":
    main()
