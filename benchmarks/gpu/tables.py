"""The GPU record (``benchmarks/gpu/results/gpu.json``) as Markdown: the overhead table beside the paper's,
ratios with their spread over rounds, the other measurements, the GPU named; nothing typed by hand."""

from __future__ import annotations

from gpu.models import PAPER_GPUS, paper_overhead
from shared.rounds import rotated, spread_text

LABELS = {"offrl": "Off-RL", "fpa": "Off-RL w/ FPA"}
GIB = 2**30


def _gib(value) -> str:
    return "–" if value is None else f"{value:.1f}"


def _overhead(result: dict, paper: dict | None) -> list[str]:
    settings = result["training"]
    micro = result.get("micro_batches_per_step", 1)  # records before the paper's batch had one
    lines = [f"Overhead, {result['shape']}: {result['examples_per_step']} examples of {result['tokens_per_example']:,} "
             f"tokens per optimizer step ({micro} micro-batch{'es' if micro > 1 else ''}), {result['rounds']} "
             f"paired round{'s' if result['rounds'] != 1 else ''}, "
             f"{settings['precision']}, gradient checkpointing {settings['gradient_checkpointing']}, "
             f"head chunk {result['chunk_size']} rows; peak = torch.cuda.max_memory_allocated.", "",
             "| method | examples/s, median [min–max] | paper examples/s | peak GiB | planner GiB "
             "| paper peak \"GB\" |", "|---|---|---:|---:|---:|---:|"]
    for run in ("offrl", "fpa"):
        m = result["methods"][run]
        printed = paper.get(run) if paper else None
        lines.append(f"| {LABELS[run]} | {spread_text(m['examples_per_s'], 2)} | {printed[0] if printed else '–'} | "
                     f"{_gib(m['peak_gib'])} | {_gib(m['planner_peak_gib'])} | {printed[1] if printed else '–'} |")
    ratio = result["ratio_time_fpa_over_offrl"]
    text = f"Step time FPA / Off-RL per round: {spread_text(ratio)}"
    if paper:
        text += f" (paper, from its examples/s: {paper['offrl'][0] / paper['fpa'][0]:.3f})"
    if result.get("ratio_peak_fpa_over_offrl"):
        text += f"; peak FPA / Off-RL {result['ratio_peak_fpa_over_offrl']:.3f}"
        if paper:
            text += f" (paper {paper['fpa'][1] / paper['offrl'][1]:.3f})"
    cache = result["reference_cache"]
    return lines + ["", text + f". Reference cache for these {cache['tokens']:,} tokens written on {cache['device']} "
                    f"in {cache['write_s']:.1f} s (model load included)."]


def _trl(result: dict) -> list[str]:
    lines = [f"Ours vs TRL, {result['shape']}, {result['tokens_per_sequence']:,} tokens per sequence, "
             f"{result['rounds']} timed steps per side after a warm-up, each side alone on the device; ours with "
             f"{result['ours_training'] or 'the CPU benchmark settings'}, TRL with "
             f"{'its GPU defaults' if result['trl_defaults'] else 'the CPU benchmark settings'}.", "",
             "| case | ours step s | TRL step s | time ratio ours/TRL, median [min–max] | ours peak GiB | TRL peak GiB "
             "| peak ratio | check |", "|---|---:|---:|---|---:|---:|---:|---|"]
    for case, e in result["cases"].items():
        ours, theirs = e["sides"]["ours"], e["sides"]["trl"]
        peak = e.get("peak_ratio_ours_over_trl")
        lines.append(f"| {case} | {min(ours['step_s']):.3f} | {min(theirs['step_s']):.3f} | "
                     f"{spread_text(e['time_ratio_ours_over_trl'])} | "
                     f"{_gib(ours['peak_bytes'] / GIB if ours['peak_bytes'] else None)} | "
                     f"{_gib(theirs['peak_bytes'] / GIB if theirs['peak_bytes'] else None)} | "
                     f"{'–' if peak is None else f'{peak:.3f}'} | {e['check'][:80]} |")
    return lines


def _head(result: dict) -> list[str]:
    offrl = "offrl_s" in next(iter(result["precisions"].values()))  # records before Off-RL's head was timed lack it
    lines = [f"Loss head, N = {result['N']:,}, d = {result['d']:,}, V = {result['V']:,}, chunk {result['chunk_size']}, "
             f"λ = {result['lam']}; forward + backward"
             + ("; FPA with the cache's ref_lse, as the trainer calls it, and Off-RL without a reference" if offrl
                else "") + "; FPA's error against float64.", "",
             "| precision | FPA s, median [min–max] | " + ("Off-RL s | FPA / Off-RL | " if offrl else "")
             + "max abs Δ log π_θ | max abs Δ log π̂ | max rel Δ FPA weight |",
             "|---|---|" + ("---|---|" if offrl else "") + "---:|---:|---:|"]
    for name in sorted(result["precisions"], key=("fp32", "tf32", "bf16").index):
        p = result["precisions"][name]
        timed = f"{spread_text(p['offrl_s'])} | {spread_text(p['ratio_fpa_over_offrl'])} | " if offrl else ""
        lines.append(f"| {name} | {spread_text(p['s'])} | {timed}{p['max_abs_diff_logp']:.2e} | "
                     f"{p['max_abs_diff_hat_logp']:.2e} | {p['max_rel_diff_fpa_weight']:.2e} |")
    return lines


def _other(key: str, r: dict) -> list[str]:
    if key == "fsdp_resume":
        return [f"FSDP2 ({r['backend']}, world 1), {r['shape']}: {r['steps']} steps straight vs stopped after "
                f"{r['stopped_after']} in another process and resumed from step {r['resumed_from_step']}: "
                f"{'bit-identical' if r['bit_identical'] else 'DIFFERENT'} over {r['tensors']} tensors "
                f"(max abs diff {r['max_abs_diff']:.3g})."]
    if key == "checkpointing":
        same = "bit-identical" if r["bit_identical"] else "not bit-identical"
        return [f"FSDP2 gradients, {r['shape']}, checkpointing on vs off: {same}, "
                f"max abs diff {r['max_abs_diff']:.3g}, "
                f"relative L2 {r['relative_l2_diff']:.3g} (losses {r['loss_on']:.6f} / {r['loss_off']:.6f})."]
    if key == "cache":
        d = r["max_diff"]
        return [f"Reference cache, {r['tokens']:,} tokens: {r['device']} {r['tokens_per_s']['device']:,.0f} tokens/s "
                f"vs CPU {r['tokens_per_s']['cpu']:,.0f} (model load included); max abs diff of the stored "
                + ", ".join(f"{k} {v['max_abs']:.3g}" for k, v in d.items())
                + f" ({r['storage_dtype']} hidden); targets equal {r['targets_equal']}, head equal {r['head_equal']}."]
    if key == "generation":
        sizes = ", ".join(f"batch {b}: {r['batch_sizes'][b]['tokens_per_s']:,.0f}"
                          for b in sorted(r["batch_sizes"], key=int))
        if "stop_ids" not in r:  # records before the warm-up and the uneven lengths
            return [f"Generation, {r['shape']} ({r['dtype']}), {r['prompt_tokens']}-token prompts, {r['new_tokens']} "
                    f"new tokens per row, T = {r['temperature']}: tokens/s {sizes}."]
        runs = "; ".join(f"{b} slots ({e['asked']} asked): {e['rows']} rows, mean {e['mean_length']:.0f} tokens, "
                         f"{e['at_cap']} at the cap, {e['tokens_per_s']:,.0f} tokens/s, peak "
                         f"{_gib(e['peak_bytes'] / GIB if e['peak_bytes'] else None)} GiB"
                         for b, e in sorted(r["batch_sizes"].items(), key=lambda item: int(item[0])))
        return [f"Generation, {r['shape']} ({r['dtype']}), after a warm-up: prompts of {r['prompt_tokens'] // 2}-"
                f"{r['prompt_tokens']} tokens, at most {r['new_tokens']} new tokens, {r['stop_ids']} stop ids, "
                f"T = {r['temperature']}, {r['rows_per_slot']} rows per slot: {runs}."]
    if key in ("users_step", "deterministic"):
        return _throughput(key, r)
    return []


def markdown(record: dict) -> str:
    memory = f"{record['gpu_memory_bytes'] / GIB:.1f} GiB; " if record.get("gpu_memory_bytes") else ""
    where = (f"{record['gpu']} ({memory}host {record['cpu']}, {record['cpu_count']} cores)" if record["gpu"]
             else f"CPU ({record['cpu']})")
    lines = [f"{'Tiny CPU run' if record['mode'] == 'tiny' else 'Measured'} on {where}; torch {record['torch']}, "
             f"transformers {record['transformers']}, TRL {record['trl']}; commit {record['commit'] or 'unknown'}"
             f"{' with uncommitted changes' if record.get('dirty') else ''}; "
             f"{record['started']}, {record.get('elapsed_s', 0):.0f} s of a {record['budget_s']:.0f} s budget.", ""]
    for key in record.get("order", record["measurements"]):
        entry = record["measurements"][key]
        if entry["status"] != "ok":
            lines += [f"{key}: {entry['status']}: {entry.get('reason') or entry.get('error', '')}"[:300], ""]
            continue
        r = entry["result"]
        if "commit" in entry:
            lines += [f"*{key} measured in a later call: commit {entry['commit']}, {entry['started']}.*", ""]
        if key.startswith("overhead") and "methods" in r:
            full = record["mode"] == "full" and key == "overhead"
            lines += _overhead(r, paper_overhead() if full else None)
        elif key == "trl":
            lines += _trl(r)
        elif key == "head":
            lines += _head(r)
        elif key == "dag":
            lines += _dag(r)
        else:
            lines += _other(key, r)
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _dag(r: dict) -> list[str]:
    """The rehearsal DAG's jobs, one row each (``gpu.dag``)."""
    lines = [f"The rehearsal's DAG ({r['config']}), {len(r['jobs'])} outputs in {r['dag_wall_s']:.0f} s:", "",
             "| job | output | device | dtype | wall s | GPU peak GiB | host peak MB |",
             "|---|---|---|---|---:|---:|---:|"]
    for job in r["jobs"]:
        gpu = "" if job["gpu_peak_bytes"] is None else f"{job['gpu_peak_bytes'] / 2**30:.2f}"
        host = "" if job["host_peak_mb"] is None else f"{job['host_peak_mb']:,.0f}"
        lines.append(f"| {job['rule']} | {job['output']} | {job['device']} | {job['dtype']} | {job['wall_s']:.1f} | "
                     f"{gpu} | {host} |")
    return lines


def _rounds_batches(result: dict) -> str:
    """Which batch each round of ``users_step`` timed (a record before ``timed_step`` took a new one a round)."""
    if "timed_step" not in result:
        return "each on the next step's batch, met first by the side that ran first"
    return f"each on step {result['timed_step']}'s batch, which each side met in its warm-up"


def _throughput(key: str, result: dict) -> list[str]:
    """The record's ``users_step`` and ``deterministic`` entries as Markdown."""
    if key == "deterministic":
        ratio, resume = result["offrl_step_ratio_deterministic_over_configured"], result["resume"]
        cost = "not measured" if ratio is None else spread_text(ratio)
        return [f"training.deterministic: Off-RL step time deterministic / configured {cost} (per round index); "
                f"resume under it, {resume['shape']}: {'bit-identical' if resume['bit_identical'] else 'DIFFERENT'} "
                f"over {resume['tensors']} tensors."]
    lengths = result["lengths"]
    lines = [f"What users run, {result['shape']}, world {result['world']}: {result['examples_per_step']} examples a "
             f"step, lengths from {lengths['source']} ({lengths['unit']}, one toy token each; mean prompt "
             f"{lengths['mean_prompt']:.0f}, solution {lengths['mean_completion']:.0f}); {result['rounds']} paired "
             f"rounds, {_rounds_batches(result)}; MFU of 6 N_body T + 6 V d C + 6 L H Q sum s^2 model FLOPs.", "",
             "| variant | method | tokens/s per GPU | examples/s | MFU | peak GiB | FPA / Off-RL | padding |",
             "|---|---|---:|---:|---:|---:|---|---:|"]
    for name, variant in result["variants"].items():
        if "error" in variant or "skipped" in variant:
            why = f"failed: {variant['error'][:120]}" if "error" in variant else f"skipped: {variant['skipped']}"
            lines.append(f"| {name} | {why} | | | | | | |")
            continue
        ratio = variant["ratio_time_fpa_over_offrl"]
        for method, f in variant["methods"].items():
            peak = "–" if f["peak_gib"] is None else f"{f['peak_gib']:.1f}"
            lines.append(f"| {name} | {method} | {f['tokens_per_s']['median']:,.0f} | {f['examples_per_s']['median']:.2f} "
                         f"| {100 * f['mfu']['median']:.1f} % | {peak} | {spread_text(ratio)} "
                         f"| {100 * variant['padding_share']:.0f} % |")
    lines += ["", "Step seconds per round, * where the side ran first in its round (each variant's first side "
              "in rounds 1, 3, ..., its second in rounds 2, 4, ...): " + "; ".join(
                  f"{name}: " + ", ".join(f"{method} " + " ".join(_first_marked(variant, method))
                                          for method in variant["methods"])
                  for name, variant in result["variants"].items() if "methods" in variant) + "."]
    for method, p in result.get("paper", {}).items():
        lines.append(f"\nThe paper, {method}: {p['paper_examples_per_s_per_gpu']:.2f} examples/s per GPU (of its "
                     f"{PAPER_GPUS} H200), {p['paper_tokens_per_s_per_gpu_at_our_mean_length']:,.0f} tokens/s at our "
                     f"mean length; ours {p['ours_examples_per_s']:.2f} examples/s, {p['ours_tokens_per_s']:,.0f} "
                     "tokens/s.")
    return lines


def _first_marked(variant: dict, method: str) -> list[str]:
    """``method``'s step seconds per round, each marked * where ``method`` ran first in that round: the record
    keeps a variant's sides in paired_rounds' order, whose first side starts round 1 (shared.rounds.rotated)."""
    return [f"{s:.2f}{'*' if rotated(list(variant['methods']), r)[0] == method else ''}"
            for r, s in enumerate(variant["methods"][method]["step_s"])]
