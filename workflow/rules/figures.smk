# The paper's figures (fpa.figures): one job per (model, figure) the config lists and whose
# runs it has; the figure reads the runs' training metrics and curves and records them.
# Paths carry the experiment, so experiments sharing a directory keep their own figures.
rule figure:
    input:
        get_figure_inputs,
    output:
        png=report(
            "results/figures/{experiment}/{model}/{figure}.png",
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{model}",
            labels={"model": "{model}", "figure": "{figure}"},
        ),
        pdf="results/figures/{experiment}/{model}/{figure}.pdf",
    log:
        "logs/figure/{experiment}/{model}/{figure}.log",
    benchmark:
        "logs/benchmarks/figure/{experiment}/{model}/{figure}.tsv"
    conda:
        "../../envs/figures.yaml"
    resources:
        **get_resources("light"),
    params:
        figure=get_figure_config,
        code=get_figure_code,
        caption=get_figure_caption,
    shell:
        "python -m fpa figure --name {wildcards.figure} --config-json {params.figure:q} "
        "--code {params.code} --out-png {output.png} --out-pdf {output.pdf} > {log} 2>&1"


# The numbers behind a figure that has them (Figure.table), e.g. the wall-clock comparison's
# time to reach each method's peak accuracy: read from the same files as the figure.
rule figure_table:
    input:
        get_figure_inputs,
    output:
        csv="results/figures/{experiment}/{model}/{figure}.csv",
        md="results/figures/{experiment}/{model}/{figure}.md",
        html=report(
            "results/figures/{experiment}/{model}/{figure}.html",
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
        figure=get_table_figure_pattern(),
    conda:
        "../../envs/figures.yaml"
    resources:
        **get_resources("light"),
    params:
        figure=get_figure_config,
        code=get_figure_code,
        caption=get_figure_caption,
    shell:
        "python -m fpa figure-table --name {wildcards.figure} --config-json {params.figure:q} "
        "--code {params.code} --out-csv {output.csv} --out-md {output.md} --out-html {output.html} > {log} 2>&1"
