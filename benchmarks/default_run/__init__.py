"""The default run: a fresh clone, then snakemake --cores all, and what its records show."""
