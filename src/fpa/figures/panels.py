"""Panels several figures share: log-ratios per class and accuracy through training."""

from __future__ import annotations

from fpa.figures import FigureInputs

SMOOTH = 5  # steps of trailing mean for per-step metrics: one batch holds few problems


def logratio_panel(ax, inputs: FigureInputs, roles) -> None:
    """log π_θ − log π_ref of correct (solid) and incorrect (dashed) trajectories of each role."""
    from fpa.figures.data import read_metrics
    from fpa.figures.style import CLASS_STYLE, color, mean_band

    for role in roles:
        for cls, linestyle in CLASS_STYLE.items():
            steps, values = read_metrics(inputs.metrics[role], f"logratio_{cls}", smooth=SMOOTH)
            mean_band(ax, steps, values, label=f"{inputs.labels[role]} ({cls})", color=color(inputs.styles[role]),
                      linestyle=linestyle)
    ax.set(title="log π − log π_ref", xlabel="step", ylabel="nats")


def accuracy_panel(ax, inputs: FigureInputs, roles) -> None:
    """Pass@1 on the curve benchmark at each snapshot (step 0: the base model) of each role."""
    from fpa.figures.data import read_curves
    from fpa.figures.style import line_style, mean_band

    for role in roles:
        style = line_style(inputs.styles[role])
        steps, values = read_curves(inputs.curves[role], inputs.curve_benchmark, inputs.base_curves)
        mean_band(ax, steps, values, label=inputs.labels[role], **style)
        ax.plot(steps, values.mean(axis=0), "o", color=style["color"], markersize=3)
    ax.set(title=f"{inputs.curve_benchmark} accuracy through training", xlabel="step", ylabel="Pass@1 (%)")


def add_legends(axes) -> None:
    from fpa.figures.style import LEGEND

    for ax in axes:
        ax.legend(**LEGEND)
