"""How much memory a job needs per GPU, estimated from the model's shapes before it runs.

``architecture``: the shapes, from a ``config.json``; ``training``: one training rank's peak;
``plan``: every job of a config against the GPUs it requests (``fpa plan-memory``).
"""
