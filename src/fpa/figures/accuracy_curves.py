"""Accuracy through training of every method (paper Figure 1, right): Pass@1 on the curve
benchmark at each snapshot, step 0 being the base model. A method added to the config adds
its curve here; nothing else re-runs."""

from __future__ import annotations

from fpa.figures import Figure, FigureInputs


def draw(inputs: FigureInputs):
    from fpa.figures.data import read_curves
    from fpa.figures.style import color, mean_band, panels

    fig, (accuracy,) = panels(1, width=5.5, height=3.8)
    for index, (role, paths) in enumerate(inputs.curves.items()):
        steps, values = read_curves(paths, inputs.curve_benchmark, inputs.base_curves)
        mean_band(accuracy, steps, values, label=inputs.labels[role], color=color(index))
        accuracy.plot(steps, values.mean(axis=0), "o", color=color(index), markersize=3)
    accuracy.set(title=f"{inputs.curve_benchmark} accuracy through training", xlabel="step", ylabel="Pass@1 (%)")
    accuracy.legend(frameon=False)
    return fig


FIGURE = Figure(
    name="accuracy_curves",
    roles=(),
    caption="Accuracy through training of every method (paper Figure 1, right): Pass@1 on the curve benchmark "
            "at each snapshot (step 0: the base model), mean ± std over seeds.",
    draw=draw,
    uses_curves=True,
)
