"""Every figure the shipped configs plan, as a reader sees it: drawn from constructed runs of the
config's own methods, labels and benchmarks, no legend, title, axis label, tick label, text or
panel overlaps another or falls outside the canvas. Extents are matplotlib's own, after the
figure's layout has run (``Figure.draw_without_rendering``)."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

import matplotlib.pyplot as plt
import pytest
from matplotlib.transforms import Bbox
from figure_helpers import write_slice_inputs

from fpa.figures import FIGURES
from fpa.figures.inputs import figure_inputs
from fpa.planning import judge

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"
NOT_RUN_CONFIGS = ("benchmarks.yaml", "paper_results.yaml")
# the pilot's trajectories are as long as the paper's (its "Token lengths" figure): MATH's long, IMDb's one token
PILOT_TOKENS = {"full": 1500, "answer_only": 12, "imdb": 1, "hh_rlhf": 180}


def _planned() -> list[tuple[str, str, str]]:
    """(config file, model, figure) of every figure the configs plan, once per distinct look (a figure
    of two models with the same methods, labels and benchmarks is drawn once)."""
    planned, seen = [], set()
    for path in sorted(CONFIG_DIR.glob("*.yaml")):
        if path.name in NOT_RUN_CONFIGS:
            continue
        plan = judge([path])
        for model, name in plan.figures.planned():
            slice_ = plan.figures.slice(model, name)
            look = (path.name, name, json.dumps([slice_[key] for key in ("labels", "lam", "curve_label", "benchmarks")]))
            if look not in seen:
                seen.add(look)
                planned.append((path.name, model, name))
    return planned


def _texts(ax):
    """(what, Text) of an axes' title, axis labels and drawn tick labels (those inside the view limits)."""
    named = [("title", ax.title), ("x label", ax.xaxis.label), ("y label", ax.yaxis.label)]
    for letter, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        low, high = sorted(axis.get_view_interval())
        for ticks, locations in ((axis.get_major_ticks(), axis.get_majorticklocs()),
                                 (axis.get_minor_ticks(), axis.get_minorticklocs())):
            named += [(f"{letter} tick label", tick.label1) for tick, location in zip(ticks, locations)
                      if low <= location <= high]
    return [(what, text) for what, text in named if text.get_visible() and text.get_text()]


class Element(NamedTuple):
    name: str
    box: Bbox
    frame_of: int | None = None  # a panel (the axes' frame): its index
    drawn_on: int | None = None  # a text drawn in a panel (a point's label, a note): the panel's index


def elements(fig) -> list[Element]:
    """Every legend, title, axis label, tick label, text and panel of ``fig``, laid out."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    found = [Element(f"figure legend {index}", legend.get_window_extent(renderer))
             for index, legend in enumerate(fig.legends)]
    found += [Element(f"figure text {text.get_text()!r}", text.get_window_extent(renderer)) for text in fig.texts]
    for index, ax in enumerate(fig.axes):
        name = f"panel {index} ({ax.get_title()!r})"
        found.append(Element(name, ax.get_window_extent(renderer), frame_of=index))
        found += [Element(f"{what} {text.get_text()!r} of {name}", text.get_window_extent(renderer))
                  for what, text in _texts(ax)]
        if ax.get_legend() is not None:
            found.append(Element(f"legend of {name}", ax.get_legend().get_window_extent(renderer)))
        found += [Element(f"text {text.get_text()!r} in {name}", text.get_window_extent(renderer), drawn_on=index)
                  for text in ax.texts if text.get_visible() and text.get_text()]
    return found


def _pixels(box) -> str:
    return f"x {box.x0:.0f}..{box.x1:.0f}, y {box.y0:.0f}..{box.y1:.0f} px"


def layout_defects(fig) -> list[str]:
    """What a reader would see: elements outside the canvas, and pairs of elements that overlap (but for
    a text on the panel it is drawn in)."""
    found, canvas = elements(fig), fig.bbox.padded(1)  # a pixel's rounding is no defect
    defects = [f"{element.name} falls outside the canvas: {_pixels(element.box)} of {_pixels(fig.bbox)}"
               for element in found if Bbox.union([canvas, element.box]).bounds != canvas.bounds]
    for one, other in combinations(found, 2):
        on_its_panel = one.frame_of is not None and one.frame_of == other.drawn_on or (
            other.frame_of is not None and other.frame_of == one.drawn_on)
        if one.box.overlaps(other.box) and not on_its_panel:
            defects.append(f"{one.name} overlaps {other.name}")
    return defects


@pytest.mark.parametrize("config_file, model, name", _planned())
def test_no_figure_element_overlaps_another_or_leaves_the_canvas(tmp_path, monkeypatch, config_file, model, name):
    monkeypatch.chdir(tmp_path)
    plan = judge([CONFIG_DIR / config_file])
    config = plan.config
    slice_ = plan.figures.slice(model, name)
    write_slice_inputs(name, slice_, config, PILOT_TOKENS)
    fig = FIGURES[name].draw(figure_inputs(name, slice_))
    defects = layout_defects(fig)
    plt.close(fig)
    assert not defects, "\n".join(defects)
