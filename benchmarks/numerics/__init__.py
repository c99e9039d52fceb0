"""Numerics: where CPU vendors part under each MKL branch, what the vendor-neutral branch costs, and the loss head's precision on a GPU."""
