"""A long job's log: whole lines with the rate and the time left, no carriage return."""

import io
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from fpa.progress import EVERY_S_ENV, map_in_pool, progress


def test_a_log_gets_whole_lines_with_rate_and_time_left(monkeypatch):
    monkeypatch.setenv(EVERY_S_ENV, "0.01")
    log = io.StringIO()
    with progress(5, "train fpa", unit="step", stream=log) as bar:
        for step in range(5):
            time.sleep(0.02)
            bar.set_postfix(loss=f"{1 / (step + 1):.4f}", refresh=False)
            bar.update(1)
    text = log.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    assert lines[0].startswith("train fpa: 0/5 steps (0%)")
    assert re.fullmatch(r"train fpa: 5/5 steps \(100%\), \d+\.\d\dstep/s, 00:00 spent, 00:00 left, loss=0\.2000",
                        lines[-1]), lines[-1]
    assert len(lines) >= 3  # lines on the way, not only the first and the last


def test_lines_are_spaced_by_the_interval(monkeypatch):
    monkeypatch.setenv(EVERY_S_ENV, "3600")
    log = io.StringIO()
    with progress(1000, "generate", unit="completion", stream=log) as bar:
        for _ in range(1000):
            bar.update(1)
    assert len(log.getvalue().splitlines()) == 2  # the start and the end


def test_a_bad_interval_is_refused(monkeypatch):
    monkeypatch.setenv(EVERY_S_ENV, "soon")
    with pytest.raises(ValueError, match="FPA_PROGRESS_EVERY_S: expected a number of seconds, got 'soon'"):
        progress(1, "x", stream=io.StringIO())


def test_map_in_pool_keeps_the_order_and_counts_weights(monkeypatch):
    monkeypatch.setenv(EVERY_S_ENV, "3600")
    items = [3, 1, 2]
    with ThreadPoolExecutor(3) as pool:
        assert map_in_pool(pool, lambda x: (time.sleep(x / 100), x * 10)[1], items, "grade", weight=int) == [30, 10, 20]
