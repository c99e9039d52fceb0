"""The sandbox side of ``fpa.grading.code.values``: ``ENCODER``, prepended to the harnesses
that send back what a program returned. ``encode(value)`` gives the value as tagged JSON
text (the format is ``values``' table), or its digest for a large list or tuple, and
raises ``Unserializable`` for anything else. Only the standard library; numpy is looked
up in ``sys.modules``, so a program that never imported it pays nothing.
"""

LONG_STR = 1 << 16  # characters; a longer str crosses as its length and SHA-256
DIGEST_OVER = 32 << 20  # bytes of pickle; a larger list or tuple crosses as its SHA-256
DIGEST_PROBE = 10_000  # items; only a list or tuple longer than this is measured for a digest

ENCODER = f"_LONG_STR, _DIGEST_OVER, _DIGEST_PROBE = {LONG_STR}, {DIGEST_OVER}, {DIGEST_PROBE}" + r'''
import base64 as _base64, collections.abc as _abc, decimal as _decimal, fractions as _fractions, sys as _sys
import hashlib as _hashlib, itertools as _itertools, json as _json, pickle as _pickle
_chain = _itertools.chain

class Unserializable(Exception):
    pass

_dumps = _json.dumps
_VIEWS = {type({}.keys()): "dict_keys", type({}.values()): "dict_values"}
_COLLECTIONS = {tuple: "tuple", set: "set", frozenset: "frozenset"}
_BASES = (int, float, str, list, dict, tuple, set, frozenset)
from collections import Counter as _Counter, OrderedDict as _OrderedDict
_SPECIAL = {_OrderedDict: "ordered_dict", _Counter: "counter"}  # subclasses whose == is not their base's
_SCALARS = frozenset({int, float, bool, type(None), str})
_PLAIN = _SCALARS | {list}

def encode(value):
    """``value`` as tagged JSON text (see fpa.grading.code.values); ``Unserializable`` otherwise."""
    items = lambda: iter(value)  # noqa: E731
    if type(value) in (list, tuple) and len(value) > _DIGEST_PROBE:
        try:  # an object of the program's pickles with its class: it cannot match plain data
            sha256, size = digest(value)
        except Exception:
            size = 0
        if size > _DIGEST_OVER:
            return _dumps({"digest": [sha256, size]})
    try:  # json at C speed where it writes the data as it is, or as _tagged would
        if type(value) in (list, tuple) and _plain(items, 0, _PLAIN, _LONG_STR):
            text = _dumps(list(value))
            return text if type(value) is list else '{"tuple": ' + text + "}"
        if type(value) is list and set(map(type, value)) == {tuple} and _plain(
                lambda: _chain.from_iterable(value), 1, _SCALARS, _LONG_STR):  # a list of tuples of scalars
            return "[" + ", ".join(['{"tuple": ' + text + "}" for text in map(_dumps, value)]) + "]"
    except (ValueError, RecursionError):  # an int too long for str()
        pass
    return _dumps(_tagged(value, 0))

def _plain(items, depth, allowed, longest):
    """The items that ``items()`` iterates, and those of the lists and tuples among them, are of
    exact ``allowed`` types and no str is over ``longest``; one pass per level at C speed."""
    kinds = set(map(type, items()))
    if not kinds <= allowed or depth > 100:
        return False
    if longest is not None and str in kinds and max(map(len, filter(str.__instancecheck__, items()))) > longest:
        return False
    nested = kinds & {list, tuple}
    if not nested:
        return True
    if kinds == nested:  # containers only: the next level in one pass
        return _plain(lambda: _chain.from_iterable(items()), depth + 1, allowed, longest)
    return all(_plain(lambda: iter(item), depth + 1, allowed, longest) for item in items() if type(item) in nested)

class _Sha256Sink:
    def __init__(self):
        self.hash, self.size = _hashlib.sha256(), 0
    def write(self, data):
        self.hash.update(data)
        self.size += len(data)
        return len(data)

def digest(value):
    """(SHA-256, bytes) of the pickle of ``value``, streamed: protocol 5 with no memo (``fast``,
    deprecated but kept by CPython), so that shared objects are written like copies."""
    sink = _Sha256Sink()
    pickler = _pickle.Pickler(sink, protocol=5)
    pickler.fast = True
    pickler.dump(value)
    return sink.hash.hexdigest(), sink.size

def _tagged(value, depth):
    if depth > 200:
        raise Unserializable("nested more than 200 deep")
    numpy = _sys.modules.get("numpy")
    if value is None or type(value) is bool:
        return value
    if numpy is not None and isinstance(value, (numpy.generic, numpy.ndarray)):
        return _numpy(numpy, value, depth)
    for base in _BASES:
        if isinstance(value, base):
            body = _base_value(base, value, depth)
            if type(value) is base:
                return body
            if type(value) is _OrderedDict or type(value) is _Counter:
                return {_SPECIAL[type(value)]: body["dict"]}
            return {"sub": [base.__name__, body]}  # a subclass: its base's value, and that its type is another
    return _other(value, depth)

def _base_value(base, value, depth):
    if base is int:
        number = int.__index__(value)
        return number if number.bit_length() < 10000 else {"int": hex(number)}
    if base is float:
        return float.__float__(value)
    if base is str:
        text = str.__str__(value)
        if len(text) <= _LONG_STR:
            return text
        return {"long_str": [_hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), len(text)]}
    if base is list:
        return [_tagged(item, depth + 1) for item in list.__iter__(value)]
    if base is dict:
        return {"dict": [[_tagged(k, depth + 1), _tagged(v, depth + 1)] for k, v in dict.items(value)]}
    return {_COLLECTIONS[base]: [_tagged(item, depth + 1) for item in base.__iter__(value)]}

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
