"""Errors that every layer raises about a user's input."""

from __future__ import annotations

from fpa.safe_load import OneLineError


class ConfigError(OneLineError):
    """A configuration error; ``str()`` is a single line (a key or value quoted in it escaped)."""
