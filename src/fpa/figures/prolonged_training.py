"""Paper Figure "Training dynamics under prolonged training": Off-RL against FPA.

Left: log π_θ − log π_ref of correct and incorrect trajectories. Centre: accuracy through
training on the curve benchmark (step 0 is the base model). Right: how many incorrect
trajectories so far had a gradient weight below 0.2 (π for Off-RL, π̂ for FPA), i.e. how
often their gradients were strongly damped.
"""

from __future__ import annotations

from fpa.figures.figure import Figure, FigureInputs

ROLES = ("offrl", "fpa")
THRESHOLD_COLUMN = {"offrl": "weight_below_0.2", "fpa": "hat_weight_below_0.2"}


def draw(inputs: FigureInputs):
    import numpy as np

    from fpa.figures.data import read_metrics
    from matplotlib.ticker import MaxNLocator

    from fpa.figures.panels import accuracy_panel, add_legends, logratio_panel
    from fpa.figures.style import color, mean_band, panels

    fig, (logratio, accuracy, damped) = panels(3)
    logratio_panel(logratio, inputs, ROLES)
    accuracy_panel(accuracy, inputs, ROLES)
    counts = {role: read_metrics(inputs.metrics[role], THRESHOLD_COLUMN[role]) for role in ROLES}
    damped.set(title="incorrect trajectories with weight < 0.2", xlabel="step", ylabel="cumulative count")
    if not any(np.nansum(values) for _, values in counts.values()):
        # a flat zero would read as a measurement of no difference: say what it means instead
        damped.text(0.5, 0.5, "no incorrect trajectory's\ngradient weight fell below 0.2\nin these runs",
                    transform=damped.transAxes, ha="center", va="center", color="grey")
        damped.set_xticks([])
        damped.set_yticks([])
        add_legends((logratio, accuracy))
        return fig
    for role, (steps, values) in counts.items():
        symbol = "π̂" if role == "fpa" else "π"
        mean_band(damped, steps, np.cumsum(np.nan_to_num(values), axis=1),
                  label=f"{inputs.labels[role]}: {symbol} < 0.2", color=color(inputs.styles[role]))
    top = max(1.0, damped.get_ylim()[1])  # a count: integer ticks from 0, with room to see a line at 0
    damped.set_ylim(-0.04 * top, top)
    damped.yaxis.set_major_locator(MaxNLocator(integer=True))
    add_legends((logratio, accuracy, damped))
    return fig


FIGURES = (Figure(
    name="prolonged_training",
    roles=ROLES,
    caption="Training dynamics under prolonged training (paper Figure 'prolonged training'). Left: log π_θ − "
            "log π_ref of correct (solid) and incorrect (dashed) trajectories. Centre: Pass@1 on the curve "
            "benchmark through training (step 0: the base model). Right: cumulative count of incorrect "
            "trajectories whose gradient weight (π for Off-RL, π̂ for FPA) fell below 0.2. Mean ± std over seeds.",
    draw=draw,
    uses_curves=True,
),)
