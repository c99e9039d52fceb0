"""Settings valid one by one whose jobs are certain to fail (issue 52), for the config fuzz: the mutation
``certain_to_fail`` of ``config_examples.configs`` applies one of the edits below to the default config,
on either side of the line between what fails and what runs (issue 58: a run's own settings against those
its model's reference cache is built with). ``fuzz_config`` then checks that
check-config and planning agree, and that what they accept passes its first jobs' own checks
(``fuzz_config.first_job_problem``)."""

from __future__ import annotations

from dataclasses import fields

from hypothesis import strategies as st

from fpa.toy.settings import ToyModelConfig

#: a size or count: too small, fine, too large, and of the wrong type
SIZES = st.sampled_from([0, -1, 1, 2, 14, 64, 128, 2**31 - 1, 2**31, "2", 2.0, True, None])
QWEN_SHAPES = {"vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
               "num_attention_heads": 14, "num_key_value_heads": 2}
TOY_KEYS = [field.name for field in fields(ToyModelConfig)] + ["preset", "d_modle"]
TOY_VALUES = st.one_of(SIZES, st.sampled_from(["default", "ci", "huge", 0.5, 1.5, -0.1, "Q: {problem}", "Q: {question}"]))


def _mapping(config: dict, *keys: str) -> dict | None:
    """The mapping at ``keys``, created where missing; None where a mutation before left something else."""
    node = config
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.setdefault(key, {})
    return node if isinstance(node, dict) else None


def _greedy_samples(draw, config: dict) -> None:
    if (dataset := _mapping(config, "dataset")) is not None:
        dataset["temperature"] = draw(st.sampled_from([0, 0.0, 1e-9, 0.7, 2]))


def _max_length(draw, config: dict) -> None:
    value = draw(st.sampled_from([8, 20, 24, 25, 26, 27, 256]))
    where = draw(st.sampled_from(["training", "method", "sweep"]))
    method = _mapping(config, "methods", "fpa")
    if where == "training" and (training := _mapping(config, "training")) is not None:
        training["max_length"] = value
    elif where == "method" and method is not None and (training := _mapping(method, "training")) is not None:
        training["max_length"] = value
    elif where == "sweep" and method is not None:
        method["sweep"] = {"max_length": [256, value]}


#: issue 58: the training settings a model's reference cache is built with (fpa.planning.reference), each
#: with a value the default config has (the cache's own) and others
CACHE_VALUES = {"max_length": [256, 200, 300], "precision": ["fp32", "bf16"], "head_precision": ["auto", "fp32", "bf16"],
                "attention": ["packed", "masked"], "reference": ["cached", "online"]}


def _cache_setting(draw, config: dict) -> None:
    """A run's own training setting beside the one its model's reference cache is built with: on a method, a
    model or a sweep, and now and then the run reading no cache (``reference: online``)."""
    key = draw(st.sampled_from(sorted(CACHE_VALUES)))
    value = draw(st.sampled_from(CACHE_VALUES[key]))
    where = draw(st.sampled_from(["method", "model", "sweep"]))
    method, model = _mapping(config, "methods", "fpa"), _mapping(config, "models", "toy")
    if where == "method" and method is not None and (training := _mapping(method, "training")) is not None:
        training[key] = value
    elif where == "model" and model is not None and (training := _mapping(model, "training")) is not None:
        training[key] = value
    elif where == "sweep" and method is not None:
        method["sweep"] = {key: list(dict.fromkeys([CACHE_VALUES[key][0], value]))}
    if draw(st.booleans()) and method is not None and (training := _mapping(method, "training")) is not None:
        training["reference"] = "online"


def _empty_validation_split(draw, config: dict) -> None:
    dataset, benchmarks = _mapping(config, "dataset"), _mapping(config, "benchmarks")
    if dataset is None or benchmarks is None:
        return
    dataset["validation_fraction"] = draw(st.sampled_from([0, 0.0, 0.05]))
    benchmarks["val"] = {"source": "validation", "grader": "toy", "n": 1}
    if draw(st.booleans()):
        config["model_selection"] = {"benchmark": "val"}
    elif (tables := _mapping(config, "tables")) is not None:
        tables["val"] = ["val"]


def _toy_settings(draw, config: dict) -> None:
    toy = _mapping(config, "models", "toy", "toy")
    if toy is None:
        return
    for _ in range(draw(st.integers(1, 2))):
        toy[draw(st.sampled_from(TOY_KEYS))] = draw(TOY_VALUES)
    if draw(st.booleans()) and isinstance(toy.get("n_heads"), int):  # the one d_model the heads allow
        toy["d_model"] = 64 * toy["n_heads"]


def _chat_template(draw, config: dict) -> None:
    if (model := _mapping(config, "models", "toy")) is not None:
        model["chat_template"] = draw(st.booleans())


def _hub_architecture(draw, config: dict) -> None:
    architecture = dict(QWEN_SHAPES)
    for _ in range(draw(st.integers(0, 2))):
        architecture[draw(st.sampled_from([*QWEN_SHAPES, "head_dim", "tie_word_embeddings"]))] = draw(SIZES)
    config["models"] = {"hub": {"source": "hub", "hub_id": "Qwen/Qwen2.5-0.5B", "architecture": architecture}}


def _toy_chains(draw, config: dict) -> None:
    if (dataset := _mapping(config, "dataset")) is not None:
        dataset["n_operands"] = draw(st.sampled_from([2, 4, 10, 12, 2**31 - 1]))
        dataset["min_operands"] = draw(st.sampled_from([None, 2, 3, 10, 12, 2**31 - 1]))


def _snapshot_steps(draw, config: dict) -> None:
    future, training, figures = (_mapping(config, key) for key in ("future_policy", "training", "figures"))
    if future is None or training is None or figures is None:
        return
    future["anchor_step"] = draw(st.sampled_from([25, 30, 50]))
    future["target_steps"] = [draw(st.sampled_from([50, 60, 100]))]
    training["snapshot_every"] = draw(st.sampled_from([0, 7, 25]))
    figures["future_policy_validation"] = {}


EDITS = [_greedy_samples, _max_length, _empty_validation_split, _toy_settings, _chat_template, _hub_architecture,
         _toy_chains, _snapshot_steps, _cache_setting]


@st.composite
def certain_to_fail(draw, config: object) -> str:
    """One of ``EDITS`` applied to ``config`` (a mapping, else left alone); returns the edit's name."""
    edit = draw(st.sampled_from(EDITS))
    if isinstance(config, dict):
        edit(draw, config)
    return edit.__name__.lstrip("_")
