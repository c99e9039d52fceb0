# The paper's figures (fpa.figures): one job per (model, figure) the config lists and whose
# runs it has; the figure reads the runs' training metrics and curves and records them.
# Paths carry the experiment, so experiments sharing a directory keep their own figures.
rule figure:
    input:
        PLAN.figures.inputs,
    output:
        png=report(
            paths.FIGURE["png"],
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{model}",
            labels={"model": "{model}", "figure": "{figure}"},
        ),
        pdf=paths.FIGURE["pdf"],
    log:
        "logs/figure/{experiment}/{model}/{figure}.log",
    benchmark:
        "logs/benchmarks/figure/{experiment}/{model}/{figure}.tsv"
    conda:
        "../../envs/figures.yaml"
    resources:
        **PLAN.resources("light"),
    params:
        figure=PLAN.figures.config_json,
        code=PLAN.figures.code,
        caption=PLAN.figures.caption,
    shell:
        "python -m fpa figure --name {wildcards.figure} --config-json {params.figure:q} "
        "--code {params.code} --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"


# The numbers behind a figure that has them (Figure.table), e.g. the wall-clock comparison's
# time to reach each method's peak accuracy: read from the same files as the figure.
rule figure_table:
    input:
        PLAN.figures.inputs,
    output:
        csv=paths.FIGURE["csv"],
        md=paths.FIGURE["md"],
        html=report(
            paths.FIGURE["html"],
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{model}",
            labels={"model": "{model}", "figure": "{figure} (table)"},
        ),
    log:
        "logs/figure_table/{experiment}/{model}/{figure}.log",
    benchmark:
        "logs/benchmarks/figure_table/{experiment}/{model}/{figure}.tsv"
    wildcard_constraints:
        figure=PLAN.figures.table_pattern(),
    conda:
        "../../envs/figures.yaml"
    resources:
        **PLAN.resources("light"),
    params:
        figure=PLAN.figures.config_json,
        code=PLAN.figures.code,
        caption=PLAN.figures.caption,
    shell:
        "python -m fpa figure-table --name {wildcards.figure} --config-json {params.figure:q} "
        "--code {params.code} --out-csv {output.csv} --out-md {output.md} --out-html {output.html} > {log} 2>&1"
