"""Accuracy against wall-clock time, offline against online (paper Figure "Comparison to RLVR"):
Pass@1 on the curve benchmark at each snapshot, at the time the run had spent when it took the
snapshot. An offline run starts when its data exist: its clock begins with the wall time of the
offline data generation (and of the reference cache, for objectives that read the reference),
taken from those jobs' provenance, as the paper counts FPA's hour of generation; an online run
starts at 0. Evaluation time is not counted for any run.

``table`` gives the time each method needed to reach each method's peak accuracy (the paper's
"73 % in ~3 h vs ~17 h"); ``fpa figure-table`` writes it beside the figure.
"""

from __future__ import annotations

import math

from fpa.figures.figure import Figure, FigureInputs

HOUR = 3600.0


def clock_curves(inputs: FigureInputs) -> dict:
    """role -> (seconds [seeds, steps], Pass@1 % [seeds, steps]) at the snapshots, step 0 the base model."""
    import numpy as np

    from fpa.figures.data import read_curves, read_elapsed, stage_seconds

    curves = {}
    for role in inputs.in_style_order(inputs.curves):
        steps, accuracy = read_curves(inputs.curves[role], inputs.curve_benchmark, inputs.base_curves)
        start = stage_seconds(inputs.stages.get(role, []))
        seconds = start + np.stack([read_elapsed(path, list(steps)) for path in inputs.metrics[role]])
        curves[role] = (seconds, accuracy)
    return curves


def time_to_accuracy(inputs: FigureInputs):
    """A row per method: its pre-training time, peak mean Pass@1, when it got there, and the time
    (mean over seeds) it first reached each method's peak (rounded down to 0.1 point); empty where
    it never did."""
    import pandas as pd

    curves = clock_curves(inputs)
    peaks = {role: accuracy.mean(axis=0).max() for role, (_, accuracy) in curves.items()}
    targets = sorted({math.floor(peak * 10) / 10 for peak in peaks.values()})
    rows = []
    for role, (seconds, accuracy) in curves.items():
        mean_time, mean_accuracy = seconds.mean(axis=0), accuracy.mean(axis=0)
        row = {"method": inputs.labels[role], "run": role, "seeds": len(inputs.seeds),
               "start_h": mean_time[0] / HOUR, "end_h": mean_time[-1] / HOUR, "peak_pass_at_1": peaks[role],
               "peak_at_h": mean_time[mean_accuracy.argmax()] / HOUR}
        for target in targets:
            reached = mean_accuracy >= target
            row[f"h_to_{target:.1f}"] = mean_time[reached.argmax()] / HOUR if reached.any() else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def draw(inputs: FigureInputs):
    from fpa.figures.style import LEGEND, line_style, mean_band, panels

    fig, (ax,) = panels(1, width=5.8, height=3.9)
    curves = clock_curves(inputs)
    longest = max(seconds.mean(axis=0)[-1] for seconds, _ in curves.values())
    unit, scale = ("hours", HOUR) if longest > 3 * HOUR else ("minutes", 60.0)
    for role, (seconds, accuracy) in curves.items():
        style = line_style(inputs.styles[role])
        x = seconds.mean(axis=0) / scale
        mean_band(ax, x, accuracy, label=inputs.labels[role], **style)
        ax.plot(x, accuracy.mean(axis=0), "o", color=style["color"], markersize=3)
    ax.set(title=f"{inputs.curve_label} accuracy over wall-clock time", xlabel=f"wall clock ({unit})",
           ylabel="Pass@1 (%)")
    ax.set_xlim(left=0)
    ax.legend(**LEGEND)
    return fig


FIGURES = (Figure(
    name="wall_clock",
    roles=(),
    caption="Pass@1 on the curve benchmark against wall-clock time (paper Figure 'Comparison to RLVR'): "
            "offline runs start after their data generation (and reference cache, when their objective reads "
            "it), online runs at 0; evaluation time is not counted. Mean ± std over seeds.",
    draw=draw,
    uses_curves=True,
    uses_stages=True,
    objectives=("offrl", "fpa", "grpo", "dapo"),
    table=time_to_accuracy,
),)
