"""Command-line fragments a plan's rules splice into ``shell:``: every piece that can come
from a config (a path, a benchmark name) is quoted for the shell here, so a config string
arrives in ``python -m fpa`` as one argument and is never run as shell code."""

from __future__ import annotations

import shlex
from pathlib import Path

from fpa.numerics import portable_env_prefix


def shell_words(*words) -> str:
    return " ".join(shlex.quote(str(word)) for word in words)


def shell_prefix(basedir: str | Path) -> str:
    """The ``shell.prefix`` of every job: the package of this checkout first on PYTHONPATH (also
    inside --use-conda environments); braces doubled, as Snakemake formats the prefix."""
    src = shlex.quote(str(Path(basedir) / "src"))
    return f"export PYTHONPATH={src}:${{PYTHONPATH:-}}; ".replace("{", "{{").replace("}", "}}")


class ShellArgs:
    """Shell fragments of a ``Plan``'s jobs (``self.config``, the benchmark lists)."""

    def mirror_option(self) -> str:
        mirror = self.config["data"]["mirror"]
        return shell_words("--mirror", mirror) if mirror else ""

    def numerics(self) -> str:
        """Shell exports pinning the CPU kernels of a model job (fpa.numerics)."""
        return portable_env_prefix(self.config["mkl_cbwr"]) if self.config["portable_cpu_numerics"] else ""

    def sampling_args(self, wildcards, input, output) -> str:
        """``--benchmark NAME FILE OUT`` for each benchmark of a sampling job: its inputs
        ``benchmarks`` and its outputs are both in benchmark order, named ``<bench>.json``."""
        return " ".join(shell_words("--benchmark", Path(out).stem, records, out)
                        for records, out in zip(input.benchmarks, output))

    def curve_args(self, wildcards, input) -> str:
        return " ".join(shell_words("--benchmark", bench, records)
                        for bench, records in zip(self.config["curve_benchmarks"], input.benchmarks))

    def reference_option(self, wildcards, input) -> str:
        return shell_words("--reference", input.reference) if hasattr(input, "reference") else ""

    def validation_source_option(self, wildcards, input) -> str:
        """``--pairs FILE`` or ``--problems FILE``: what ``validation_inputs`` gave the job."""
        if hasattr(input, "pairs"):
            return shell_words("--pairs", input.pairs)
        return shell_words("--problems", input.problems)

    def model_option(self, wildcards, input) -> str:
        return shell_words("--model", input.model) if hasattr(input, "model") else ""
