"""Every command of ``fpa``: the module that registers it, where ``fpa --help`` lists it and its one
line; and the help of the options many commands share."""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    module: str  # the fpa.cli module that registers it
    group: str  # where `fpa --help` lists it
    summary: str  # its one line there, and its description in `fpa COMMAND --help`


YOURS = "Commands for you"
DATA = "Pipeline steps (Snakemake's rules run these): data and models"
TRAIN = "Pipeline steps: training and evaluation"
OUTPUTS = "Pipeline steps: tables, figures and analyses"

# A command imports only its own module: the others pull in torch/transformers (~5 s per job, and
# envs that don't have them), and `fpa --help` imports none.
COMMANDS = {
    "explain": Command("info", YOURS, "the provenance chain behind one table cell: files, configs, rules, environment"),
    "methods": Command("info", YOURS, "list the registered offline objectives and online methods, with their defaults"),
    "check-config": Command("info", YOURS, "validate config files, each a whole experiment, as planning does"),
    "plan-memory": Command("memory", YOURS, "the cost before the run: each GPU job's memory per GPU, disk and GPU-hours"),
    "lock": Command("lock", YOURS, "pin the config's hub models and data files (revision and sha256)"),
    "gold-selfcheck": Command("data", YOURS, "check that every gold answer of the data mirror grades correct"),
    "plan-counts": Command("plan", YOURS, "the jobs, training runs, tables and figures each config/*.yaml plans"),
    "config-doc": Command("plan", YOURS, "config/README.md, every config key, written from the schema"),
    "fetch-data": Command("data", DATA, "copy a catalog file from the mirror or download it; verify its sha256"),
    "prepare-benchmark": Command("data", DATA, "normalise a benchmark's files into one JSONL"),
    "validate-benchmark": Command("data", DATA, "check the JSONL of a benchmark with source: file"),
    "math-train": Command("data", DATA, "the 12K MATH training problems (Lightman et al.)"),
    "code-train": Command("code", DATA, "TACO + APPS training problems with their tests"),
    "fetch-model": Command("data", DATA, "download a hub model once; check its pinned files"),
    "build-models": Command("data", DATA, "build the rehearsal's models into a model mirror (data.build_models)"),
    "toy-model": Command("toy", DATA, "build and SFT-train the toy base model"),
    "toy-problems": Command("toy", DATA, "write toy arithmetic problems as benchmark records"),
    "check-prompt-budget": Command("dataset", DATA, "before sampling: the longest training prompt against max_length"),
    "sample": Command("dataset", DATA, "sample K completions per training problem"),
    "build-dataset": Command("dataset", DATA, "grade the samples, drop problems whose samples all agree, split"),
    "step-dpo-dataset": Command("dataset", DATA, "the offline dataset from the Math-Step-DPO-10K pairs"),
    "validation-benchmark": Command("dataset", DATA, "the held-out validation problems as a benchmark"),
    "cache-reference": Command("reference", DATA, "cache the reference model's final hidden states"),
    "train": Command("train", TRAIN, "train one offline method with one seed"),
    "train-online": Command("train_online", TRAIN, "train one online method (GRPO, DAPO) with one seed"),
    "evaluate": Command("evaluate", TRAIN, "Pass@1 of a checkpoint on its benchmarks"),
    "curve": Command("curve", TRAIN, "Pass@1 of each snapshot of a run on the curve benchmarks"),
    "select-checkpoint": Command("select", TRAIN, "the snapshot or final checkpoint with the best validation Pass@1"),
    "generate": Command("generate", TRAIN, "n completions per problem of the code benchmarks"),
    "evaluate-code": Command("code", TRAIN, "Pass@1 of generated code, graded in the sandbox"),
    "aggregate": Command("tables", OUTPUTS, "a table: mean ± std over seeds of every cell"),
    "reproduction": Command("tables", OUTPUTS, "how many cells of the compared tables match the paper"),
    "cost": Command("cost", OUTPUTS, "cost by stage (wall s, CPU s, max RSS) of the config's runs"),
    "figure": Command("figure", OUTPUTS, "draw one of the paper's figures from the runs"),
    "figure-table": Command("figure", OUTPUTS, "the numbers behind a figure (CSV, Markdown, HTML)"),
    "future-policy": Command("future_policy", OUTPUTS, "KL between FPA's extrapolated policy and later snapshots"),
    "entanglement": Command("entanglement", OUTPUTS, "cosine and norms of correct and incorrect score functions"),
}

# Options many commands share, explained once (a command's own help wins).
SHARED_OPTION_HELP = {
    "--out": "the output file or directory (written to a temporary path, then renamed)",
    "--code": "the code fingerprint of the rule's params (recorded in provenance; a change re-runs the job)",
    "--seed": "the random seed",
    "--train": "the offline dataset's training split (JSONL)",
    "--val": "the offline dataset's validation split (JSONL)",
    "--out-train": "the training split to write (JSONL)",
    "--out-val": "the validation split to write (JSONL)",
    **{f"--out-{kind}": f"the {name} to write" for kind, name in
       [("csv", "CSV"), ("md", "Markdown"), ("tex", "LaTeX"), ("html", "HTML"), ("png", "PNG"), ("pdf", "PDF")]},
}
