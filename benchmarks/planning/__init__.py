"""Planning speed: snakemake -n on the paper's whole grid."""
