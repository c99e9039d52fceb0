"""Values out of the sandbox: what crosses compares as the original did; an object of the program's does not cross."""

from __future__ import annotations

import collections
import decimal
import enum
import fractions
import hashlib
import json
import math
import pickle

import numpy as np
import pytest

from fpa.grading.code.encoder import DIGEST_OVER, ENCODER, LONG_STR
from fpa.grading.code.values import SUBCLASSES, Digest, LongStr, Opaque, Subclass, loads
from fpa.sandbox import Sandbox


@pytest.fixture(scope="module")
def encoder():
    namespace: dict = {}
    exec(ENCODER, namespace)  # the sandbox side, run here on values made here
    return namespace


def crossed(encoder, value):
    return loads(encoder["encode"](value))


Point = collections.namedtuple("Point", "x y")


class Colour(enum.IntEnum):
    RED = 3


class Offset(float):
    pass


def test_a_subclass_is_not_its_base_and_order_counts_where_it_does(encoder):
    """EvalPlus compares ``type(out) != type(exp)`` before its float tolerance, and ``OrderedDict``'s ``==``
    counts the order: a float subclass 1e-9 off and an ``OrderedDict`` in another order fail there, and
    cross so that they fail here (issue 57; before, both crossed as their base and passed)."""
    assert type(crossed(encoder, Offset(1.0 + 1e-9))) is not float
    assert crossed(encoder, collections.OrderedDict(a=1, b=2)) != collections.OrderedDict(b=2, a=1)
    assert crossed(encoder, {"a": 1, "b": 2}) == collections.OrderedDict(b=2, a=1)  # a dict's == ignores order


@pytest.mark.parametrize("value", [
    None, True, 0, -7, 2**20000, 1.5, -0.0, math.inf, "text", "\udc80 lone surrogate", [1, [2.0, "a"]],
    (1, (2, 3)), {1, 2}, frozenset({"a"}), {(1, 2): [3], "k": {4: 5}}, 1 + 2j, b"\x00\xff", bytearray(b"ab"),
    fractions.Fraction(1, 3), decimal.Decimal("0.1"), range(1, 9, 2), {"a": 1}.keys(), {"a": 1}.items(),
    np.float64(0.5), np.int32(-3), np.bool_(True), np.array([[1.5, 2.0]]), np.array(["a", "bc"]),
    Point(1, 2), collections.Counter("aab"), Colour.RED, "x" * (LONG_STR + 1), collections.OrderedDict(b=1, a=2),
    Offset(0.5), collections.defaultdict(int, {1: 2}),
], ids=lambda value: type(value).__name__)  # fmt: skip
def test_crossed_values_compare_as_the_originals(encoder, value):
    back = crossed(encoder, value)
    same = back == value
    assert (same.all() if isinstance(same, np.ndarray) else same), (back, value)
    base = {Point: SUBCLASSES["tuple"], Colour: SUBCLASSES["int"], Offset: SUBCLASSES["float"], bytearray: bytes,
            collections.defaultdict: SUBCLASSES["dict"]}.get(type(value), type(value))
    expected_type = LongStr if isinstance(value, str) and len(value) > LONG_STR else base
    assert type(back) is expected_type


def test_special_floats_and_identity_semantics(encoder):
    assert math.isnan(crossed(encoder, math.nan))
    assert crossed(encoder, (1,)) != [1] and crossed(encoder, [True]) == [1]  # as in Python
    drained = crossed(encoder, (x * x for x in range(4)))
    assert drained != [0, 1, 4, 9] and set(drained) == {0, 1, 4, 9}  # a generator: == is identity
    assert crossed(encoder, {"a": 1}.values()) != [1]


def test_a_program_object_does_not_cross(encoder):
    class AlwaysEqual:
        def __eq__(self, other):
            return True

    for value in (AlwaysEqual(), [1, AlwaysEqual()], {"k": AlwaysEqual()}, np.array([AlwaysEqual()]), len):
        with pytest.raises(encoder["Unserializable"]):
            encoder["encode"](value)
    opaque = Opaque("AlwaysEqual")
    assert opaque != 1 and opaque != opaque.__class__("AlwaysEqual") and opaque is not None


def test_long_str_equals_only_the_same_text():
    text = "y" * (LONG_STR + 5)
    long = loads(json.dumps({"long_str": [hashlib.sha256(text.encode()).hexdigest(), len(text)]}))
    assert long == text and text == long and long != text[:-1] + "z" and long != 5


class Name(str):
    pass


def test_a_long_str_subclass_crosses_as_a_subclass(encoder):
    """A str subclass over LONG_STR characters crosses as ``{"sub": ["str", {"long_str": ...}]}``
    (before, decoding it raised "expected [base, a value of that base], got 'str'")."""
    text = "z" * (LONG_STR + 1)
    back = crossed(encoder, Name(text))
    assert isinstance(back, Subclass) and back == text and back != text[:-1] + "y"
    assert type(back) is not type(crossed(encoder, text))  # EvalPlus's type(out) != type(exp) fails it


@pytest.mark.parametrize("data", [
    {"object": []}, {"tuple": [1], "set": [2]}, {"dict": [[[1], 2]]}, {"int": "12"}, {"complex": [1, "a"]},
    {"bytes": 5}, {"fraction": [1, 0]}, {"numpy": ["O", 1]}, {"ndarray": ["<f8", [-1], [1.0]]}, {},
    {"long_str": ["ab", 70000]}, {"range": [1.5, 2, 1]}, {"sub": ["object", 1]}, {"sub": ["float", "1.5"]},
    {"sub": ["int", {"long_str": ["a" * 64, 70000]}]}, {"sub": ["list", {"digest": ["a" * 64, 1]}]},
], ids=repr)  # fmt: skip
def test_data_a_program_forged_is_refused(data):
    with pytest.raises(ValueError):
        loads(json.dumps(data))


def test_values_cross_the_sandbox():
    """Out of a sandboxed process with no numpy loaded, where plain lists take json's C path."""
    values = [[1, 2.5, None, True, "s", [3, [4.0, -0.0]]], (1.5, 2), [1, (2, 3)], [{"k": 1}], [2**20000],
              ["x" * (LONG_STR + 1)], list(range(100_000)), [math.inf]]  # fmt: skip
    source = ENCODER + "import pickle, sys\nfor value in pickle.loads(sys.stdin.buffer.read()):\n    print(encode(value))\n"
    result = Sandbox().run_python(source, stdin=pickle.dumps(values + [[math.nan]]))
    back = [loads(line) for line in result.stdout.splitlines()]
    assert back[:-1] == values and [type(value) for value in back[:-1]] == [type(value) for value in values]
    assert type(back[1][1]) is int and type(back[2][1]) is tuple and type(back[5][0]) is LongStr
    assert math.isnan(back[-1][0])


def test_a_large_list_crosses_as_its_digest(encoder):
    """Over DIGEST_OVER bytes of pickle (2 million tuples, as Mbpp/255's): equal only to a value
    of the same pickle, whatever objects it shares; a list is not a tuple, 1 is not 1.0."""
    colours = ["Red", "Green", "Blue"]
    value = [(colours[i % 3], i, 1.0) for i in range(2_000_000)]
    back = crossed(encoder, value)
    assert type(back) is Digest and back.size > DIGEST_OVER
    assert back == [("".join(c), i, 1.0) for c, i, _ in value]  # new str objects, not the shared ones
    assert back != [list(row) for row in value] and back != value[:-1] + [("Blue", 1_999_999, 2.0)]
    assert back != [(c, i, 1) for c, i, _ in value]  # equal in Python: a digest is compared exactly
