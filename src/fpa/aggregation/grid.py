"""A table's planned grid: blocks of rows, each cell naming the evaluations (or training
summaries) it reads, and its JSON form (the ``aggregate`` rule's params). ``fpa.aggregation.layout``
builds it from config; ``fpa.aggregation.tables`` fills it with numbers."""

from __future__ import annotations

from dataclasses import asdict, astuple, dataclass
from typing import Mapping

from fpa.paths import CHECKPOINT, EVALUATION

PASS_AT_1 = "pass@1"
# the run name of the untrained model's row (reserved: no config method may take it)
BASE_METHOD = "base"


@dataclass(frozen=True)
class PaperCell:
    """The paper's printed value of one cell (``config/paper_results.yaml``), in the table's units."""

    row: str  # the row's key
    column: str  # the column's key
    text: str  # as printed, e.g. "84.10 ± 0.92"
    value: float  # the printed mean × the column's unit factor
    tolerance: float  # half a unit of the printed mean's last digit, in the table's units


@dataclass(frozen=True)
class CellKey:
    """One run's evaluations on one benchmark, over its seeds."""

    model: str
    method: str
    bench: str
    seeds: tuple[int, ...]
    metric: str = PASS_AT_1


@dataclass(frozen=True)
class Row:
    """``key`` names the row for ``fpa explain --row``; ``cells`` has one tuple of evaluations per column."""

    key: str
    label: str
    cells: tuple[tuple[CellKey, ...], ...]
    indent: bool = False
    highlight: bool = False
    dagger: bool = False
    seed: int | None = None  # a per-seed row under its mean (``seeds: each``)
    ratio_to: str | None = None  # a ratio row: its cells over those of this row of the block
    model: str = ""  # the model whose runs fill the row; its key less "<model>/" names it in paper_results


@dataclass(frozen=True)
class Block:
    title: str | None
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Layout:
    name: str
    caption: str
    corner: str  # header of the label column
    columns: tuple[str, ...]
    blocks: tuple[Block, ...]
    mark_best: bool = True
    reads: str = "evaluations"  # or "training": the runs' training summaries (overhead)
    column_keys: tuple[str, ...] = ()  # benchmark, "<bench>:pass@<k>", "avg", a run or a training metric
    paper: tuple = ()  # fpa.aggregation.paper.PaperCell of the cells the paper prints
    paper_label: str = ""  # the paper's LaTeX \label of the table compared with

    def input_path(self, key: CellKey, seed: int) -> str:
        """The DAG file behind one seed of a cell key."""
        if self.reads == "training":
            return CHECKPOINT.format(model=key.model, method=key.method, seed=seed)
        return EVALUATION.format(model=key.model, method=key.method, seed=seed, bench=key.bench)

    def cell_keys(self) -> list[CellKey]:
        """Every evaluation the table reads, once each, in table order."""
        keys = (key for block in self.blocks for row in block.rows for cell in row.cells for key in cell)
        return list(dict.fromkeys(keys))

    def to_json(self) -> dict:
        """The layout as the ``aggregate`` rule passes it (one shell argument, well under Linux's
        128 KiB per argument: the paper's cells go as lists, not as objects with their field names)."""
        return {**asdict(self), "paper": [astuple(cell) for cell in self.paper]}


def layout_from_json(data: Mapping) -> Layout:
    blocks = tuple(Block(b["title"], tuple(
        Row(r["key"], r["label"], tuple(tuple(CellKey(k["model"], k["method"], k["bench"], tuple(k["seeds"]),
                                                      k["metric"]) for k in cell) for cell in r["cells"]),
            r["indent"], r["highlight"], r["dagger"], r["seed"], r["ratio_to"], r["model"]) for r in b["rows"]))
        for b in data["blocks"])
    return Layout(data["name"], data["caption"], data["corner"], tuple(data["columns"]), blocks, data["mark_best"],
                  data["reads"], tuple(data["column_keys"]), tuple(PaperCell(*c) for c in data["paper"]),
                  data["paper_label"])
