"""Values a program returns, carried out of the sandbox as plain data (tagged JSON).

The code graders compare a program's results with the expected outputs on the host, so
that the expected outputs never enter the sandbox and no code the model wrote takes
part in the comparison. ``ENCODER`` is the sandbox side: ``encode(value)`` gives a result
as JSON text, with one-key tags for what JSON lacks, and raises ``Unserializable`` for
anything else (a class of the program's, with whatever ``__eq__`` it defines). The host
side is ``loads``: it builds only the values listed below, never an object of the
program's; there is no pickle in this direction.

====================  ===========================================================
plain JSON            None, bool, int, float (NaN and infinities as JSON's
                      ``NaN``/``Infinity``), str, list; never a JSON object
``{"tuple": [...]}``  likewise ``set``, ``frozenset``, ``iterator`` (an iterator or
                      generator, drained: its ``==`` is identity, ``set()`` of it
                      works, as in-process), ``dict_keys``, ``dict_values``
``{"dict": [[k, v], ...]}``, ``{"dict_items": ...}``   any hashable keys
``{"int": "0x..."}``  ints too long for ``str()`` (Python's 4,300-digit limit)
``{"long_str": [sha256, length]}``  a str over ``LONG_STR`` characters, as ``LongStr``
                      (HumanEval/15's expected outputs are 147 MB of text)
``{"complex": [re, im]}``, ``{"bytes": base64}``, ``{"fraction": [n, d]}``,
``{"decimal": str}``, ``{"range": [start, stop, step]}``
``{"numpy": [dtype, value]}``, ``{"ndarray": [dtype, shape, nested list]}``
                      numeric, bool and str dtypes; the dtype's own scalar type
====================  ===========================================================

Subclasses of the builtins cross as their base type (a ``namedtuple`` as a tuple, a
``Counter`` as a dict, an ``IntEnum`` as an int), read through the base type's own
methods. A list or tuple of exact ints, floats, bools, Nones, short strs and such lists is
written by ``json`` at C speed (HumanEval/130's outputs are 124 MB of numbers); the rest is
walked in Python. ``Opaque`` stands on the
host for a value that could not cross: it is not None, not a bool, and equal only to
itself. ``LongStr`` stands for a long str: equal to a str of the same text (by its length
and SHA-256, which no program can match without the text) and to another ``LongStr`` of
the same digest.
"""

from __future__ import annotations

import base64
import decimal
import fractions
import hashlib
import json
import re

LONG_STR = 1 << 16  # characters; a longer str crosses as its length and SHA-256

# Sandbox side, prepended to the harnesses that return values. Only the standard library;
# numpy is looked up in sys.modules, so a program that never imported it pays nothing.
ENCODER = f"_LONG_STR = {LONG_STR}" + r'''
import base64 as _base64, collections.abc as _abc, decimal as _decimal, fractions as _fractions, sys as _sys
import hashlib as _hashlib, json as _json

class Unserializable(Exception):
    pass

_dumps, _loads = _json.dumps, _json.loads
_VIEWS = {type({}.keys()): "dict_keys", type({}.values()): "dict_values"}
_COLLECTIONS = ((tuple, "tuple"), (set, "set"), (frozenset, "frozenset"))
_PLAIN = frozenset({int, float, bool, type(None), str, list})

def encode(value):
    """``value`` as tagged JSON text (see fpa.grading.code.values); ``Unserializable`` otherwise."""
    if type(value) in (list, tuple) and _plain(value, 0):
        try:  # json at C speed: it writes such a list as the data it is
            text = _dumps(list(value))
            return text if type(value) is list else '{"tuple": ' + text + "}"
        except (ValueError, RecursionError):  # an int too long for str()
            pass
    return _dumps(_tagged(value, 0))

def _plain(items, depth):
    """A list of exact ints, floats, bools, Nones, short strs and such lists (types checked at C speed)."""
    kinds = set(map(type, items))
    if not kinds <= _PLAIN or depth > 100:
        return False
    if str in kinds and max(len(item) for item in items if type(item) is str) > _LONG_STR:
        return False
    return list not in kinds or all(_plain(item, depth + 1) for item in items if type(item) is list)

def _tagged(value, depth):
    if depth > 200:
        raise Unserializable("nested more than 200 deep")
    numpy = _sys.modules.get("numpy")
    if value is None or type(value) is bool:
        return value
    if numpy is not None and isinstance(value, (numpy.generic, numpy.ndarray)):
        return _numpy(numpy, value, depth)
    if isinstance(value, int):
        number = int.__index__(value)
        return number if number.bit_length() < 10000 else {"int": hex(number)}
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        text = str.__str__(value)
        if len(text) <= _LONG_STR:
            return text
        return {"long_str": [_hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), len(text)]}
    if isinstance(value, list):
        return [_tagged(item, depth + 1) for item in list.__iter__(value)]
    if isinstance(value, dict):
        return {"dict": [[_tagged(k, depth + 1), _tagged(v, depth + 1)] for k, v in dict.items(value)]}
    for kind, tag in _COLLECTIONS:
        if isinstance(value, kind):
            return {tag: [_tagged(item, depth + 1) for item in kind.__iter__(value)]}
    return _other(value, depth)

def _other(value, depth):
    if isinstance(value, complex):
        return {"complex": [complex.__getattribute__(value, "real"), complex.__getattribute__(value, "imag")]}
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": _base64.b64encode(bytes(value)).decode()}
    if type(value) is _fractions.Fraction:
        return {"fraction": [_tagged(value.numerator, depth), _tagged(value.denominator, depth)]}
    if type(value) is _decimal.Decimal:
        return {"decimal": str(value)}
    if type(value) is range:
        return {"range": [_tagged(value.start, depth), _tagged(value.stop, depth), _tagged(value.step, depth)]}
    if type(value) in _VIEWS:
        return {_VIEWS[type(value)]: [_tagged(item, depth + 1) for item in value]}
    if type(value) is type({}.items()):
        return {"dict_items": [[_tagged(k, depth + 1), _tagged(v, depth + 1)] for k, v in value]}
    if isinstance(value, _abc.Iterator):
        return {"iterator": [_tagged(item, depth + 1) for item in value]}
    raise Unserializable(type(value).__qualname__)

def _numpy(numpy, value, depth):
    if value.dtype.kind not in "biufcU":
        raise Unserializable(f"numpy dtype {value.dtype}")
    body = _tagged(value.tolist(), depth + 1)
    if isinstance(value, numpy.generic):
        return {"numpy": [value.dtype.str, body]}
    return {"ndarray": [value.dtype.str, list(value.shape), body]}
'''

_HEX = re.compile(r"-?0x[0-9a-f]+")
_DIGEST = re.compile(r"[0-9a-f]{64}")
NUMPY_KINDS = "biufcU"


class Opaque:
    """A result that could not cross the sandbox boundary (``Unserializable`` there): it
    compares equal to nothing but itself, is not None and is not a bool."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<unserializable {self.type_name}>"


class LongStr:
    """A str over ``LONG_STR`` characters that crossed as its length and SHA-256."""

    __slots__ = ("digest", "length")

    def __init__(self, digest: str, length: int) -> None:
        self.digest, self.length = digest, length

    def __eq__(self, other) -> bool:
        if isinstance(other, LongStr):
            return (self.digest, self.length) == (other.digest, other.length)
        if isinstance(other, str):
            return len(other) == self.length and _sha256(other) == self.digest
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.digest)

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"<str of {self.length} characters, sha256 {self.digest[:12]}...>"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def loads(text: str):
    """The value ``ENCODER`` wrote as ``text``; ``ValueError`` for anything it cannot have written.
    Tags are resolved while ``json`` parses (innermost first), so untagged data costs no Python."""
    try:
        return json.loads(text, object_hook=_untag)
    except RecursionError:
        raise ValueError("nested too deep") from None


def _untag(data: dict):
    if len(data) != 1:
        raise ValueError(f"expected a one-key tag, got an object of {len(data)} keys")
    ((tag, body),) = data.items()
    if tag not in _TAGS:
        raise ValueError(f"unknown tag {tag!r}")
    try:
        return _TAGS[tag](body)
    except (TypeError, ArithmeticError, AttributeError, decimal.InvalidOperation) as error:
        raise ValueError(f"bad {tag!r}: {error}") from None


def _items(body) -> list:
    if not isinstance(body, list):
        raise ValueError(f"expected a list, got {type(body).__name__}")
    return body


def _pairs(body) -> list[tuple]:
    pairs = _items(body)
    if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
        raise ValueError("expected [key, value] pairs")
    return [tuple(pair) for pair in pairs]


def _text(body) -> str:
    if not isinstance(body, str):
        raise ValueError(f"expected a string, got {type(body).__name__}")
    return body


def _big_int(body) -> int:
    if not (isinstance(body, str) and _HEX.fullmatch(body)):
        raise ValueError(f"expected a hex int, got {str(body)[:40]!r}")
    return int(body, 16)


def _long_str(body) -> LongStr:
    digest, length = _items(body)
    if not (isinstance(digest, str) and _DIGEST.fullmatch(digest) and type(length) is int and length > LONG_STR):
        raise ValueError("expected [sha256, length over LONG_STR]")
    return LongStr(digest, length)


def _complex(body) -> complex:
    real, imag = _items(body)
    if not all(isinstance(part, float) for part in (real, imag)):
        raise ValueError("expected two floats")
    return complex(real, imag)


def _numbers(body, count: int) -> list[int]:
    numbers = _items(body)
    if len(numbers) != count or not all(type(number) is int for number in numbers):
        raise ValueError(f"expected {count} ints")
    return numbers


def _numpy_dtype(name):
    import numpy

    dtype = numpy.dtype(name) if isinstance(name, str) else None
    if dtype is None or dtype.kind not in NUMPY_KINDS:
        raise ValueError(f"numpy dtype {name!r}: expected one of the kinds {NUMPY_KINDS!r}")
    return numpy, dtype


def _numpy_scalar(body):
    name, value = _items(body)
    numpy, dtype = _numpy_dtype(name)
    return dtype.type(value)


def _ndarray(body):
    name, shape, values = _items(body)
    numpy, dtype = _numpy_dtype(name)
    if not (isinstance(shape, list) and all(type(size) is int and size >= 0 for size in shape)):
        raise ValueError(f"expected a shape, got {shape!r}")
    return numpy.array(values, dtype=dtype).reshape(shape)


_TAGS = {
    "tuple": lambda body: tuple(_items(body)),
    "set": lambda body: set(_items(body)),
    "frozenset": lambda body: frozenset(_items(body)),
    "iterator": lambda body: iter(_items(body)),
    "dict": lambda body: dict(_pairs(body)),
    "dict_keys": lambda body: dict.fromkeys(_items(body)).keys(),
    "dict_values": lambda body: dict(enumerate(_items(body))).values(),
    "dict_items": lambda body: dict(_pairs(body)).items(),
    "int": _big_int,
    "long_str": _long_str,
    "complex": _complex,
    "bytes": lambda body: base64.b64decode(_text(body).encode(), validate=True),
    "fraction": lambda body: fractions.Fraction(*_numbers(body, 2)),
    "decimal": lambda body: decimal.Decimal(_text(body)),
    "range": lambda body: range(*_numbers(body, 3)),
    "numpy": _numpy_scalar,
    "ndarray": _ndarray,
}
