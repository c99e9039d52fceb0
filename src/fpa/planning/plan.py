"""The plan of one experiment: what ``workflow/rules/*.smk`` asks of a config, computed once.

``Plan.from_config(config, basedir)`` (which ``fpa.planning.judge`` calls) validates the config, expands the run grid and builds every table layout and figure
slice once; the rules' input, params and wildcard-constraint functions are its methods
(``common.smk`` binds them to the ``get_*`` names the rules use). A method that Snakemake
calls per job takes the job's ``wildcards`` (and ``input``/``output``), as input functions do.

    plan = Plan.from_config(config, "/path/to/fpa-bench", where="config.yaml")
    plan.final_output()                      # what rule all asks for
    plan.table_evals(SimpleNamespace(table="main"))
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from fpa.aggregation.grid import BASE_METHOD
from fpa.aggregation.layout import table_benchmarks
from fpa.config import check_config
from fpa.config.catalog import load_catalog
from fpa.config.graders import reads_task_file
from fpa.config.runs import Run, run_names
from fpa.containment import WORK_AREAS, outside_work_areas
from fpa.data.dataset_files import DATASET_FILES
from fpa.errors import ConfigError
from fpa.figures import FIGURES
from fpa.memory.training import compute_weights_dtype, reference_cache_dtype
from fpa.planning.figures import FigurePlan, check_snapshot_steps, planned_curves
from fpa.planning.paths import PlanPaths
from fpa.planning.shell import ShellArgs
from fpa.planning.slices import ConfigSlices
from fpa.planning.validation import NAME, check_planning
from fpa.resources import job_device, job_request

TABLE_FORMATS = ("csv", "md", "tex", "html")
COST_TABLE = tuple(f"results/tables/cost_by_stage.{ext}" for ext in ("csv", "md", "html"))
#: the tables compared with the paper (tables.<t>.paper_results), summarised by rule reproduction
REPRODUCTION_TABLE = tuple(f"results/tables/reproduction.{ext}" for ext in ("csv", "md", "html"))
#: a wildcard constraint that no name matches (a rule with nothing to make)
NOTHING = "(?!)"


def _check_own_tables(config: Mapping, where: str) -> None:
    """No config table takes the name of a table the workflow makes itself (two rules would make its files)."""
    own = sorted({Path(path).stem for path in (*COST_TABLE, *REPRODUCTION_TABLE)})
    for name in config["tables"]:
        if name in own:
            raise ConfigError(f"{where}: tables.{name}: the name of a table the workflow makes itself "
                              f"({', '.join(own)}); expected another name")


class Plan(PlanPaths, ConfigSlices, ShellArgs, FigurePlan):
    """Runs, benchmarks, tables and figures of a ``config`` valid for ``fpa.config`` (the checks
    of ``fpa.planning.validation`` run here, errors naming ``where``); ``basedir`` is the
    workflow's directory (relative catalog paths are read from there)."""

    def __init__(self, config: Mapping, runs: Mapping[tuple[str, str], Run], basedir: str | Path,
                 where: str = "config"):
        self.config = config
        self.basedir = Path(basedir)
        self.runs = runs
        self.models = list(config["models"])
        self.seeds = [str(seed) for seed in config["seeds"]]
        self.methods = ([BASE_METHOD] if config["evaluate_base"] else []) + run_names(self.runs)
        uses_catalog = config["dataset"]["source"] in DATASET_FILES or any(
            bench["source"] == "catalog" for bench in config["benchmarks"].values())
        self.catalog = load_catalog(config, "config") if uses_catalog else {}
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
        FigurePlan.__init__(self)
        check_snapshot_steps(config, self.runs, self.planned_figures(), where)

    @classmethod
    def from_config(cls, config: dict, basedir: str | Path, where: str = "config") -> Plan:
        """Validate ``config`` (its defaults filled in place) and plan it; a ``ConfigError`` names
        ``where`` and the key."""
        runs = check_config(config, where)
        _check_own_tables(config, where)
        plan = cls(config, runs, basedir, where)
        outside = outside_work_areas(plan.final_output(), ".")
        if outside:  # names and catalog paths are checked one by one; this is what they add up to
            raise ConfigError(f"{where}: plans {outside[0]!r}, outside the work directory's {', '.join(WORK_AREAS)}")
        return plan

    def run(self, wildcards):
        return self.runs[(wildcards.model, wildcards.method)]

    def final_output(self) -> list[str]:
        """What rule all asks for: the tables, curves, figures, the cost table and, when a table is
        compared with the paper, the reproduction summary."""
        tables = [f"results/tables/{table}.{ext}" for table in self.config["tables"] for ext in TABLE_FORMATS]
        reproduction = list(REPRODUCTION_TABLE) if self.compared_tables() else []
        return tables + self.curves() + self.figure_outputs() + list(COST_TABLE) + reproduction

    def compared_tables(self) -> list[str]:
        """The JSON of each table compared with the paper (rule reproduction's inputs)."""
        return [f"results/tables/{name}.json" for name, layout in self.layouts.items() if layout.paper_label]

    def curves(self) -> list[str]:
        """Curve CSVs of the runs the planned figures draw (``fpa.planning.figures.planned_curves``)."""
        return planned_curves(self.config, self.runs)

    def table_evals(self, wildcards) -> list[str]:
        """The files a table reads: evaluations, or the runs' checkpoints (overhead table)."""
        layout = self.layouts[wildcards.table]
        return list(dict.fromkeys(layout.input_path(key, seed) for key in layout.cell_keys() for seed in key.seeds))

    def table_caption(self, wildcards) -> str:
        from fpa.aggregation.tables import report_caption

        return report_caption(self.layouts[wildcards.table], wildcards.table)

    def cost_inputs(self) -> list[str]:
        """What the tables and figures read (evaluations, curves, runs, analyses): the cost table
        waits for the jobs whose records it sums, and a table's layout change does not re-run it."""
        tables = [path for layout in self.layouts.values()
                  for key in layout.cell_keys() for seed in key.seeds
                  for path in [layout.input_path(key, seed)]]
        figures = [path for model, name in self.planned_figures() for path in self.figure_dag_inputs(model, name)]
        return sorted(set(tables + figures + self.curves()))

    def resources(self, group: str) -> dict:
        """What a job of the rules of ``group`` requests: config ``resources.<group>``, its
        defaults filled from the schema, in the SLURM plugin's names (``fpa.resources.job_request``)."""
        return job_request(self.config["resources"][group])

    def device(self, group: str) -> str:
        """Where a job of ``group`` computes (``fpa.resources.job_device``)."""
        return job_device(self.config, group)

    def reference_weights_dtype(self) -> str:
        """The dtype the reference cache's model computes in: the training's (``compute_weights_dtype``)."""
        return compute_weights_dtype(self.config["training"])

    def reference_dtype(self) -> str:
        """The dtype the reference cache stores z_ref in: the input precision of the training's head
        products, on the training's device (``reference_cache_dtype``)."""
        return reference_cache_dtype(self.config["training"], self.device("train"))

    def threads(self, group: str) -> int:
        """Threads of a job of the rules of ``group``: the CPUs it requests."""
        return self.config["resources"][group]["cpus_per_task"]

    # wildcard constraints: each matches exactly the names its rule makes

    def table_pattern(self) -> str:
        """The config's tables (not the cost table beside them)."""
        return "|".join(map(re.escape, self.config["tables"])) or NOTHING

    def code_bench_pattern(self) -> str:
        return "|".join(map(re.escape, self.code_benches))

    def run_pattern(self, online: bool) -> str:
        """The online runs, or every other method (a path segment: the lookahead stops at the
        next path separator or the end)."""
        online_names = "|".join(map(re.escape, self.online_runs)) or NOTHING
        return online_names if online else f"(?!(?:{online_names})(?:/|$)){NAME}"

    @staticmethod
    def table_figure_pattern() -> str:
        """The figures that have a table (Figure.table)."""
        return "|".join(name for name, figure in FIGURES.items() if figure.table) or NOTHING
