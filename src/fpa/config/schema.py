"""A config file read and checked against the schema: one-line errors naming the file, the key path,
what was expected and the value received; the schema's defaults filled."""

from __future__ import annotations

import copy
import functools
import importlib
import math
from pathlib import Path
from typing import Mapping

import jsonschema

from fpa.errors import ConfigError
from fpa.project import PROJECT_ROOT
from fpa.safe_load import CONFIG_LIMITS, LoadError, load_yaml

SCHEMA_PATH = PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml"


#: The schema's key naming the owner of a string's choices, ``"<module>:<name>"``: a registry (its
#: keys) or a tuple of names (``fpa.precision``'s formats), read when the schema is loaded, never written
#: in the file; an ``enum`` beside it holds the file's own choices (``auto``), put first.
ENUM_FROM = "x-enum-from"


def load_schema(path: str | Path = SCHEMA_PATH) -> dict:
    """The config schema, each ``x-enum-from`` given its ``enum``; a fresh copy of the file parsed
    once per process (libyaml when available)."""
    return copy.deepcopy(_parse_schema(str(path)))


@functools.lru_cache(maxsize=None)
def _parse_schema(path: str) -> dict:
    schema = load_yaml(path)
    _derive_enums(schema)
    return schema


def _derive_enums(node: object) -> None:
    """Set, in place, the ``enum`` of every subschema that names its owner with ``x-enum-from``."""
    if isinstance(node, dict):
        if ENUM_FROM in node:
            module, name = node[ENUM_FROM].split(":")
            node["enum"] = [*node.get("enum", []), *sorted(getattr(importlib.import_module(module), name))]
        children = node.values()
    else:
        children = node if isinstance(node, list) else ()
    for child in children:
        _derive_enums(child)


# An integer is an int: JSON Schema also counts 44.0, which the `seed=\d+` wildcard and range() refuse.
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)))


def _setting_defaults(validator_class):
    """``validator_class`` that sets each absent property's default as it validates an object: the
    JSON Schema FAQ's extension, which Snakemake's ``validate(set_default=True)`` also uses."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def properties_with_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": properties_with_defaults})


_DefaultsValidator = _setting_defaults(_Validator)


def fill_defaults(config: dict, schema: Mapping) -> dict:
    """``config`` (valid for ``schema``) with the schema's defaults filled in place, as Snakemake's
    ``validate(set_default=True)`` fills them, without its second reading of the schema file and
    its pandas import."""
    _DefaultsValidator(schema).validate(config)
    return config


def _describe(error: jsonschema.ValidationError) -> str:
    kind, expected, got = error.validator, error.validator_value, error.instance
    if kind == "enum":
        return f"expected one of {expected}, got {got!r}"
    if kind == "type":
        return f"expected {expected}, got {got!r}"
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        sign = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[kind]
        return f"expected number {sign} {expected}, got {got!r}"
    if kind == "additionalProperties":
        return error.message.replace("Additional properties are not allowed", "unknown key")
    if kind == "required":
        return error.message
    if kind == "uniqueItems":
        return f"expected distinct values, got {got!r}"
    if kind in ("minProperties", "minItems"):
        return f"expected at least {expected} {'entry' if expected == 1 else 'entries'}, got {got!r}"
    return f"{error.message}"


def _key_path(parts) -> str:
    return ".".join(str(p) for p in parts) or "<top level>"


def check_against_schema(config: Mapping, schema: Mapping, where: str) -> None:
    """Raise ``ConfigError`` for the most relevant schema violation, if any."""
    validator = _Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is not None:
        path = list(error.absolute_path)
        if error.validator == "additionalProperties":
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            path = path + extra[:1]
            raise ConfigError(f"{where}: {_key_path(path)}: unknown key; expected one of "
                              f"{sorted(error.schema.get('properties', {}))}")
        raise ConfigError(f"{where}: {_key_path(path)}: {_describe(error)}")


def read_config_file(path: str | Path) -> dict:
    """The mapping in a YAML config file (an empty file: no settings); ``ConfigError`` naming file and
    line for a syntax error or a duplicate key, and naming the file for a top level that is not a mapping."""
    try:
        config = load_yaml(path)
    except LoadError as error:
        raise ConfigError(str(error)) from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it: {error.strerror} ({Path(path).absolute()})") from None
    config = {} if config is None else config
    _check_top_level(config, str(path))
    return config


def _check_top_level(config: object, where: str) -> None:
    """A config is a mapping of settings (Snakemake: "keys at top level"), not a list or a scalar."""
    if not isinstance(config, dict):
        raise ConfigError(f"{where}: <top level>: expected a mapping of settings (keys at the top level), "
                          f"got {type(config).__name__} {config!r:.60}")


#: where an integer field sits below a key path: ``*`` is any entry of a map, ``[]`` any item of a list
ANY_KEY, ANY_ITEM = "*", "[]"


def integer_fields(schema: Mapping) -> dict[tuple[str, ...], dict]:
    """Every integer field of ``schema``, by key path (``*``, ``[]`` as above), with its subschema
    (its ``minimum`` and ``maximum``): what the fuzz sets to the extremes, and what the tests check
    has a bound its consumers hold."""
    defs, found = schema.get("$defs", {}), {}
    pending = [((), schema)]
    while pending:
        path, node = pending.pop()
        while "$ref" in node:  # a $ref's siblings (a default, more properties) add to its target
            target = defs[node["$ref"].rsplit("/", 1)[1]]
            node = {**target, **{key: value for key, value in node.items() if key != "$ref"},
                    "properties": {**target.get("properties", {}), **node.get("properties", {})}}
        kinds = node.get("type", [])
        if "integer" in ([kinds] if isinstance(kinds, str) else kinds):
            found[path] = node
        pending += [(path, option) for option in node.get("oneOf", [])]
        pending += [((*path, key), child) for key, child in node.get("properties", {}).items()]
        for key, child in ((ANY_KEY, node.get("additionalProperties")), (ANY_ITEM, node.get("items"))):
            if isinstance(child, dict):
                pending.append(((*path, key), child))
    return found


#: what a config's values may be: what YAML and JSON write as plain data
PLAIN = (dict, list, str, int, float, bool, type(None))


def check_plain_data(config: object, where: str, max_depth: int = CONFIG_LIMITS.max_depth) -> None:
    """Plain data, as ``fpa.safe_load`` reads a file, wherever the config came from (a file, Snakemake's
    ``--config``, a caller's dict): string keys, finite numbers (NaN and infinity pass every JSON Schema
    bound, and YAML writes them .nan, .inf), nesting within ``max_depth``; no recursion."""
    _check_top_level(config, where)
    pending = [(config, ())]
    while pending:
        node, path = pending.pop()
        if len(path) > max_depth:
            raise ConfigError(f"{where}: {_key_path(path[:3])}...: nested deeper than the limit of {max_depth} "
                              "levels (max_depth)")
        if not isinstance(node, PLAIN):
            raise ConfigError(f"{where}: {_key_path(path)}: expected a string, number, boolean, null, list or "
                              f"mapping, got {type(node).__name__} {node!r:.80}")
        if isinstance(node, float) and not math.isfinite(node):
            raise ConfigError(f"{where}: {_key_path(path)}: expected a finite number, got {node!r}")
        for key in node if isinstance(node, dict) else ():
            if not isinstance(key, str):
                raise ConfigError(f"{where}: {_key_path(path)}: key {key!r} ({type(key).__name__}) is not a string; "
                                  "expected a string key (quote it)")
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        pending.extend((child, (*path, key)) for key, child in reversed(list(children)))
