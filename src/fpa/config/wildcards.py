"""What a value must be to fill a wildcard of the workflow's path templates (``workflow/rules/*.smk``)
everywhere it goes, beyond being one path segment (``fpa.containment``). Three consumers hold less
than a segment:

- the file system: a path component holds ``NAME_MAX`` bytes. A value fills its wildcard with the
  text its templates add in that component (``{bench}.jsonl``, read from the rules themselves:
  ``path_affixes``); each output ``X`` gets its provenance record ``X.prov.json``
  (``fpa.provenance.record``), and both are written through a temporary
  ``.X.<pid>-<host>.<random>.tmp`` (``fpa.io.atomic_path``), whose longest form on any host must fit;
- the project's own names: no component may end in the provenance record's suffix (the evaluate job
  would write another output's record over it, and the start-up clean-up, finding no output of that
  name, would delete it), nor be named as a temporary of an atomic write (removed as a killed
  writer's);
- Snakemake: when it builds the DAG, a wildcard value that ends in one text repeated 20 times or more
  is refused as periodic (``PeriodicityDetector`` in ``snakemake/io``: a sign of a rule feeding itself,
  ``aaaa...`` or ``abab...``), and a brace in a path it reads is taken for a wildcard of a pattern.

Each refusal is one ``ConfigError`` naming ``where`` and what was expected, raised by the judge
before any job is planned.
"""

from __future__ import annotations

import functools
import re

from fpa.containment import WORK_AREAS
from fpa.errors import ConfigError
from fpa.io import is_temporary_name, longest_temporary_name
from fpa.paths import TEMPLATES
from fpa.project import PROJECT_ROOT
from fpa.provenance.record import SIDECAR_SUFFIX

#: bytes in one path component (Linux's NAME_MAX; ext4, XFS, Btrfs and tmpfs hold no more)
NAME_MAX = 255
#: Snakemake refuses a wildcard value ending in one text repeated this many times (PeriodicityDetector)
PERIODIC_REPEATS = 20
RULES = PROJECT_ROOT / "workflow" / "rules"
# a quoted path the rules write: a log or benchmark record (the DAG's files are fpa.paths' templates)
_TEMPLATE = re.compile(r'"((?:%s)/[^"\n]*)"' % "|".join(WORK_AREAS))
_FIELD = re.compile(r"\{(\w+)\}")


@functools.lru_cache(maxsize=None)
def path_affixes() -> dict[str, frozenset[tuple[str, str]]]:
    """Wildcard -> each (text before, text after) it in the path component that holds it, over every
    path template of the workflow: the DAG's files (``fpa.paths``) and the logs its rules write
    (``"results/eval/{model}/{method}/{seed}/{bench}.json"``: ``bench`` gets ``("", ".json")``,
    ``method`` ``("", "")``)."""
    affixes: dict[str, set[tuple[str, str]]] = {}
    logs = [template for rules in sorted(RULES.glob("*.smk")) for template in _TEMPLATE.findall(rules.read_text())]
    for template in [*TEMPLATES, *logs]:
        for component in template.replace("{{", "{").replace("}}", "}").split("/"):
            for field in _FIELD.finditer(component):
                affixes.setdefault(field.group(1), set()).add(
                    (component[:field.start()], component[field.end():]))
    return {wildcard: frozenset(pairs) for wildcard, pairs in affixes.items()}


def components(value: str, wildcard: str) -> list[str]:
    """The path components ``value`` makes in ``wildcard``'s templates: its segments, its first with the
    text before the wildcard and its last with the text after (a catalog path fills several)."""
    segments = value.split("/")
    made = set(segments)
    for before, after in path_affixes().get(wildcard, ()):
        made |= {before + value + after} if len(segments) == 1 else {before + segments[0], segments[-1] + after}
    return sorted(made)


def longest_name(component: str) -> str:
    """The longest name the project gives a file beside an output named ``component``: the temporary
    of its provenance record."""
    return longest_temporary_name(component + SIDECAR_SUFFIX)


def name_limit(wildcard: str) -> int:
    """The most bytes a one-segment value of ``wildcard`` may have."""
    one_byte = "x"
    return NAME_MAX + len(one_byte) - max(len(longest_name(made).encode()) for made in components(one_byte, wildcard))


def check_wildcard_value(value: str, wildcard: str, where: str) -> None:
    """``value`` (already one segment, or a relative path: ``fpa.containment``) fits every consumer of
    ``wildcard``; else a one-line ``ConfigError`` naming ``where``."""
    made = components(value, wildcard)
    for component in made:
        if component.endswith(SIDECAR_SUFFIX):
            raise ConfigError(f"{where}: {_shown(value)} makes the path component {component!r}, named as the "
                              f"provenance record of another file; expected a name whose files do not end in "
                              f"{SIDECAR_SUFFIX!r}")
        if is_temporary_name(component):
            raise ConfigError(f"{where}: {_shown(value)} makes the path component {component!r}, named as a "
                              "temporary of an atomic write (removed once its writer is gone); expected another name")
    longest = max(made, key=lambda component: len(longest_name(component).encode()))
    size = len(longest_name(longest).encode())
    if size > NAME_MAX:
        limit = f" (a name of at most {name_limit(wildcard)} bytes)" if "/" not in value else ""
        raise ConfigError(f"{where}: {_shown(value)} makes a path component of {size} bytes, a temporary of the "
                          f"provenance record of {_shown(longest)}; expected at most {NAME_MAX} bytes a "
                          f"component{limit}")
    unit = periodic_unit(value)
    if unit is not None:
        raise ConfigError(f"{where}: {_shown(value)} ends in {_shown(unit)} repeated {_repeats(value, unit)} times, "
                          f"which Snakemake refuses as a periodic wildcard value ({PERIODIC_REPEATS} repeats or "
                          "more); expected a name without such a repeat")


def periodic_unit(value: str) -> str | None:
    """The shortest text ``value`` ends in ``PERIODIC_REPEATS`` times in a row, else None: exactly the
    values Snakemake's ``PeriodicityDetector`` refuses (its pattern ``(.+)(?P=value){19,99}$``, searched)."""
    for length in range(1, len(value) // PERIODIC_REPEATS + 1):
        unit = value[-length:]
        if value.endswith(unit * PERIODIC_REPEATS):
            return unit
    return None


def _shown(text: str, ends: int = 24) -> str:
    """``text`` quoted, its middle cut when long (both ends show: a name and the suffix a template adds)."""
    if len(text) <= 3 * ends:
        return repr(text)
    return f"{text[:ends]!r}...{text[-ends:]!r} ({len(text.encode())} bytes)"


def _repeats(value: str, unit: str) -> int:
    """How many times ``value`` ends in ``unit`` in a row."""
    count, end = 0, len(value)
    while end >= len(unit) and value.startswith(unit, end - len(unit)):
        count, end = count + 1, end - len(unit)
    return count


def check_read_path(path: str, where: str) -> None:
    """A path that Snakemake reads as a job's input holds no brace (it would take ``{x}`` for a
    wildcard); else a one-line ``ConfigError`` naming ``where``."""
    if "{" in path or "}" in path:
        raise ConfigError(f"{where}: expected a path without braces (Snakemake reads {{...}} in a job's input as "
                          f"a wildcard), got {path!r}")


__all__ = ["NAME_MAX", "PERIODIC_REPEATS", "check_read_path", "check_wildcard_value", "components", "longest_name",
           "name_limit", "path_affixes", "periodic_unit"]
