"""Paper Figure "Training Dynamics": Off-RL against FPA, per step.

Left: log π_θ(y|x) − log π_ref(y|x) of correct (solid) and incorrect (dashed) trajectories.
Centre: the weight each objective puts on its gradient, π^(1/|y|) for Off-RL and
π̂^(1/|y|) for FPA. Right: π̂/π of FPA's incorrect trajectories (the early brake: below 1).
"""

from __future__ import annotations

from fpa.figures.figure import Figure, FigureInputs
from fpa.figures.panels import SMOOTH

ROLES = ("offrl", "fpa")


def draw(inputs: FigureInputs):
    from fpa.figures.data import read_metrics
    from fpa.figures.panels import add_legends, logratio_panel, per_class_panel
    from fpa.figures.style import color, mean_band, panels

    fig, (logratio, weight, ratio) = panels(3)
    logratio_panel(logratio, inputs, ROLES)
    weight_column, symbol = {"offrl": "weight", "fpa": "hat_weight"}, {"offrl": "π", "fpa": "π̂"}
    per_class_panel(weight, inputs, ROLES, weight_column.__getitem__,
                    lambda role: f"{inputs.labels[role]} {symbol[role]}")
    steps, values = read_metrics(inputs.metrics["fpa"], "hat_over_pi_incorrect", smooth=SMOOTH)
    mean_band(ratio, steps, values, label=f"{inputs.labels['fpa']} π̂/π (incorrect)",
              color=color(inputs.styles["fpa"]))
    ratio.axhline(1.0, color="grey", linewidth=1, linestyle=":")
    weight.set(title="gradient weight (per-token geometric mean)", xlabel="step", ylabel="weight")
    ratio.set(title="π̂ / π, incorrect trajectories", xlabel="step", ylabel="ratio")
    add_legends((logratio, weight, ratio))
    return fig


FIGURES = (Figure(
    name="training_dynamics",
    roles=ROLES,
    caption="Training dynamics of Off-RL and FPA (paper Figure 'Training Dynamics'). Left: log π_θ − log π_ref "
            "of correct (solid) and incorrect (dashed) trajectories. Centre: the gradient weight, π^(1/|y|) for "
            "Off-RL and π̂^(1/|y|) for FPA. Right: π̂/π of FPA's incorrect trajectories. Mean ± std over seeds, "
            f"trailing mean over {SMOOTH} steps.",
    draw=draw,
),)
