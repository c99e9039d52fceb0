"""Values a program returns, carried out of the sandbox as plain data (tagged JSON).

The code graders compare a program's results with the expected outputs on the host, so
that the expected outputs never enter the sandbox and no code the model wrote takes
part in the comparison. ``fpa.grading.code.encoder.ENCODER`` is the sandbox side:
``encode(value)`` gives a result as JSON text, with one-key tags for what JSON lacks, and
raises ``Unserializable`` for anything else (a class of the program's, with whatever
``__eq__`` it defines). The host side is ``loads``: it builds only the values listed below,
never an object of the program's; nothing is unpickled in this direction.

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
``{"digest": [sha256, bytes]}``  a list or tuple (over ``DIGEST_PROBE`` items) whose
                      pickle is over ``DIGEST_OVER`` bytes, as ``Digest``
                      (Mbpp/255's expected outputs: 2 million tuples, 1.3 GB as JSON)
``{"complex": [re, im]}``, ``{"bytes": base64}``, ``{"fraction": [n, d]}``,
``{"decimal": str}``, ``{"range": [start, stop, step]}``
``{"numpy": [dtype, value]}``, ``{"ndarray": [dtype, shape, nested list]}``
                      numeric, bool and str dtypes; the dtype's own scalar type
====================  ===========================================================

``{"sub": [base, body]}``  a value of a subclass of ``int``, ``float``, ``str``, ``list``,
                      ``dict``, ``tuple``, ``set`` or ``frozenset``, as ``Subclass`` (a long
                      str's body is its ``long_str``, as ``LONG_SUBCLASS_OF_STR``)
``{"ordered_dict": [[k, v], ...]}``, ``{"counter": ...}``  an ``OrderedDict``, a ``Counter``

A subclass of a builtin (a ``namedtuple``, an ``IntEnum``, a ``float`` subclass) is read through
its base type's own methods and crosses as a value of a host-made subclass of that base
(``SUBCLASSES``): it compares as its base does, and its type is not the base's, so that
EvalPlus's ``type(out) != type(exp)`` fails it as in-process. ``OrderedDict`` and ``Counter``,
whose ``==`` is their own (order; missing counts as zero), cross as themselves. A list or tuple of exact ints, floats, bools, Nones, short strs and such lists, and
a list of tuples of those scalars, is written by ``json`` at C speed (HumanEval/130's
outputs are 124 MB of numbers); the rest is walked in Python. ``Opaque`` stands on the host for a value that could not cross: it is
not None, not a bool, and equal only to itself. ``LongStr`` and ``Digest`` stand for a
value by its SHA-256, which no program can match without the value: a ``LongStr`` equals a
str of the same text, a ``Digest`` a list or tuple of the same pickle (protocol 5, no
memo: equal values of the same types, whatever objects they share, give the same bytes),
and each one of the same digest. A ``Digest`` is compared exactly: an output that equals
the expected one only as ``1 == 1.0`` or within a float tolerance is not equal to it.
"""

from __future__ import annotations

import base64
import collections
import decimal
import fractions
import hashlib
import json
import re

from fpa.grading.code.encoder import DIGEST_OVER, ENCODER, LONG_STR

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


class Digest:
    """A list or tuple over ``DIGEST_OVER`` bytes of pickle that crossed as the SHA-256 of that
    pickle; equal to a list or tuple of the same pickle (computed here, never unpickled)."""

    __slots__ = ("sha256", "size")

    def __init__(self, sha256: str, size: int) -> None:
        self.sha256, self.size = sha256, size

    def __eq__(self, other) -> bool:
        if isinstance(other, Digest):
            return (self.sha256, self.size) == (other.sha256, other.size)
        if type(other) in (list, tuple):  # made here (decoded, or a test's expected value), not by a program
            return _SANDBOX_SIDE["digest"](other) == (self.sha256, self.size)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.sha256)

    def __repr__(self) -> str:
        return f"<pickle of {self.size} bytes, sha256 {self.sha256[:12]}...>"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_SANDBOX_SIDE: dict = {}
exec(ENCODER, _SANDBOX_SIDE)  # its digest(), to compare a Digest with a value made here (ours, not a program's)


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


def _digest(body) -> Digest:
    sha256, size = _items(body)
    if not (isinstance(sha256, str) and _DIGEST.fullmatch(sha256) and type(size) is int and size > DIGEST_OVER):
        raise ValueError("expected [sha256, bytes over DIGEST_OVER]")
    return Digest(sha256, size)


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


class Subclass:
    """Marks a value that crossed as an instance of a subclass of its base type (which one is not kept)."""

    __slots__ = ()


_BASES = {base.__name__: base for base in (int, float, str, list, dict, tuple, set, frozenset)}
SUBCLASSES = {name: type(f"subclass_of_{name}", (Subclass, base),
                         {"__slots__": ()} if base in (int, str, tuple) else {}) for name, base in _BASES.items()}
LONG_SUBCLASS_OF_STR = type("long_subclass_of_str", (Subclass, LongStr), {"__slots__": ()})


def _subclass(body):
    base, value = _items(body)
    if base == "str" and type(value) is LongStr:  # the encoder sends a long str subclass's text as its digest
        return LONG_SUBCLASS_OF_STR(value.digest, value.length)
    if base not in _BASES or type(value) is not _BASES[base]:
        raise ValueError(f"expected [base, a value of that base], got {base!r}")
    return SUBCLASSES[base](value)


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
    "digest": _digest,
    "complex": _complex,
    "bytes": lambda body: base64.b64decode(_text(body).encode(), validate=True),
    "fraction": lambda body: fractions.Fraction(*_numbers(body, 2)),
    "decimal": lambda body: decimal.Decimal(_text(body)),
    "range": lambda body: range(*_numbers(body, 3)),
    "numpy": _numpy_scalar,
    "ndarray": _ndarray,
    "sub": _subclass,
    "ordered_dict": lambda body: collections.OrderedDict(_pairs(body)),
    "counter": lambda body: collections.Counter(dict(_pairs(body))),
}
