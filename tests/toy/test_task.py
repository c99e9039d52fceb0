import random
import re
from collections import Counter

import pytest

from fpa.grading.answers import grade_toy
from fpa.samples.prompts import render_prompt
from fpa.toy.task import (
    DEFAULT_PROMPT_TEMPLATE,
    SPLITS,
    TRACE_STYLES,
    make_problems,
    parse_problem,
    render_trace,
    solve,
    split_of,
)


def test_make_problems_is_deterministic_and_distinct():
    a = make_problems(200, seed=3, split="train")
    assert a == make_problems(200, seed=3, split="train")
    assert a != make_problems(200, seed=4, split="train")
    assert len({r["problem"] for r in a}) == len({r["id"] for r in a}) == 200
    assert set(a[0]) == {"id", "problem", "answer", "source"}
    assert all(r["answer"] == str(solve(r["problem"])) for r in a)
    for record in a:
        operands = parse_problem(record["problem"])
        assert len(operands) == 6 and all(1 <= abs(o) <= 9 for o in operands)
        assert all(sum(operands[:k]) >= 0 for k in range(1, 7))  # partial sums never negative


def test_too_many_problems_for_a_short_chain():
    assert len(make_problems(50, seed=0, n_operands=3)) == 50
    with pytest.raises(ValueError, match="too few distinct 2-operand"):
        make_problems(20, seed=0, n_operands=2)


def test_splits_are_disjoint():
    problems = {split: {r["problem"] for r in make_problems(300, seed=0, split=split)} for split in SPLITS}
    problems["test-other-seed"] = {r["problem"] for r in make_problems(300, seed=1, split="test")}
    names = sorted(problems)
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            if {x, y} != {"test", "test-other-seed"}:
                assert not problems[x] & problems[y], (x, y)
    assert all(split_of(p) == "sft" for p in problems["sft"])


def test_unknown_split_lists_choices():
    with pytest.raises(ValueError, match="validation"):
        make_problems(3, seed=0, split="dev")


def test_trace_without_slips_is_correct():
    trace = render_trace("3+4-2+7-1+5", random.Random(0), slip_rate=0.0)
    assert trace == "3+4=7. 7-2=5. 5+7=12. 12-1=11. 11+5=16. The final answer is \\boxed{16}"
    assert render_trace("1-9+2", random.Random(0)) == "1-9=-8. -8+2=-6. The final answer is \\boxed{-6}"


def test_slips_are_carried_and_make_the_answer_wrong():
    rng = random.Random(0)
    for record in make_problems(300, seed=0, split="sft"):
        always = render_trace(record["problem"], rng, slip_rate=1.0)
        assert not grade_toy(always, record["answer"])
        trace = render_trace(record["problem"], rng, slip_rate=0.3)
        steps = trace.split(" The final")[0].split(" ")
        parsed = [re.fullmatch(r"(-?\d+)([+-]\d)=(-?\d+)\.", step).groups() for step in steps]
        slipped = any(int(a) + int(b) != int(c) for a, b, c in parsed)
        # each step starts from the previous written sum: a slip is carried forward
        assert all(parsed[i + 1][0] == parsed[i][2] for i in range(len(parsed) - 1))
        assert grade_toy(trace, record["answer"]) == (not slipped)


def test_default_prompt_template():
    assert render_prompt(DEFAULT_PROMPT_TEMPLATE, "1+2") == "Q: 1+2\nA:"


def test_a_varied_trace_keeps_the_arithmetic_and_draws_each_form_by_its_weight():
    rng = random.Random(0)
    style = TRACE_STYLES["varied"]
    leads = Counter()
    for record in make_problems(300, seed=0, split="sft", n_operands=9):
        trace = render_trace(record["problem"], rng, slip_rate=0.2, style="varied")
        body, ending = re.fullmatch(r"(.*[.;]) (\D*) \\boxed\{-?\d+\}", trace).groups()
        assert ending in {text for text, _ in style.ending}
        parsed = [re.fullmatch(r"(then |so |now |)(-?\d+) ?([+-]) ?(\d) ?= ?(-?\d+)[.;]", step).groups()
                  for step in re.findall(r"(?:[a-z]+ )?-?\d+ ?[+-] ?\d ?= ?-?\d+[.;]", body)]
        assert len(parsed) == 8
        leads.update(lead for lead, *_ in parsed)
        slipped = any(int(a) + int(sign + b) != int(c) for _, a, sign, b, c in parsed)
        assert all(parsed[i + 1][1] == parsed[i][4] for i in range(len(parsed) - 1))  # carried
        assert grade_toy(trace, record["answer"]) == (not slipped)
    # 2,400 steps: each lead's share within 3 points of its weight
    assert all(abs(leads[text] / 2400 - weight) < 0.03 for text, weight in style.lead), leads


def test_a_marks_trace_is_the_plain_one_with_a_mark_around_every_step():
    style = TRACE_STYLES["marks"]
    leads, closes = dict(style.lead), dict(style.close)
    assert sum(leads.values()) == pytest.approx(1) and sum(closes.values()) == pytest.approx(1)
    drawn = Counter()
    rng = random.Random(0)
    for record in make_problems(300, seed=0, split="sft", n_operands=9):
        trace = render_trace(record["problem"], rng, slip_rate=0.2, style="marks")
        body = re.fullmatch(r"(.*) The final answer is \\boxed\{-?\d+\}", trace)[1]
        steps = body.split(" ")
        assert len(steps) == 8 and all(step[0] in leads and step[-1] in closes for step in steps)
        drawn.update(step[0] for step in steps)
        # within its marks, every step is plain's, at plain's width: a sum written from the last one
        parsed = [re.fullmatch(r"(-?\d+)([+-]\d)=(-?\d+)", step[1:-1]).groups() for step in steps]
        assert all(parsed[i + 1][0] == parsed[i][2] for i in range(len(parsed) - 1))
        slipped = any(int(a) + int(b) != int(c) for a, b, c in parsed)
        assert grade_toy(trace, record["answer"]) == (not slipped)
    # 2,400 steps: each lead's share within 3 points of its weight (0.6, and 0.05 for each rare one)
    assert all(abs(drawn[mark] / 2400 - weight) < 0.03 for mark, weight in leads.items()), drawn


# traces written by render_trace before the trace_style knob (commit 7ba9ff5), seeds fixed
TRACES_BEFORE_STYLES = [
    ("3+4-2", 5, 0.3, "3+4=7. 7-2=5. The final answer is \\boxed{5}"),
    ("9-8+7-1+2", 11, 0.5, "9-8=3. 3+7=12. 12-1=13. 13+2=15. The final answer is \\boxed{15}"),
    ("1+2+3", 0, 0.0, "1+2=3. 3+3=6. The final answer is \\boxed{6}"),
]


def test_the_plain_style_is_the_trace_before_styles_and_an_unknown_style_is_refused():
    for problem, seed, slip_rate, before in TRACES_BEFORE_STYLES:
        assert render_trace(problem, random.Random(seed), slip_rate, style="plain") == before
    expected = "trace_style: expected one of \\['coda', 'marks', 'peaked', 'plain', 'varied'\\], got 'fancy'"
    with pytest.raises(ValueError, match=expected):
        render_trace("3+4-2", random.Random(0), style="fancy")
