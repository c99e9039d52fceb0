"""Accuracy through training of every method (paper Figure 1, right): Pass@1 on the curve
benchmark at each snapshot, step 0 being the base model. A method added to the config adds
its curve here; nothing else re-runs."""

from __future__ import annotations

from fpa.figures import Figure, FigureInputs


def draw(inputs: FigureInputs):
    from fpa.figures.panels import accuracy_panel, add_legends
    from fpa.figures.style import panels

    fig, (accuracy,) = panels(1, width=5.5, height=3.8)
    accuracy_panel(accuracy, inputs, list(inputs.curves))
    add_legends((accuracy,))
    return fig


FIGURE = Figure(
    name="accuracy_curves",
    roles=(),
    caption="Accuracy through training of every method (paper Figure 1, right): Pass@1 on the curve benchmark "
            "at each snapshot (step 0: the base model), mean ± std over seeds.",
    draw=draw,
    uses_curves=True,
)
