import json
import re
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

from fpa.config import (
    BASE_METHOD,
    CODE_TRAIN_FILES,
    DATASET_FILES,
    MATH12K_FILES,
    STEP_DPO_FILE,
    ConfigError,
    expand_runs,
    is_code_grader,
    load_catalog,
    run_names,
    validate_config,
)
from fpa.aggregation.layout import build_layout, table_benchmarks
from fpa.data.download import ALL_SECTIONS, find_entry
from fpa.data.offline import DATASET_GRADER
from fpa.numerics import portable_env_prefix
from fpa.analysis.preference_pairs import pair_loaders
from fpa.figures import (
    FIGURES,
    dag_inputs,
    figure_caption,
    figure_slice,
    planned_curves,
    planned_figures,
)
from fpa.grading import grader_module
from fpa.objectives import get_objective
from fpa.provenance.fingerprint import code_fingerprint
from fpa.resources import job_processes

# Jobs (also inside --use-conda environments) import the package from this checkout.
shell.prefix(
    f"export PYTHONPATH={Path(workflow.basedir) / 'src'}:${{{{PYTHONPATH:-}}}}; "
)

try:
    validate_config(config, where=", ".join(map(str, workflow.configfiles)) or "config")
    RUNS = expand_runs(config)
except ConfigError as error:
    sys.exit(f"config error: {error}")

MODELS = list(config["models"])
SEEDS = [str(seed) for seed in config["seeds"]]
METHODS = ([BASE_METHOD] if config["evaluate_base"] else []) + run_names(RUNS)
CATALOG = (
    load_catalog(config, "config")
    if config["dataset"]["source"] in DATASET_FILES
    or any(b["source"] == "catalog" for b in config["benchmarks"].values())
    else {}
)


wildcard_constraints:
    model="[A-Za-z0-9_.-]+",
    method="[A-Za-z0-9_.-]+",
    seed=r"\d+",
    bench="[A-Za-z0-9_.-]+",
    table="[A-Za-z0-9_.-]+",
    experiment="[A-Za-z0-9_.-]+",


def as_json(obj):
    return json.dumps(obj, sort_keys=True)


def get_final_output():
    return (
        expand(
            "results/tables/{table}.{ext}",
            table=list(config["tables"]),
            ext=["csv", "md", "tex", "html"],
        )
        + get_curves()
        + get_figures()
        + COST_TABLE
    )


def get_cost_inputs():
    """What the tables and figures read (evaluations, curves, runs, analyses): the cost table
    waits for the jobs whose records it sums, and a table's layout change does not re-run it.
    """
    tables = [
        path
        for table in config["tables"]
        for path in get_table_evals(SimpleNamespace(table=table))
    ]
    figures = [
        path
        for model, name in planned_figures(config, RUNS)
        for path in dag_inputs(name, figure_slice(FIGURES[name], config, RUNS, model))
    ]
    return sorted(set(tables + figures + get_curves()))


COST_TABLE = [f"results/tables/cost_by_stage.{ext}" for ext in ("csv", "md", "html")]


def get_cost_config():
    methods = list(dict.fromkeys([BASE_METHOD, *METHODS]))
    return as_json({"models": MODELS, "methods": methods, "seeds": SEEDS})


def get_figures():
    """Each planned figure, and the table of those that have one (Figure.table)."""
    return [
        f"results/figures/{config['experiment']}/{model}/{name}.{ext}"
        for model, name in planned_figures(config, RUNS)
        for ext in ("png", "pdf")
        + (("csv", "md", "html") if FIGURES[name].table else ())
    ]


def get_table_figure_pattern():
    """Wildcard constraint matching exactly the figures that have a table."""
    return "|".join(name for name, figure in FIGURES.items() if figure.table) or "(?!)"


def get_figure_config(wildcards):
    return as_json(
        figure_slice(FIGURES[wildcards.figure], config, RUNS, wildcards.model)
    )


def get_figure_caption(wildcards):
    slice_ = figure_slice(FIGURES[wildcards.figure], config, RUNS, wildcards.model)
    return figure_caption(FIGURES[wildcards.figure], slice_)


def get_figure_inputs(wildcards):
    slice_ = figure_slice(FIGURES[wildcards.figure], config, RUNS, wildcards.model)
    return dag_inputs(wildcards.figure, slice_)


def get_figure_code(wildcards):
    return code_fingerprint(
        "fpa.cli.figure",
        "fpa.figures",
        "fpa.figures.data",
        "fpa.figures.panels",
        "fpa.figures.paths",
        "fpa.figures.style",
        f"fpa.figures.{wildcards.figure}",
    )


def get_curves():
    """Curve CSVs of the runs the planned figures draw (fpa.figures.planned_curves)."""
    return planned_curves(config, RUNS)


def get_resources(group):
    """What a job of the rules of ``group`` requests: config ``resources.<group>``, its
    defaults filled from the schema (the SLURM plugin's names: mem_mb, runtime,
    cpus_per_task, gpu, slurm_partition, slurm_extra)."""
    return config["resources"][group]


def get_model_config(wildcards):
    return as_json(config["models"][wildcards.model])


def get_base_model(wildcards):
    if config["models"][wildcards.model]["source"] == "hub":
        return f"resources/models/{wildcards.model}"
    return f"results/models/{wildcards.model}/base"


def get_run(wildcards):
    return RUNS[(wildcards.model, wildcards.method)]


def get_catalog_file(name):
    return f"resources/data/{find_entry(CATALOG, name)[1]['path']}"


def get_catalog_entry_json(wildcards):
    for section in ALL_SECTIONS:
        for entry in CATALOG.get(section, {}).values():
            if entry.get("path") == wildcards.path:
                return as_json(entry)
    raise ValueError(
        f"resources/data/{wildcards.path}: not a file of {config['data']['catalog']}"
    )


def get_benchmark_parts(wildcards):
    return {
        part: get_catalog_file(part)
        for part in config["benchmarks"][wildcards.bench]["parts"]
    }


def get_math12k_files(wildcards):
    return {name: get_catalog_file(name) for name in MATH12K_FILES}


def get_run_json(wildcards):
    return as_json(get_run(wildcards).config_slice())


def get_train_inputs(wildcards):
    inputs = {
        "model": get_base_model(wildcards),
        "train": f"results/datasets/{wildcards.model}/train.jsonl",
        "val": f"results/datasets/{wildcards.model}/val.jsonl",
    }
    run = get_run(wildcards)
    # every cached-reference run reads the cache: the objective's own terms, or only the
    # logged log-ratio diagnostics (training.diagnostics)
    if run.training["reference"] == "cached" and (
        get_objective(run.objective).needs_reference or run.training["diagnostics"]
    ):
        inputs["reference"] = f"results/reference/{wildcards.model}/cache"
    return inputs


# the runs trained online (fpa.online, by train_online); train trains every other one
ONLINE_RUNS = sorted({run.name for run in RUNS.values() if run.online})


def get_run_pattern(online):
    """Wildcard constraint matching exactly the online runs, or every other method (a path
    segment: the lookahead stops at the next path separator or the end)."""
    online_names = "|".join(map(re.escape, ONLINE_RUNS)) or "(?!)"
    return online_names if online else f"(?!(?:{online_names})(?:/|$))[A-Za-z0-9_.-]+"


def get_online_inputs(wildcards):
    """The base model and the training problems, less the offline dataset's held-out validation ones."""
    return {
        "model": get_base_model(wildcards),
        "problems": "results/problems/train.jsonl",
        "exclude": f"results/datasets/{wildcards.model}/val.jsonl",
    }


def get_online_config(wildcards):
    """What an online run depends on beyond its run slice: the prompts and the generation backend."""
    return sampling_config(wildcards.model)


def get_online_code(wildcards):
    return code_fingerprint(
        "fpa.cli.train_online",
        "fpa.online.run",
        "fpa.online.trainer",
        f"fpa.online.{get_run(wildcards).objective}",
        grader_module(get_dataset_grader()),
    )


def get_dataset_grader():
    """The grader labelling the dataset's samples: the online methods' reward."""
    return DATASET_GRADER[config["dataset"]["source"]]


def get_reference_option(wildcards, input):
    return f"--reference {input.reference}" if hasattr(input, "reference") else ""


def get_train_code(wildcards):
    objective = get_objective(get_run(wildcards).objective)
    return code_fingerprint("fpa.training.loop", objective.loss.__module__)


def get_checkpoint(wildcards):
    """The model a run's evaluation samples: its final checkpoint, or its selected one
    (``model_selection``)."""
    if wildcards.method == BASE_METHOD:
        return get_base_model(wildcards)
    run = f"results/train/{wildcards.model}/{wildcards.method}/{wildcards.seed}"
    return f"{run}/selected" if config["model_selection"] else f"{run}/checkpoint"


def get_selection_records(wildcards):
    return benchmark_file(config["model_selection"]["benchmark"], wildcards.model)


def get_selection_config(wildcards):
    bench = config["model_selection"]["benchmark"]
    return sampling_config(wildcards.model, benchmarks={bench: get_bench_slice(bench)})


def benchmark_file(name, model=None):
    """The records file (JSONL) of benchmark ``name`` (of ``model`` for its validation split)."""
    bench = config["benchmarks"][name]
    if bench["source"] == "validation":
        return f"results/benchmarks/validation/{model}.jsonl"
    if bench["source"] == "file":
        return bench["path"]
    return f"results/benchmarks/{bench['source']}/{name}.jsonl"


def get_benchmark_file(wildcards):
    return benchmark_file(wildcards.bench)


def get_bench_slice(name):
    """A benchmark's config without its display ``label`` (a header change re-runs only tables)."""
    return {k: v for k, v in config["benchmarks"][name].items() if k != "label"}


def get_benchmark_config(wildcards):
    return as_json(get_bench_slice(wildcards.bench))


def sampling_config(model, **slices):
    """What sampling ``model`` depends on: its prompts, the generation settings and ``slices``
    (``dataset=``, ``benchmark=`` or ``benchmarks=``)."""
    return as_json(
        {
            **slices,
            "generation": config["generation"],
            "prompt_template": config["models"][model]["prompt_template"],
            "chat_template": config["models"][model]["chat_template"],
        }
    )


def get_eval_config(wildcards):
    return sampling_config(wildcards.model, benchmark=get_bench_slice(wildcards.bench))


def get_sampling_args(wildcards, input, output):
    """``--benchmark NAME FILE OUT`` for each benchmark of a sampling job: its inputs
    ``benchmarks`` and its outputs are both in benchmark order, named ``<bench>.json``.
    """
    return " ".join(
        f"--benchmark {Path(out).stem} {shlex.quote(records)} {out}"
        for records, out in zip(input.benchmarks, output)
    )


def get_table_pattern():
    """Wildcard constraint matching exactly the config's tables (not the cost table beside them)."""
    return "|".join(map(re.escape, config["tables"])) or "(?!)"


# each table's layout, built once (input, params and the cost table all read it)
TABLE_LAYOUTS = {
    name: build_layout(name, spec, config, RUNS)
    for name, spec in config["tables"].items()
}


def get_table_layout(wildcards):
    return TABLE_LAYOUTS[wildcards.table]


def get_table_evals(wildcards):
    """The files a table reads: evaluations, or the runs' checkpoints (overhead table)."""
    layout = get_table_layout(wildcards)
    return list(
        dict.fromkeys(
            layout.input_path(key, seed)
            for key in layout.cell_keys()
            for seed in key.seeds
        )
    )


def get_table_columns(wildcards):
    return ", ".join(get_table_layout(wildcards).columns)


def get_table_config(wildcards):
    return as_json(get_table_layout(wildcards).to_json())


def get_toy_train_problems_config():
    dataset = config["dataset"]
    return as_json(
        {
            "n_problems": dataset["n_problems"],
            "n_operands": dataset["n_operands"],
            "min_operands": dataset["min_operands"],
        }
    )


def get_dataset_config(wildcards):
    return sampling_config(wildcards.model, dataset=config["dataset"])


def get_step_dpo_config(wildcards):
    """What the Step-DPO dataset of a model depends on: its prompts and the split (no sampling)."""
    model = config["models"][wildcards.model]
    dataset = config["dataset"]
    return as_json(
        {
            "dataset": {
                key: dataset[key] for key in ("source", "seed", "validation_fraction")
            },
            "prompt_template": model["prompt_template"],
            "chat_template": model["chat_template"],
        }
    )


def get_step_dpo_inputs(wildcards):
    """The pairs, and the base model when its chat template renders the prompts."""
    inputs = {"pairs": get_catalog_file(STEP_DPO_FILE)}
    if config["models"][wildcards.model]["chat_template"]:
        inputs["model"] = get_base_model(wildcards)
    return inputs


def get_model_option(wildcards, input):
    return f"--model {input.model}" if hasattr(input, "model") else ""


def get_catalog_path():
    path = Path(config["data"]["catalog"])
    return str(
        path if path.is_absolute() or path.is_file() else Path(workflow.basedir) / path
    )


def get_mirror_option():
    mirror = config["data"]["mirror"]
    return f"--mirror {mirror}" if mirror else ""


def get_numerics():
    """Shell exports pinning the CPU kernels of a model job (fpa.numerics)."""
    return portable_env_prefix() if config["portable_cpu_numerics"] else ""


def get_code(*modules):
    return code_fingerprint(*modules)


# Benchmarks of the tables, sampled and graded in one job per checkpoint (rule evaluate),
# and code benchmarks, sampled in one job per checkpoint and graded in the sandbox
# (code.smk). A benchmark only in curve_benchmarks is sampled by the curve jobs alone.
TABLE_BENCHES = list(
    dict.fromkeys(
        b for spec in config["tables"].values() for b in table_benchmarks(spec)
    )
)
CODE_BENCHES = [
    name
    for name in TABLE_BENCHES
    if is_code_grader(config["benchmarks"][name]["grader"])
]
EVAL_BENCHES = [name for name in TABLE_BENCHES if name not in CODE_BENCHES]


def get_code_bench_pattern():
    """Wildcard constraint matching exactly the code benchmarks."""
    return "|".join(map(re.escape, CODE_BENCHES))


def get_curve_snapshots(wildcards):
    """A run's snapshots; the base model is the step 0 of every curve (method ``base``)."""
    if wildcards.method == BASE_METHOD:
        return get_base_model(wildcards)
    return (
        f"results/train/{wildcards.model}/{wildcards.method}/{wildcards.seed}/snapshots"
    )


def get_curve_args(wildcards, input):
    return " ".join(
        f"--benchmark {bench} {shlex.quote(records)}"
        for bench, records in zip(config["curve_benchmarks"], input.benchmarks)
    )


def get_curve_config(wildcards):
    return sampling_config(
        wildcards.model,
        benchmarks={b: get_bench_slice(b) for b in config["curve_benchmarks"]},
    )


def get_future_policy_bench(wildcards):
    """The benchmark whose prompts the future-policy analysis samples: the first curve benchmark."""
    return config["curve_benchmarks"][0]


def get_future_policy_records(wildcards):
    return benchmark_file(get_future_policy_bench(wildcards), wildcards.model)


def get_eval_records(wildcards):
    return [benchmark_file(bench, wildcards.model) for bench in EVAL_BENCHES]


def get_curve_records(wildcards):
    return [
        benchmark_file(bench, wildcards.model) for bench in config["curve_benchmarks"]
    ]


def get_future_policy_config(wildcards):
    settings = {
        **config["future_policy"],
        "max_length": get_run(wildcards).training["max_length"],
    }
    return sampling_config(
        wildcards.model,
        future_policy=settings,
        benchmarks={b: get_bench_slice(b) for b in config["curve_benchmarks"][:1]},
    )


def get_entanglement_config(wildcards):
    return as_json(
        {**config["entanglement"], "max_length": config["training"]["max_length"]}
    )


def get_entanglement_pairs(wildcards):
    """The preference datasets measured beside the offline data (the paper's pilot), by name."""
    return {
        name: {"loader": loader, "path": get_catalog_file(name)}
        for name, loader in pair_loaders(
            config["entanglement"]["preference"], CATALOG
        ).items()
    }


def get_entanglement_pair_files(wildcards):
    return [source["path"] for source in get_entanglement_pairs(wildcards).values()]


def get_entanglement_pairs_json(wildcards):
    return as_json(get_entanglement_pairs(wildcards))


def get_evaluate_config(wildcards):
    return sampling_config(
        wildcards.model, benchmarks={b: get_bench_slice(b) for b in EVAL_BENCHES}
    )


def get_generate_code_config(wildcards):
    return sampling_config(
        wildcards.model, benchmarks={b: get_bench_slice(b) for b in CODE_BENCHES}
    )


def graders_code(command, benches):
    """Fingerprint of a command and the graders of ``benches``."""
    graders = {grader_module(config["benchmarks"][b]["grader"]) for b in benches}
    return code_fingerprint(command, *sorted(graders))


def get_code_tasks(wildcards):
    """The task file the code grader reads (tests): the column's one catalog part."""
    bench = config["benchmarks"][wildcards.bench]
    if bench["source"] == "file":
        return bench["path"]
    return get_catalog_file(bench["parts"][0])


def get_code_eval_code(wildcards):
    return graders_code("fpa.cli.code", [wildcards.bench])


def get_code_train_files(wildcards):
    return {name: get_catalog_file(name) for name in CODE_TRAIN_FILES}


def get_threads(group):
    """Threads of a job of the rules of ``group``: the CPUs it requests."""
    return config["resources"][group]["cpus_per_task"]


def get_processes(group):
    """Processes of a job of the rules of ``group``: one per GPU, or its CPU ``processes``."""
    return job_processes(config["resources"][group])
