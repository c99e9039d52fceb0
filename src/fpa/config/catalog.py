"""The data catalog a config names (``data.catalog``), read once per file version (each path contained,
each url template renderable), and the checks that an entry it uses exists, has a source and is in the mirror."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Mapping

from fpa.config.templates import check_url_template
from fpa.config.wildcards import check_read_path, check_wildcard_value
from fpa.containment import check_relative, inside
from fpa.errors import ConfigError
from fpa.project import PROJECT_ROOT


def load_catalog(config: Mapping, where: str) -> dict:
    path = Path(config["data"]["catalog"])
    if not path.is_absolute() and not path.is_file():
        path = PROJECT_ROOT / path  # relative to the workflow, as when run with -d elsewhere
    if not path.is_file():
        raise ConfigError(f"{where}: data.catalog: file not found: {config['data']['catalog']}")
    stat = path.stat()
    return copy.deepcopy(_read_catalog(str(path.resolve()), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=None)
def _read_catalog(path: str, mtime_ns: int, size: int) -> dict:
    """Parsed once per process and file version (validation and common.smk both need it)."""
    from fpa.catalog import ALL_SECTIONS, read_benchmarks_config

    try:
        catalog = read_benchmarks_config(path)
    except ValueError as error:  # a syntax error, duplicate or missing key: one line naming file and key
        raise ConfigError(str(error)) from None
    for section in ALL_SECTIONS:  # each file lands at resources/data/<path>, read from <mirror>/<path>
        for name, entry in catalog.get(section, {}).items():
            if "path" in entry:
                check_relative(entry["path"], f"{path}: {section}.{name}.path")
                check_read_path(entry["path"], f"{path}: {section}.{name}.path")
                check_wildcard_value(entry["path"], "path", f"{path}: {section}.{name}.path")
            check_url_template(entry, f"{path}: {section}.{name}")
    return catalog


def check_catalog_entry(catalog: dict, section: str, name: str, config: Mapping, where: str) -> None:
    """The entry exists, has a source, and (with a mirror) its file is in the mirror."""
    entries = catalog.get(section, {})
    if name not in entries:
        raise ConfigError(f"{where}: unknown catalog entry {name!r}; expected one of {sorted(entries)}")
    entry = entries[name]
    if "missing" in entry:
        raise ConfigError(f"{where}: {name} has no source ({' '.join(entry['missing'].split())[:200]}...)")
    mirror = config["data"]["mirror"]
    if mirror is not None and not inside(mirror, entry["path"], f"{where}: {name}").is_file():
        raise ConfigError(f"{where}: {name}: file not found in the mirror: {Path(mirror) / entry['path']}")
