"""Fuzz the one judge of a config: ``fpa check-config`` and planning must accept the same configs and
refuse the others with the same single line, and never hang, crash or print a traceback (issue 34).

Configs are generated from the schema over the default config and mutated (``config_examples``).
Each is judged twice, in process:

- as ``fpa check-config FILE`` (``fpa.cli.main``, its output captured);
- as ``snakemake --configfile FILE`` plans it: Snakemake's own loader and merge, then the
  Snakefile's call (``fpa.planning.judge``), and, for a few, by a real ``snakemake -n``.

``tests/planning/test_fuzz_config.py`` runs the property with a fixed budget; its last larger run (2,000
examples, the verdicts per mutation) is in docs/archive/benchmarks.md.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import Phase

from fpa.errors import ConfigError

from .config_examples import config_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_SECONDS = 20  # an example judged for longer hangs
#: no "explain" phase: it traces every line run, and a traced deep nest takes minutes to refuse
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)


# --- the two judges -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    accepted: bool
    line: str = ""  # the refusal's one line, its prefix ("fpa check-config: error: ", ...) removed


class Problem(AssertionError):
    """A crash, a hang, a refusal of more than one line, or two judges that disagree."""


def check_config_verdict(path: Path) -> Verdict:
    """``fpa check-config path``, in process: exactly one line, on stdout if accepted, else on stderr."""
    from fpa.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["check-config", str(path)])
            code = 0
        except SystemExit as exit_:
            code = exit_.code
        except Problem:
            raise
        except Exception as error:  # what the command would print as a traceback
            raise Problem(f"check-config crashed: {type(error).__name__}: {_short(error)}") from None
    lines = (out.getvalue() + err.getvalue()).splitlines()
    if len(lines) != 1:
        raise Problem(f"check-config printed {len(lines)} lines: {lines[:3]}")
    if code == 0 and lines[0].startswith(f"{path}: ok"):
        return Verdict(True)
    prefix = "fpa check-config: error: "
    if code != 2 or not lines[0].startswith(prefix):
        raise Problem(f"check-config exited {code} with {lines[0]!r}")
    return Verdict(False, lines[0].removeprefix(prefix))


def planning_verdict(path: Path) -> Verdict:
    """What ``snakemake --configfile path`` does before any job: Snakemake's own loader and merge (in
    its command line, before the workflow: its refusals are its own), then the Snakefile's judge."""
    from snakemake.common.configfile import load_configfile
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import update_config

    from fpa.planning import judge

    try:
        update_config({}, load_configfile(path))
    except WorkflowError as error:
        return Verdict(False, f"snakemake: {' '.join(str(error).split())}")
    except (RecursionError, ValueError) as error:  # upstream: docs/hostile_input.md
        return Verdict(False, f"snakemake: crashed: {type(error).__name__}: {_short(error)}")
    try:
        plan = judge([path], ROOT)
        start_up_warnings(plan, path.parent)
    except ConfigError as error:
        return Verdict(False, str(error))
    except Exception as error:  # a traceback from the Snakefile
        raise Problem(f"planning crashed: {type(error).__name__}: {_short(error)}") from None
    return Verdict(True)


def start_up_warnings(plan, workdir: Path) -> list[str]:
    """What workflow/rules/common.smk prints after the judge, before any job: each GPU job whose
    memory estimate exceeds gpu_memory_gb, and the plan's cost (fpa.memory.summary)."""
    from fpa.memory.plan import memory_warnings
    from fpa.memory.summary import cost_lines

    return memory_warnings(plan.config, plan.runs, workdir) + cost_lines(
        plan.config, plan.runs, plan.catalog, workdir, curves=plan.curves())


def workflow_lines(stderr: str) -> list[str]:
    """The lines a Snakemake run's stderr holds from the workflow: Snakemake's notice that it reads the
    workflow's default profile (profiles/default), which precedes them, left out."""
    return [line for line in stderr.strip().splitlines() if not line.startswith("Using workflow specific profile")]


def snakemake_verdict(path: Path, workdir: Path) -> Verdict:
    """A real ``snakemake -n --configfile path``: accepted, or refused with one ``config error:`` line
    (Snakemake's own refusals of a file its loader cannot read aside)."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-d", str(workdir),
                             "--configfile", str(path)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    if "Traceback" in result.stderr + result.stdout and "RecursionError" not in result.stderr:
        raise Problem(f"snakemake -n printed a traceback: {result.stderr[-300:]}")
    if result.returncode == 0:
        return Verdict(True)
    lines = workflow_lines(result.stderr)
    if len(lines) == 1 and lines[0].startswith("config error: "):
        return Verdict(False, lines[0].removeprefix("config error: "))
    return Verdict(False, "snakemake: " + " ".join(lines)[-300:])


_JOB = re.compile(r"^rule \w+:\n((?:    .*\n)+)", re.MULTILINE)


def run_first_job(path: Path, workdir: Path, holding: str = "") -> list[str]:
    """What check-config accepted runs: every output, log and benchmark file its ``snakemake -n`` plans
    fits the file system with the longest name the project gives a file beside it (its record's
    temporary), and its first job (a job of the dry run with no input from another job, by its outputs'
    order, not by the order the dry run prints, which a change of the workflow's code may turn; the
    first whose outputs hold ``holding`` where one does) runs. Its outputs; ``Problem`` otherwise."""
    from fpa.config.wildcards import longest_name
    from fpa.containment import planned_paths

    command = [sys.executable, "-m", "snakemake", "--cores", "1", "-d", str(workdir)]
    dry = subprocess.run([*command, "-n", "--configfile", str(path)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    if dry.returncode != 0:
        raise Problem(f"snakemake -n refuses what check-config accepts: {_short(dry.stderr[-300:])}")
    with tempfile.TemporaryDirectory() as fits:
        for planned in planned_paths(dry.stdout):
            beside = Path(fits) / Path(planned).parent / longest_name(Path(planned).name)
            try:
                beside.parent.mkdir(parents=True, exist_ok=True)
                beside.write_text("")
            except OSError as error:
                raise Problem(f"the file system refuses {planned!r} or a file beside it: {error}") from None
    roots = sorted(planned_paths(job) for job in _JOB.findall(dry.stdout) if "\n    input: " not in "\n" + job)
    outputs = next((job for job in roots if any(holding in output for output in job) and holding), roots[0])
    outputs = [output for output in outputs if not output.startswith("logs/")]
    run = subprocess.run([*command, *outputs, "--configfile", str(path)], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    if run.returncode != 0:
        raise Problem(f"the first job of what check-config accepts fails: {_short(run.stderr[-600:])}")
    return outputs


def agree(check: Verdict, planned: Verdict) -> None:
    """Both accept, or both refuse with the same line; where Snakemake's own loader refused first
    (it reads a --configfile before the workflow), check-config must refuse too."""
    if planned.line.startswith("snakemake: "):
        if check.accepted:
            raise Problem(f"Snakemake's loader refuses what check-config accepts: {planned.line}")
    elif check != planned:
        raise Problem(f"check-config says {check}, planning says {planned}")


def _short(error: BaseException) -> str:
    return " ".join(str(error).split())[:300]


@contextlib.contextmanager
def time_limit(seconds: int):
    def hang(*_):
        raise Problem(f"no verdict in {seconds} s (a hang; load average {os.getloadavg()[0]:.1f})")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def judge_example(config: object, edits: list[str], directory: Path) -> tuple[Path, Verdict, Verdict]:
    """Write the example, judge it both ways, raise ``Problem`` unless they agree in time and what
    both accept passes its first jobs' own checks (``first_job_problem``)."""
    path = directory / "config.yaml"
    path.write_text(config_text(config, edits), encoding="utf-8")
    with time_limit(EXAMPLE_SECONDS):
        check, planned = check_config_verdict(path), planning_verdict(path)
        agree(check, planned)
        if check.accepted:
            first_job_problem(path)
    return path, check, planned


# --- what an accepted config's first jobs check before their work (issue 52) ---------------------------
#: the longest toy chain whose training problem the check generates (a longer one is the job's own work)
LONGEST_CHAIN_GENERATED = 10_000


def first_job_problem(path: Path) -> None:
    """Raise ``Problem`` where an accepted config fails what its first jobs check before their work:
    each toy model built (on the meta device: shapes, no memory) as rule toy_base_model builds it; the
    toy training chains' lengths as rule toy_train_problems takes them, and the longest chain's
    prompt encoded as the reference cache and training encode it at each max_length they use; a
    validation benchmark's held-out split of two kept problems (the fewest that train) not empty;
    each model's memory planned above zero, no part of it negative, as fpa plan-memory plans it."""
    from fpa.memory.plan import GIB, plan_memory
    from fpa.planning import judge
    from fpa.samples.offline import hold_out

    plan = judge([path], ROOT)
    dataset = plan.config["dataset"]
    try:
        if any(bench["source"] == "validation" for bench in plan.config["benchmarks"].values()) and \
                not hold_out(["a", "b"], dataset["validation_fraction"], dataset["seed"]):
            raise ValueError("a validation benchmark of no held-out problem")
        for name, model in plan.config["models"].items():
            if model["source"] == "toy":
                _build_toy_model_shapes(model)
                _encode_the_longest_prompt(plan, name, model)
        for estimate in plan_memory(plan.config, plan.runs, 80 * GIB, path.parent):
            parts = {"per_gpu": estimate.per_gpu, **estimate.components}
            if estimate.per_gpu <= 0 or min(parts.values()) < 0:
                raise ValueError(f"planned memory of {estimate.rule} {estimate.run}: {parts}")
    except Exception as error:
        raise Problem(f"check-config accepts what its first job refuses: {type(error).__name__}: "
                      f"{_short(error)}") from None


def _build_toy_model_shapes(model: dict) -> None:
    import torch
    from transformers import Qwen2ForCausalLM

    from fpa.toy.model import model_config
    from fpa.toy.settings import toy_model_config
    from fpa.toy.tokenizer import build_tokenizer

    settings = toy_model_config(model["toy"], model["prompt_template"])
    with torch.device("meta"):
        Qwen2ForCausalLM(model_config(settings, build_tokenizer()))


def _encode_the_longest_prompt(plan, name: str, model: dict) -> None:
    from fpa.samples.prompts import build_prompts
    from fpa.samples.tokenize import encode_sample
    from fpa.toy.task import chain_lengths, make_problems
    from fpa.toy.tokenizer import build_tokenizer

    dataset = plan.config["dataset"]
    if dataset["source"] != "toy":
        return
    longest = chain_lengths(dataset["n_operands"], dataset["min_operands"])[-1]
    if longest > LONGEST_CHAIN_GENERATED:
        return
    problem = make_problems(1, dataset["seed"], split="train", n_operands=longest)[0]["problem"]
    prompt = build_prompts(model["prompt_template"], [problem])[0]
    offline = [run for (owner, _), run in plan.runs.items() if owner == name and not run.online]
    lengths = [run.training["max_length"] for run in offline]
    if any(run.reads_reference_cache() for run in offline):
        lengths.append(plan.config["training"]["max_length"])
    for max_length in lengths:
        encode_sample(build_tokenizer(), prompt, " 1", max_length)


def real_snakemake_checks(kept: list[tuple[str, Verdict]], runs: int) -> list[str]:
    """``snakemake -n`` on ``runs`` of the kept examples, accepted and refused ones alternating."""
    accepted = [example for example in kept if example[1].accepted]
    refused = [example for example in kept if not example[1].accepted]
    chosen = [example for pair in zip(refused, accepted) for example in pair] + refused[len(accepted):]
    disagreements = []
    for text, _ in chosen[:runs]:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "config.yaml"
            path.write_text(text, encoding="utf-8")
            try:
                agree(check_config_verdict(path), snakemake_verdict(path, Path(directory) / "work"))
            except Problem as problem:
                disagreements.append(str(problem))
    return disagreements
