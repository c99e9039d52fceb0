"""Paper Figure "Targeted FPA ablations": FPA's weight on correct samples only ("w/ Cor. Only")
against incorrect samples only ("w/ Incor. Only").

Left: log π_θ − log π_ref of correct (solid) and incorrect (dashed) trajectories. Centre:
accuracy through training on the curve benchmark. Right: gradient norm per step.
"""

from __future__ import annotations

from fpa.figures import Figure, FigureInputs

SMOOTH = 5
ROLES = ("fpa_cor", "fpa_incor")


def draw(inputs: FigureInputs):
    from fpa.figures.data import read_curves, read_metrics
    from fpa.figures.style import CLASS_STYLE, color, mean_band, panels

    fig, (logratio, accuracy, grad_norm) = panels(3)
    for index, role in enumerate(ROLES):
        paths, label = inputs.metrics[role], inputs.labels[role]
        for cls, linestyle in CLASS_STYLE.items():
            steps, values = read_metrics(paths, f"logratio_{cls}", smooth=SMOOTH)
            mean_band(logratio, steps, values, label=f"{label} ({cls})", color=color(index + 2),
                      linestyle=linestyle)
        steps, values = read_curves(inputs.curves[role], inputs.curve_benchmark, inputs.base_curves)
        mean_band(accuracy, steps, values, label=label, color=color(index + 2))
        steps, values = read_metrics(paths, "grad_norm", smooth=SMOOTH)
        mean_band(grad_norm, steps, values, label=label, color=color(index + 2))
    logratio.set(title="log π − log π_ref", xlabel="step", ylabel="nats")
    accuracy.set(title=f"{inputs.curve_benchmark} accuracy through training", xlabel="step", ylabel="Pass@1 (%)")
    grad_norm.set(title="gradient norm", xlabel="step", ylabel="‖∇‖ (before clipping)")
    for ax in (logratio, accuracy, grad_norm):
        ax.legend(frameon=False)
    return fig


FIGURE = Figure(
    name="targeted_ablations",
    roles=ROLES,
    caption="Targeted FPA ablations (paper Figure 'Targeted FPA ablations'): the π̂ weight on correct samples "
            "only against incorrect samples only. Left: log π_θ − log π_ref of correct (solid) and incorrect "
            "(dashed) trajectories. Centre: Pass@1 on the curve benchmark through training (step 0: the base "
            "model). Right: gradient norm before clipping. Mean ± std over seeds, trailing mean over "
            f"{SMOOTH} steps.",
    draw=draw,
    uses_curves=True,
)
