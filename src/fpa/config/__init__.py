"""Configuration: a config validated as a whole, with one-line errors (``fpa.config.validate``, the
first step of the one judge ``fpa.planning.judge``), from its schema (``schema``), the catalog it
names (``catalog``), its graders (``graders``), its run grid (``runs``), its templates and its
wildcard values."""

from __future__ import annotations

from fpa.config.validate import check_config

__all__ = ["check_config"]
