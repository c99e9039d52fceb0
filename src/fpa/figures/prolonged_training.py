"""Paper Figure "Training dynamics under prolonged training": Off-RL against FPA.

Left: log π_θ − log π_ref of correct and incorrect trajectories. Centre: accuracy through
training on the curve benchmark (step 0 is the base model). Right: how many incorrect
trajectories so far had a gradient weight below 0.2 (π for Off-RL, π̂ for FPA), i.e. how
often their gradients were strongly damped.
"""

from __future__ import annotations

from fpa.figures import Figure, FigureInputs

SMOOTH = 5
THRESHOLD_COLUMN = {"offrl": "weight_below_0.2", "fpa": "hat_weight_below_0.2"}


def draw(inputs: FigureInputs):
    import numpy as np

    from fpa.figures.data import read_curves, read_metrics
    from fpa.figures.style import CLASS_STYLE, color, mean_band, panels

    fig, (logratio, accuracy, damped) = panels(3)
    for index, role in enumerate(("offrl", "fpa")):
        paths, label = inputs.metrics[role], inputs.labels[role]
        for cls, linestyle in CLASS_STYLE.items():
            steps, values = read_metrics(paths, f"logratio_{cls}", smooth=SMOOTH)
            mean_band(logratio, steps, values, label=f"{label} ({cls})", color=color(index), linestyle=linestyle)
        steps, values = read_curves(inputs.curves[role], inputs.curve_benchmark, inputs.base_curves)
        mean_band(accuracy, steps, values, label=label, color=color(index))
        accuracy.plot(steps, values.mean(axis=0), "o", color=color(index), markersize=3)
        steps, values = read_metrics(paths, THRESHOLD_COLUMN[role])
        symbol = "π̂" if role == "fpa" else "π"
        mean_band(damped, steps, np.cumsum(np.nan_to_num(values), axis=1), label=f"{label}: {symbol} < 0.2",
                  color=color(index))
    logratio.set(title="log π − log π_ref", xlabel="step", ylabel="nats")
    accuracy.set(title=f"{inputs.curve_benchmark} accuracy through training", xlabel="step", ylabel="Pass@1 (%)")
    damped.set(title="incorrect trajectories with weight < 0.2", xlabel="step", ylabel="cumulative count")
    for ax in (logratio, accuracy, damped):
        ax.legend(frameon=False)
    return fig


FIGURE = Figure(
    name="prolonged_training",
    roles=("offrl", "fpa"),
    caption="Training dynamics under prolonged training (paper Figure 'prolonged training'). Left: log π_θ − "
            "log π_ref of correct (solid) and incorrect (dashed) trajectories. Centre: Pass@1 on the curve "
            "benchmark through training (step 0: the base model). Right: cumulative count of incorrect "
            "trajectories whose gradient weight (π for Off-RL, π̂ for FPA) fell below 0.2. Mean ± std over seeds.",
    draw=draw,
    uses_curves=True,
)
