"""The plan of one experiment: what ``workflow/rules/*.smk`` asks of a config, computed once.

``Plan.from_config(config, basedir)`` (which ``fpa.planning.judge`` calls) validates the config and
builds its run grid, every table layout and figure slice once. What the rules of one file
(``workflow/rules/<stage>.smk``) call is the stage of that name (``plan.data``, ``plan.train``, ...,
``fpa.planning.<stage>``); the plan itself holds what every stage shares: the job settings, the base
model, the benchmarks' records and the catalog's files, the sampling settings. A method that
Snakemake calls per job takes the job's ``wildcards`` (and ``input``/``output``), as input
functions do.

    plan = judge(["config/config.yaml"])
    plan.final_output()                                  # what rule all asks for
    plan.tables.evals(SimpleNamespace(table="toy"))      # rule aggregate's input
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from fpa import paths
from fpa.aggregation.grid import BASE_METHOD
from fpa.aggregation.layout import table_benchmarks
from fpa.catalog import find_entry
from fpa.config import check_config
from fpa.config.catalog import load_catalog
from fpa.config.graders import reads_task_file
from fpa.config.runs import Run, run_names
from fpa.containment import WORK_AREAS, outside_work_areas
from fpa.data.dataset_files import DATASET_FILES
from fpa.data.models import model_mirror
from fpa.errors import ConfigError
from fpa.grading import grader_module
from fpa.numerics import portable_env_prefix
from fpa.planning.analysis import AnalysisStage
from fpa.planning.code import CodeStage
from fpa.planning.data import DataStage
from fpa.planning.dataset import DatasetStage
from fpa.planning.evaluate import EvaluateStage
from fpa.planning.figures import FigureStage, check_snapshot_steps
from fpa.planning.reference import ReferenceStage
from fpa.planning.shell import shell_words
from fpa.planning.stage import as_json, run_file
from fpa.planning.tables import TablesStage, check_own_tables
from fpa.planning.toy import ToyStage
from fpa.planning.train import TrainStage
from fpa.planning.validation import check_planning
from fpa.provenance.fingerprint import code_fingerprint
from fpa.resources import group_request, job_device, job_processes


class Plan:
    """Runs, benchmarks, tables and figures of a ``config`` valid for ``fpa.config``, its run grid
    ``runs`` (the checks of ``fpa.planning.validation`` run here, errors naming ``where``); ``basedir``
    is the workflow's directory (relative catalog paths are read from there); ``gpu_partition`` the
    site's partition of the jobs that compute on a GPU (the SLURM profile's, ``fpa.resources.GPU_PARTITION``),
    or None."""

    def __init__(self, config: Mapping, runs: Mapping[tuple[str, str], Run], basedir: str | Path,
                 where: str = "config", gpu_partition: str | None = None):
        self.config = config
        self.basedir = Path(basedir)
        self.runs = runs
        self.gpu_partition = gpu_partition
        self.models = list(config["models"])
        self.seeds = [str(seed) for seed in config["seeds"]]
        self.methods = ([BASE_METHOD] if config["evaluate_base"] else []) + run_names(self.runs)
        uses_catalog = config["dataset"]["source"] in DATASET_FILES or any(
            bench["source"] == "catalog" for bench in config["benchmarks"].values())
        self.catalog = load_catalog(config, "config") if uses_catalog else {}
        self.model_mirror = model_mirror(config, where)  # where fetch_model reads the hub models
        self.layouts = check_planning(config, where, self.runs)
        # benchmarks of the tables: code ones whose grader reads their task file sampled, then
        # graded in the sandbox (code.smk), the others (a code dataset's validation problems too)
        # sampled and graded in one job per checkpoint (rule evaluate); a benchmark only in
        # curve_benchmarks is sampled by the curve jobs alone
        table_benches = list(dict.fromkeys(
            bench for spec in config["tables"].values() for bench in table_benchmarks(spec)))
        self.code_benches = [b for b in table_benches if reads_task_file(config["benchmarks"][b]["grader"])]
        self.eval_benches = [b for b in table_benches if b not in self.code_benches]
        # the runs trained online (fpa.online, by rule train_online); rule train trains the others
        self.online_runs = sorted({run.name for run in self.runs.values() if run.online})
        self.data, self.toy, self.dataset = DataStage(self), ToyStage(self), DatasetStage(self)
        self.reference, self.train = ReferenceStage(self), TrainStage(self)
        self.evaluate, self.code = EvaluateStage(self), CodeStage(self)
        self.tables, self.analysis, self.figures = TablesStage(self), AnalysisStage(self), FigureStage(self)
        check_snapshot_steps(config, self.runs, self.figures.planned(), where)

    @classmethod
    def from_config(cls, config: dict, basedir: str | Path, where: str = "config",
                    gpu_partition: str | None = None) -> Plan:
        """Validate ``config`` (its defaults filled in place) and plan it; a ``ConfigError`` names
        ``where`` and the key."""
        runs = check_config(config, where)
        check_own_tables(config, where)
        plan = cls(config, runs, basedir, where, gpu_partition)
        outside = outside_work_areas(plan.final_output(), ".")
        if outside:  # names and catalog paths are checked one by one; this is what they add up to
            raise ConfigError(f"{where}: plans {outside[0]!r}, outside the work directory's {', '.join(WORK_AREAS)}")
        return plan

    def run(self, wildcards) -> Run:
        return self.runs[(wildcards.model, wildcards.method)]

    def final_output(self) -> list[str]:
        """What rule all asks for: the tables, curves, figures, the cost table and, when a table is
        compared with the paper, the reproduction summary."""
        return self.tables.outputs() + self.curves() + self.figures.outputs() + self.tables.summaries()

    def curves(self) -> list[str]:
        """Curve CSVs of the runs the planned figures draw (``fpa.planning.figures.planned_curves``)."""
        return self.figures.curves()

    # a job's settings, by the resource group of its rule

    def resources(self, group: str) -> dict:
        """What a job of the rules of ``group`` requests: config ``resources.<group>``, its
        defaults filled from the schema, in the SLURM plugin's names, sent to the site's GPU partition
        where it computes on a GPU, marked where it runs where snakemake runs (``fpa.resources.group_request``)."""
        return group_request(self.config["resources"][group], group, self.device(group), self.gpu_partition)

    def threads(self, group: str) -> int:
        """Threads of a job of the rules of ``group``: the CPUs it requests."""
        return self.config["resources"][group]["cpus_per_task"]

    def processes(self, group: str) -> int:
        """Processes of a job of the rules of ``group``: one per GPU, or its CPU ``processes``."""
        return job_processes(self.config["resources"][group])

    def device(self, group: str) -> str:
        """Where a job of ``group`` computes (``fpa.resources.job_device``)."""
        return job_device(self.config, group)

    def numerics(self) -> str:
        """Shell exports pinning the CPU kernels of a model job (fpa.numerics)."""
        return portable_env_prefix(self.config["mkl_cbwr"]) if self.config["portable_cpu_numerics"] else ""

    # what several stages read

    def base_model(self, wildcards) -> str:
        """A model's weights before training: fetched from the hub (rule fetch_model), or built (toy)."""
        template = paths.HUB_MODEL if self.config["models"][wildcards.model]["source"] == "hub" else paths.TOY_MODEL
        return template.format(model=wildcards.model)

    def checkpoint(self, wildcards) -> str:
        """The model a run's evaluation samples: its final checkpoint, or its selected one
        (``model_selection``)."""
        if wildcards.method == BASE_METHOD:
            return self.base_model(wildcards)
        template = paths.SELECTED if self.config["model_selection"] else paths.CHECKPOINT
        return run_file(template, wildcards)

    def benchmark_file(self, name: str, model: str | None = None) -> str:
        """The records file (JSONL) of benchmark ``name`` (of ``model`` for its validation split)."""
        source = self.config["benchmarks"][name]["source"]
        if source == "validation":
            return paths.VALIDATION_BENCHMARK.format(model=model)
        return paths.BENCHMARK[source].format(bench=name)

    def catalog_file(self, name: str) -> str:
        return paths.DATA_FILE.format(path=find_entry(self.catalog, name)[1]["path"])

    def model_config(self, wildcards) -> str:
        return as_json(self.config["models"][wildcards.model])

    def benchmark_config(self, wildcards) -> str:
        return as_json(self.bench_slice(wildcards.bench))

    def bench_slice(self, name: str) -> dict:
        """A benchmark's config without its display ``label`` (a header change re-runs only tables)."""
        return {key: value for key, value in self.config["benchmarks"][name].items() if key != "label"}

    def benches_slice(self, names) -> dict:
        return {name: self.bench_slice(name) for name in names}

    def sampling_config(self, model: str, **slices) -> str:
        """What sampling ``model`` depends on: its prompts, the generation settings and ``slices``
        (``dataset=``, ``benchmark=`` or ``benchmarks=``)."""
        return as_json({**slices, "generation": self.config["generation"], **self.prompt_slice(model)})

    def prompt_slice(self, model: str) -> dict:
        """How ``model``'s prompts are rendered: its template, and its chat template's pinned date if it has one."""
        entry = self.config["models"][model]
        pinned = {"chat_date": entry["chat_date"]} if entry["chat_template"] else {}
        return {"prompt_template": entry["prompt_template"], "chat_template": entry["chat_template"], **pinned}

    def sampling_args(self, wildcards, input, output) -> str:
        """``--benchmark NAME FILE OUT`` for each benchmark of a sampling job (rules evaluate and
        generate_code): its inputs ``benchmarks`` and its outputs are both in benchmark order, named
        ``<bench>.json``."""
        return " ".join(shell_words("--benchmark", Path(out).stem, records, out)
                        for records, out in zip(input.benchmarks, output))

    def graders_code(self, command: str, benches) -> str:
        """Fingerprint of a command and the graders of ``benches``."""
        graders = {grader_module(self.config["benchmarks"][bench]["grader"]) for bench in benches}
        return code_fingerprint(command, *sorted(graders))
