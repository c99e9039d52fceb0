"""The paper's figures: one module per figure, each declaring its ``FIGURES``
(``fpa.registry`` finds them); adding a figure is adding its module.

A figure draws *roles* (e.g. ``offrl`` and ``fpa``), each filled by one method of the
config: the method named in ``figures.<figure>.<role>``, else the method named like the
role, else the first method whose objective is the role. A figure without fixed roles draws
every method (of its objectives) trained on all the config's seeds, or only the methods its
config names, under any key. A config lists the figures it
wants; each is planned per model, and not for a model whose runs leave a role unfilled (no error).
Which figures a config plans, and each one's slice of the config: ``fpa.planning.figures``. This
package draws a figure from its slice (``fpa.figures.inputs.figure_inputs``, then ``FIGURES[name].draw``).
"""

from __future__ import annotations

from fpa.figures.figure import BASE_ROLE, Figure, FigureInputs
from fpa.registry import Registry

# in the order of their modules' names: the fixed roles' styles (ROLE_STYLES) follow it
FIGURES = Registry("figure", __name__, "FIGURES")

# An objective that a figure draws in a fixed role (Off-RL, FPA, ...) has the same colour in every
# figure: the fixed roles of the registered figures take the palette's first styles, in registry
# order; the other methods of a figure take the next ones (fpa.figures.style.line_style).
ROLE_STYLES = {role: index for index, role in
               enumerate(dict.fromkeys(role for figure in FIGURES.values() for role in figure.roles))}

__all__ = ["BASE_ROLE", "FIGURES", "ROLE_STYLES", "Figure", "FigureInputs"]
