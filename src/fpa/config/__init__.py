"""Configuration: a config validated as a whole, with one-line errors (``fpa.config.validate``), from
its schema (``schema``), the catalog it names (``catalog``), its graders (``graders``), its run grid
(``runs``), its templates and its wildcard values."""

from __future__ import annotations

from fpa.config.validate import load_config_file, validate_config

__all__ = ["load_config_file", "validate_config"]
