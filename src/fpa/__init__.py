"""fpa-bench: offline RL of LLMs on reasoning, Future Policy Approximation and baselines."""

__version__ = "0.1.0"
