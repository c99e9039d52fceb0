"""Pairs of (what a program printed, the expected output) for LiveCodeBench's stdout comparison, in the
classes of ``CLASSES``: numbers beyond a float's precision and Python's int-string limit, signs, long
decimals, exponents, other scripts' digits, NaN and infinities, non-numeric tokens, whitespace and line
endings, line counts, and arbitrary text; and the oracle, ``lcb_matches``: LiveCodeBench's own code
(``testing_util.grade_stdio`` of nvidia-livecodebench, run on a program that writes the printed text), so
nothing of its rules is restated here. ``test_stdout_match.py`` judges them with a fixed budget per
class (a larger run, an earlier commit's rule beside: docs/code_eval.md)."""

from __future__ import annotations

import faulthandler
import functools
import signal
import sys
import unicodedata

from hypothesis import strategies as st

LCB_TIMEOUT_S = 6  # testing_util's default per test
DIGIT_SCRIPTS = ("0123456789", "٠١٢٣٤٥٦٧٨٩", "０１２３４５６７８９", "०१२३४५६७८९", "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗")
ODD_TOKENS = ("YES", "yes", "No", "abc", "1,000", "0x10", "1/2", "3.14.15", "--1", "1e", "e5", ".", "+", "_1",
              "1_0", "1__0", "1.", ".5", "²", "½", "Ⅻ", "∞", "1\x00", "-", "Case #1:", "[1,", "2]", "'1'", "True")
SPECIALS = ("nan", "NaN", "-nan", "+NaN", "sNaN", "-sNaN", "nan123", "inf", "-inf", "+inf", "Inf", "INF", "Infinity",
            "-Infinity", "infinity", "infinit")
SEPARATORS = (" ", "  ", "\t", " \t ", "\u3000", "\xa0", "\x0b", "\x0c", "\r", "\x1c", "\u2028", "\x85")
LINE_ENDS = ("\n", "\r\n", "\r", "\n\n", " \n", "\t\n")


# --- the oracle ---------------------------------------------------------------------------------------
@functools.cache
def _testing_util():
    limit = sys.get_int_max_str_digits()
    from livecodebench.evaluation import testing_util  # its package sets sys.set_int_max_str_digits(50000)

    sys.set_int_max_str_digits(limit)  # for this process's other work
    return testing_util


def lcb_matches(printed: str, expected: str) -> bool:
    """LiveCodeBench's verdict: ``grade_stdio`` on a program that writes ``printed``, expecting ``expected``.
    An exception in it (a signalling NaN compared) is what ``run_test`` reports as an error: a failure."""
    testing_util = _testing_util()
    faults, recursion = faulthandler.is_enabled(), sys.getrecursionlimit()
    previous = signal.signal(signal.SIGALRM, testing_util.timeout_handler)  # as run_test sets it
    try:
        results, _ = testing_util.grade_stdio(f"import sys\nsys.stdout.write({printed!r})\n", [""], [expected],
                                              timeout=LCB_TIMEOUT_S)
    except Exception:
        return False
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        sys.setrecursionlimit(recursion)  # its import header sets 50000
        if faults:  # grade_stdio turns faulthandler off
            faulthandler.enable(file=sys.__stderr__)
    return results == [True]


# --- the classes of generated pairs --------------------------------------------------------------------
def _repeat(pattern: str, length: int) -> str:
    return (pattern * (length // len(pattern) + 1))[:length]


@st.composite
def big_integers(draw) -> str:
    """17 to 5,000 digits: past a double's 15-17 digits and Python's 4,300-digit int-string limit."""
    length = draw(st.sampled_from([17, 19, 20, 21, 40, 400, 4300, 4301, 5000]))
    body = _repeat(draw(st.text("0123456789", min_size=1, max_size=12)), length - 1)
    return draw(st.sampled_from(["", "-"])) + draw(st.sampled_from("123456789")) + body


@st.composite
def long_decimals(draw) -> str:
    whole = draw(st.sampled_from(["0", "1", "3", "12", "100"]))
    fraction = _repeat(draw(st.text("0123456789", min_size=1, max_size=8)), draw(st.integers(1, 60)))
    return draw(st.sampled_from(["", "-"])) + whole + "." + fraction


@st.composite
def exponents(draw) -> str:
    mantissa = draw(st.sampled_from(["1", "1.5", "0.0", "25", "-3.0", "0", "1.000"]))
    power = draw(st.sampled_from(["0", "5", "05", "18", "19", "400", "999999999999999999", "9999999999999999999999"]))
    return mantissa + draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"])) + power


@st.composite
def unicode_digits(draw) -> str:
    value = str(draw(st.integers(0, 10**30)))
    script = draw(st.sampled_from(DIGIT_SCRIPTS))
    return "".join(script[int(digit)] for digit in value)


SIGNED = st.builds(str.__add__, st.sampled_from(["", "+", "-", "+-"]), st.sampled_from(["0", "00", "1", "7", "10"]))
TOKENS: dict[str, st.SearchStrategy[str]] = {
    "big integers": big_integers(),
    "signed integers": SIGNED,
    "long decimals": long_decimals(),
    "exponents": exponents(),
    "unicode digits": unicode_digits(),
    "nan and inf": st.sampled_from(SPECIALS),
    "non-numeric tokens": st.sampled_from(ODD_TOKENS) | st.text(max_size=6),
}


def _edit(token: str, edit: str) -> str:
    """What a program might print instead of ``token``."""
    if edit == "digit changed":
        at = [index for index, char in enumerate(token) if char.isdigit()]
        if at:  # the last digit, to 1 if it is a 0, else to 0
            return token[:at[-1]] + ("1" if unicodedata.digit(token[at[-1]]) == 0 else "0") + token[at[-1] + 1:]
    if edit == "zero padded":
        sign = token[:1] if token[:1] in "+-" else ""
        return sign + "0" + token[len(sign):]
    if edit == "plus sign":
        return "+" + token
    if edit == "minus sign":
        return "-" + token
    if edit == "trailing zero":
        return token + ("0" if "." in token and "e" not in token.lower() else ".0")
    if edit == "as a float":
        try:
            return repr(float(token))
        except (ValueError, OverflowError):
            return token
    if edit == "ascii digits":
        return "".join(str(unicodedata.digit(char)) if char.isdigit() else char for char in token)
    if edit == "case swapped":
        return token.swapcase()
    return token


EDITS = ("same", "digit changed", "zero padded", "plus sign", "minus sign", "trailing zero", "as a float",
         "ascii digits", "case swapped", "another token")


@st.composite
def token_pairs(draw, tokens: st.SearchStrategy[str]) -> tuple[str, str]:
    """Lines of tokens as expected, and as printed: one token, or all of them, edited the same way."""
    expected = draw(st.lists(st.lists(tokens, min_size=1, max_size=3), min_size=1, max_size=3))
    edit, line = draw(st.sampled_from(EDITS)), draw(st.integers(0, len(expected) - 1))
    column = draw(st.integers(0, len(expected[line]) - 1)) if draw(st.booleans()) else None  # None: all tokens
    printed = [[(draw(tokens) if edit == "another token" else _edit(token, edit))
                if column is None or (row, col) == (line, column) else token
                for col, token in enumerate(tokens_of_line)] for row, tokens_of_line in enumerate(expected)]
    return _layout(printed), _layout(expected)


def _layout(lines: list[list[str]], separator: str = " ", end: str = "\n") -> str:
    return "".join(separator.join(line) + end for line in lines)


@st.composite
def whitespace_pairs(draw) -> tuple[str, str]:
    """The same integers as expected, printed with other separators, line endings and blank lines."""
    lines = draw(st.lists(st.lists(st.sampled_from(["1", "-2", "30", "0", "yes"]), min_size=1, max_size=3),
                          min_size=1, max_size=3))
    printed = _layout(lines, draw(st.sampled_from(SEPARATORS)), draw(st.sampled_from(LINE_ENDS)))
    before, after = draw(st.sampled_from(["", "\n", "\n\n", " ", "\t\n"])), draw(st.sampled_from(["", "\n", "  \n"]))
    return before + printed + after, _layout(lines)


@st.composite
def line_count_pairs(draw) -> tuple[str, str]:
    """A line added, dropped, split in two or joined with the next, or a blank line inside."""
    lines = draw(st.lists(st.lists(st.sampled_from(["1", "2", "3 4"]), min_size=1, max_size=2), min_size=1,
                          max_size=4))
    printed = [" ".join(line) for line in lines]
    at = draw(st.integers(0, len(printed) - 1))
    change = draw(st.sampled_from(["add", "drop", "split", "join", "blank"]))
    if change == "add":
        printed.insert(at, "1")
    elif change == "drop":
        del printed[at]
    elif change == "split":
        printed[at] = printed[at].replace(" ", "\n", 1) if " " in printed[at] else printed[at] + "\n"
    elif change == "join" and at + 1 < len(printed):
        printed[at:at + 2] = [printed[at] + " " + printed[at + 1]]
    elif change == "blank":
        printed.insert(at, "")
    return "\n".join(printed) + "\n", _layout(lines)


ARBITRARY = st.text(max_size=30)
CLASSES: dict[str, st.SearchStrategy[tuple[str, str]]] = {
    **{name: token_pairs(tokens) for name, tokens in TOKENS.items()},
    "whitespace": whitespace_pairs(),
    "line counts": line_count_pairs(),
    "arbitrary text": st.tuples(ARBITRARY, ARBITRARY) | ARBITRARY.map(lambda text: (text, text.strip() + "\n")),
}
