"""Panels several figures share: log-ratios per class and accuracy through training."""

from __future__ import annotations

from typing import Callable

from fpa.figures.figure import FigureInputs

SMOOTH = 5  # steps of trailing mean for per-step metrics: one batch holds few problems


def per_class_panel(ax, inputs: FigureInputs, roles, column: Callable[[str], str], label: Callable[[str], str]) -> None:
    """A per-step metric of correct (solid) and incorrect (dashed) trajectories of each role:
    ``column(role)`` names it without its class suffix, ``label(role)`` its legend entry."""
    from fpa.figures.data import read_metrics
    from fpa.figures.style import CLASS_STYLE, color, mean_band

    for role in roles:
        for cls, linestyle in CLASS_STYLE.items():
            steps, values = read_metrics(inputs.metrics[role], f"{column(role)}_{cls}", smooth=SMOOTH)
            mean_band(ax, steps, values, label=f"{label(role)} ({cls})", color=color(inputs.styles[role]),
                      linestyle=linestyle)


def logratio_panel(ax, inputs: FigureInputs, roles) -> None:
    """log π_θ − log π_ref of correct (solid) and incorrect (dashed) trajectories of each role."""
    per_class_panel(ax, inputs, roles, lambda role: "logratio", inputs.labels.__getitem__)
    ax.set(title="log π − log π_ref", xlabel="step", ylabel="nats")


def accuracy_panel(ax, inputs: FigureInputs, roles) -> None:
    """Pass@1 on the curve benchmark at each snapshot (step 0: the base model) of each role."""
    import numpy as np

    from fpa.figures.data import read_curves
    from fpa.figures.style import line_style, mean_band

    for role in roles:
        style = line_style(inputs.styles[role])
        steps, values = read_curves(inputs.curves[role], inputs.curve_benchmark, inputs.base_curves)
        mean_band(ax, steps, values, label=inputs.labels[role], **style)
        ax.plot(steps, values.mean(axis=0), "o", color=style["color"], markersize=3)
    if inputs.base_curves:  # step 0 of every curve: the level each method starts from and is judged against
        _, base = read_curves(inputs.base_curves, inputs.curve_benchmark)
        ax.axhline(float(np.nanmean(base)), color="grey", linestyle=":", linewidth=1.5, label="Base")
    ax.set(title="Accuracy through training", xlabel="step", ylabel=f"Pass@1 on {inputs.curve_label} (%)")


def add_legends(axes) -> None:
    """Each panel's legend below it, never over the curves (the claim is often where they meet)."""
    from fpa.figures.style import LEGEND

    for ax in axes:
        ax.legend(**LEGEND)
