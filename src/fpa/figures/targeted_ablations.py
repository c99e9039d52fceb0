"""Paper Figure "Targeted FPA ablations": FPA's weight on correct samples only ("w/ Cor. Only")
against incorrect samples only ("w/ Incor. Only").

Left: log π_θ − log π_ref of correct (solid) and incorrect (dashed) trajectories. Centre:
accuracy through training on the curve benchmark. Right: gradient norm per step.
"""

from __future__ import annotations

from fpa.figures.figure import Figure, FigureInputs
from fpa.figures.panels import SMOOTH

ROLES = ("fpa_cor", "fpa_incor")


def draw(inputs: FigureInputs):
    from fpa.figures.data import read_metrics
    from fpa.figures.panels import accuracy_panel, add_legends, logratio_panel
    from fpa.figures.style import color, mean_band, panels

    fig, (logratio, accuracy, grad_norm) = panels(3)
    logratio_panel(logratio, inputs, ROLES)
    accuracy_panel(accuracy, inputs, ROLES)
    for role in ROLES:
        steps, values = read_metrics(inputs.metrics[role], "grad_norm", smooth=SMOOTH)
        mean_band(grad_norm, steps, values, label=inputs.labels[role], color=color(inputs.styles[role]))
    grad_norm.set(title="gradient norm", xlabel="step", ylabel="‖∇‖ (before clipping)")
    add_legends((logratio, accuracy, grad_norm))
    return fig


FIGURES = (Figure(
    name="targeted_ablations",
    roles=ROLES,
    caption="Targeted FPA ablations (paper Figure 'Targeted FPA ablations'): the π̂ weight on correct samples "
            "only against incorrect samples only. Left: log π_θ − log π_ref of correct (solid) and incorrect "
            "(dashed) trajectories. Centre: Pass@1 on the curve benchmark through training (step 0: the base "
            "model). Right: gradient norm before clipping. Mean ± std over seeds, trailing mean over "
            f"{SMOOTH} steps.",
    draw=draw,
    uses_curves=True,
),)
