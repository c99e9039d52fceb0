"""The helpers of ``workflow/rules/tables.smk``: each table of the config (rule aggregate), the tables
compared with the paper summarised (rule reproduction), and the cost by stage (rule cost)."""

from __future__ import annotations

import re
from typing import Mapping

from fpa import paths
from fpa.aggregation.grid import BASE_METHOD
from fpa.errors import ConfigError
from fpa.planning.stage import NOTHING, Stage, as_json

#: the formats of a table that rule all asks for (its JSON is read by rule reproduction)
TABLE_FORMATS = ("csv", "md", "tex", "html")


def _own_table(name: str) -> tuple[str, ...]:
    return tuple(paths.TABLE[ext].format(table=name) for ext in ("csv", "md", "html"))


#: the tables the workflow makes itself (no config table may take their names), each as csv, md and html:
#: the cost by stage (rule cost) and the tables compared with the paper (tables.<t>.paper_results),
#: summarised (rule reproduction)
OWN_TABLES = {name: _own_table(name) for name in ("cost_by_stage", "reproduction")}
COST_TABLE, REPRODUCTION_TABLE = OWN_TABLES.values()


def check_own_tables(config: Mapping, where: str) -> None:
    """No config table takes the name of a table the workflow makes itself (two rules would make its files)."""
    for name in config["tables"]:
        if name in OWN_TABLES:
            raise ConfigError(f"{where}: tables.{name}: the name of a table the workflow makes itself "
                              f"({', '.join(OWN_TABLES)}); expected another name")


class TablesStage(Stage):
    def outputs(self) -> list[str]:
        """Each table of the config, in every format rule all asks for."""
        return [paths.TABLE[ext].format(table=table) for table in self.config["tables"] for ext in TABLE_FORMATS]

    def summaries(self) -> list[str]:
        """The cost table and, when a table is compared with the paper, the reproduction summary."""
        return list(COST_TABLE) + (list(REPRODUCTION_TABLE) if self.compared() else [])

    def pattern(self) -> str:
        """The config's tables (not the cost table beside them)."""
        return "|".join(map(re.escape, self.config["tables"])) or NOTHING

    def evals(self, wildcards) -> list[str]:
        """The files a table reads: evaluations, or the runs' checkpoints (overhead table)."""
        layout = self.plan.layouts[wildcards.table]
        return list(dict.fromkeys(layout.input_path(key, seed) for key in layout.cell_keys() for seed in key.seeds))

    def config_json(self, wildcards) -> str:
        return as_json(self.plan.layouts[wildcards.table].to_json())

    def caption(self, wildcards) -> str:
        from fpa.aggregation.tables import report_caption

        return report_caption(self.plan.layouts[wildcards.table], wildcards.table)

    def compared(self) -> list[str]:
        """The JSON of each table compared with the paper (rule reproduction's inputs)."""
        return [paths.TABLE["json"].format(table=name) for name, layout in self.plan.layouts.items()
                if layout.paper_label]

    def cost_inputs(self) -> list[str]:
        """What the tables and figures read (evaluations, curves, runs, analyses): the cost table
        waits for the jobs whose records it sums, and a table's layout change does not re-run it."""
        tables = [layout.input_path(key, seed) for layout in self.plan.layouts.values()
                  for key in layout.cell_keys() for seed in key.seeds]
        figures = self.plan.figures.every_input()
        return sorted(set(tables + figures + self.plan.curves()))

    def cost_config(self) -> str:
        methods = list(dict.fromkeys([BASE_METHOD, *self.plan.methods]))
        return as_json({"models": self.plan.models, "methods": methods, "seeds": self.plan.seeds})
