"""Planning: from a config to what the workflow's rules need (``Plan``), and the config
checks that need the registries of figures, table layouts and resources (``validate_config``).

This package sits above ``fpa.config``, ``fpa.figures``, ``fpa.aggregation`` and
``fpa.resources``; nothing below imports it.
"""

from fpa.planning.plan import Plan
from fpa.planning.validation import NAME, check_planning, load_config_file, validate_config

__all__ = ["NAME", "Plan", "check_planning", "load_config_file", "validate_config"]
