"""The templates a config and its catalog hold, checked for what their renderers need.

Two renderers, two rules:

- a prompt template (``models.<m>.prompt_template``) is rendered by ``fpa.samples.prompts.render_prompt``,
  which replaces ``{problem}`` literally: it must hold ``{problem}``, and every other character,
  braces included (the paper's ``\\boxed{X}``), is text the model reads;
- a catalog ``url`` of a sharded file is rendered by ``str.format(shard=i)``
  (``fpa.data.download``): it must hold ``{shard}`` (with a format spec for an integer, e.g.
  ``{shard:05d}``) and no other field, and a brace meant as text is written twice (``{{``).

Each refusal is one ``ConfigError`` naming the file and key, what the template must hold and what
it held, before any job is planned.
"""

from __future__ import annotations

import string
from typing import Mapping

from fpa.errors import ConfigError
from fpa.samples.prompts import PLACEHOLDER

#: the one field of a sharded file's url, and the shard number it is rendered with to check it
SHARD_FIELD = "shard"


def check_prompt_template(template: str, where: str) -> None:
    """``template`` shows the problem: it holds ``{problem}``, which the renderer replaces."""
    if PLACEHOLDER not in template:
        raise ConfigError(f"{where}: expected the placeholder {PLACEHOLDER} (replaced by the problem's text, so "
                          f"that every prompt shows its problem), got {template!r:.120}")


def check_url_template(entry: Mapping, where: str) -> None:
    """A catalog entry's ``url``: with ``shards``, a ``str.format`` template of exactly the field
    ``{shard}``; without, a plain address (never formatted), so it holds no ``{shard}``."""
    url = entry.get("url")
    if not isinstance(url, str):
        return
    if "shards" not in entry:
        if "{" + SHARD_FIELD in url:
            raise ConfigError(f"{where}.url: holds {{{SHARD_FIELD}}} but the entry has no shards: <count>; "
                              f"expected both or neither, got {url!r:.160}")
        return
    try:
        fields = {field for _, field, _, _ in string.Formatter().parse(url) if field is not None}
    except ValueError as error:  # a single { or }
        raise ConfigError(f"{where}.url: not a str.format template ({error}); a brace meant as text is written "
                          f"twice, got {url!r:.160}") from None
    if fields != {SHARD_FIELD}:
        raise ConfigError(f"{where}.url: expected exactly the field {{{SHARD_FIELD}}} (the shard number, 0 to "
                          f"shards - 1), got the fields {sorted(fields)} in {url!r:.160}")
    try:
        url.format(**{SHARD_FIELD: 0})
    except ValueError as error:  # a format spec that is not an integer's, e.g. {shard:s}
        raise ConfigError(f"{where}.url: {{{SHARD_FIELD}}}'s format spec does not format an integer ({error}), "
                          f"got {url!r:.160}") from None
