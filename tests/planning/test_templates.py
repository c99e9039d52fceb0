"""Templates checked for what their renderers need (issue 42): a prompt template holds ``{problem}``
(rendered by literal replacement), a sharded catalog url is a ``str.format`` template of ``{shard}`` only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from fpa.catalog import read_benchmarks_config
from fpa.config.templates import check_prompt_template, check_url_template
from fpa.errors import ConfigError
from fpa.planning import judge
from fpa.samples.prompts import PAPER_MATH_TEMPLATE, render_prompt

ROOT = Path(__file__).resolve().parents[2]
SHARDED = "https://host/train-{shard:05d}-of-00009.parquet"


@pytest.mark.parametrize("template", [PAPER_MATH_TEMPLATE, "{problem}", "Q: {problem}\nA: {problem}", "{{problem}}"])
def test_a_template_holding_problem_is_accepted_and_renders_the_problem(template):
    check_prompt_template(template, "t")
    assert "2+2" in render_prompt(template, "2+2")


@pytest.mark.parametrize("template", ["", "Q: {question}\nA:", "Q: {Problem}", "Q: { problem }", "Q: problem",
                                      "Q: {problem"])
def test_a_template_without_problem_is_refused_in_one_line(template):
    with pytest.raises(ConfigError, match=r"^t: expected the placeholder \{problem\} .*, got ") as error:
        check_prompt_template(template, "t")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("url", [SHARDED, "https://host/{shard}.parquet", "https://host/{{x}}/{shard:d}.parquet"])
def test_a_sharded_url_of_the_shard_field_is_accepted(url):
    check_url_template({"url": url, "shards": 2}, "c")


@pytest.mark.parametrize("url, expected", [
    ("https://host/{shard:05d}-{total}.parquet", r"expected exactly the field \{shard\} .*\['shard', 'total'\]"),
    ("https://host/{}.parquet", r"expected exactly the field \{shard\} .*\[''\]"),
    ("https://host/x.parquet", r"expected exactly the field \{shard\} .*got the fields \[\]"),
    ("https://host/{shard[0]}.parquet", r"expected exactly the field \{shard\} .*\['shard\[0\]'\]"),
    ("https://host/{shard}-}.parquet", r"not a str\.format template \(Single '\}' encountered"),
    ("https://host/{shard.parquet", r"not a str\.format template"),
    ("https://host/{shard:s}.parquet", r"\{shard\}'s format spec does not format an integer"),
])
def test_a_sharded_url_that_str_format_chokes_on_is_refused(url, expected):
    with pytest.raises(ConfigError, match=r"^c\.url: " + expected):
        check_url_template({"url": url, "shards": 2}, "c")


def test_a_shard_field_without_shards_is_refused():
    with pytest.raises(ConfigError, match=r"^c\.url: holds \{shard\} but the entry has no shards"):
        check_url_template({"url": SHARDED}, "c")


def test_every_shipped_catalog_url_renders_each_of_its_shards():
    catalog = read_benchmarks_config(ROOT / "config" / "benchmarks.yaml")
    entries = [(f"{section}.{name}", entry) for section, part in catalog.items() if isinstance(part, dict)
               for name, entry in part.items() if isinstance(entry, dict)]
    sharded = [entry for _, entry in entries if "shards" in entry]
    assert sharded
    for where, entry in entries:
        check_url_template(entry, where)
    for entry in sharded:
        assert len({entry["url"].format(shard=i) for i in range(entry["shards"])}) == entry["shards"]


def test_check_config_refuses_a_catalog_whose_sharded_url_has_an_unknown_field(tmp_path):
    text = (ROOT / "config" / "benchmarks.yaml").read_text()
    assert text.count("train-{shard:05d}-of-00009") == 1
    catalog = tmp_path / "benchmarks.yaml"
    catalog.write_text(text.replace("train-{shard:05d}-of-00009", "train-{shard:05d}-of-{count}"))
    config = yaml.safe_load((ROOT / "config" / "paper-code.yaml").read_text())  # reads the catalog
    config["data"]["catalog"] = str(catalog)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError) as error:
        judge([path], ROOT)
    assert re.fullmatch(re.escape(f"{catalog}: code.taco_train.url: expected exactly the field {{shard}}") + r".*"
                        r"\['count', 'shard'\].*", str(error.value)), error.value
