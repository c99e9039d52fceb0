"""What a figure is (``Figure``, the record a figure module registers) and what it is given to draw
(``FigureInputs``: per role, the files of each seed)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Mapping

#: The role of the base model (a figure ``of_base`` draws it alone).
BASE_ROLE = "base"


@dataclass(frozen=True)
class FigureInputs:
    """Per role, the files of each seed (aligned with ``seeds``), and how to label them."""

    seeds: list[int]
    metrics: dict[str, list[str]]  # role -> training_metrics.csv per seed
    curves: dict[str, list[str]]  # role -> curve CSV per seed (figures that use curves)
    base_curves: list[str]  # the base model's curve per seed (step 0)
    labels: dict[str, str]  # role -> method label as in the tables
    styles: dict[str, int]  # role -> its colour and line style (fpa.figures.style.line_style)
    curve_benchmark: str | None
    evals: dict[str, dict[str, list[str]]]  # role -> benchmark -> final evaluation per seed (figures that use evals)
    benchmarks: list[str]  # the first table's benchmarks (figures that use evals)
    lam: dict[str, float]  # role -> the run's FPA λ (0 for objectives without one)
    analyses: dict[str, list[str]]  # role -> the figure's analysis CSV per seed (figures with an analysis)
    # role -> the outputs a run needs before it trains (offline data, the reference cache when its
    # objective reads it), whose provenance says what they cost; empty for online runs
    stages: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    curve_label: str | None = None  # the curve benchmark as tables head it (benchmarks.<b>.label, else its name)

    def in_style_order(self, roles) -> list[str]:
        """``roles`` in the order of their styles: the fixed roles first (Off-RL, FPA, ...), then the
        others in config order. A figure's legend keeps it, whatever order its config slice's
        keys come in (the DAG passes the slice as sorted JSON)."""
        return sorted(roles, key=self.styles.__getitem__)

    def curves_read(self) -> list[str]:
        """Every curve CSV read, the base model's included."""
        return [path for paths in self.curves.values() for path in paths] + list(self.base_curves)


@dataclass(frozen=True)
class Figure:
    """A registered figure.

    Attributes:
      name: registry key, the ``figures:`` key in config and the output file name.
      roles: objectives the figure draws, in legend order; empty: every method of the config
        (with snapshots, for a figure that uses curves), each its own role.
      caption: what it shows (the report's caption; the runs drawn are appended).
      draw: ``FigureInputs -> matplotlib Figure``.
      uses_curves: needs accuracy through training (snapshots + curve benchmarks).
      uses_metrics: reads the runs' per-step training metrics.
      uses_evals: reads the runs' final evaluations on the first table's benchmarks.
      objectives: with empty ``roles``, only methods of these objectives (empty: all).
      analysis: the ``fpa.analysis`` result it draws (``results/analysis/<analysis>/...``), or None.
      of_base: draws the base model only (role ``base``), not training runs.
      uses_stages: reads what each run's data generation and reference cache cost (wall clock).
      table: ``FigureInputs -> pandas DataFrame``, the numbers behind the figure (``fpa figure-table``), or None.
      enabled: ``config -> bool``, whether the config has what the figure needs beyond its runs.
    """

    name: str
    roles: tuple[str, ...]
    caption: str
    draw: Callable[[FigureInputs], object]
    uses_curves: bool = False
    uses_metrics: bool = True
    uses_evals: bool = False
    objectives: tuple[str, ...] = ()
    analysis: str | None = None
    of_base: bool = False
    uses_stages: bool = False
    table: Callable[[FigureInputs], object] | None = None
    enabled: Callable[[Mapping], bool] | None = None
