rule aggregate:
    input:
        PLAN.tables.evals,
    output:
        csv=paths.TABLE["csv"],
        md=paths.TABLE["md"],
        tex=paths.TABLE["tex"],
        json=paths.TABLE["json"],
        html=report(
            paths.TABLE["html"],
            caption="../report/table.rst",
            category="Tables",
            labels={"table": "{table}"},
        ),
    log:
        "logs/aggregate/{table}.log",
    benchmark:
        "logs/benchmarks/aggregate/{table}.tsv"
    wildcard_constraints:
        table=PLAN.tables.pattern(),
    conda:
        "../../envs/tables.yaml"
    resources:
        **PLAN.resources("light"),
    params:
        table=PLAN.tables.config_json,
        code=code_fingerprint("fpa.cli.tables"),
        caption=PLAN.tables.caption,
    shell:
        "python -m fpa aggregate {input} --name {wildcards.table} --config-json {params.table:q} "
        "--code {params.code} --out-csv {output.csv} --out-md {output.md} --out-tex {output.tex} --out-html {output.html} "
        "--out-json {output.json} > {log} 2>&1"


# How many cells of the tables compared with the paper (tables.<t>.paper_results) match it.
rule reproduction:
    input:
        PLAN.tables.compared(),
    output:
        csv=REPRODUCTION_TABLE[0],
        md=REPRODUCTION_TABLE[1],
        html=report(
            REPRODUCTION_TABLE[2],
            caption="../report/reproduction.rst",
            category="Tables",
        ),
    log:
        "logs/reproduction.log",
    benchmark:
        "logs/benchmarks/reproduction/reproduction.tsv"
    conda:
        "../../envs/tables.yaml"
    resources:
        **PLAN.resources("light"),
    params:
        code=code_fingerprint("fpa.cli.tables"),
    shell:
        "python -m fpa reproduction {input} --code {params.code} "
        "--out-csv {output.csv} --out-md {output.md} --out-html {output.html} > {log} 2>&1"


# Cost by stage of the config's runs, from every job's benchmark record (logs/benchmarks/);
# it runs after the jobs whose records it sums.
rule cost:
    input:
        PLAN.tables.cost_inputs(),
    output:
        csv=COST_TABLE[0],
        md=COST_TABLE[1],
        html=report(
            COST_TABLE[2],
            caption="../report/cost.rst",
            category="Cost",
        ),
    log:
        "logs/cost.log",
    benchmark:
        "logs/benchmarks/cost/cost.tsv"
    conda:
        "../../envs/tables.yaml"
    resources:
        **PLAN.resources("light"),
    params:
        runs=PLAN.tables.cost_config(),
        code=code_fingerprint("fpa.cli.cost", "fpa.aggregation.cost"),
    shell:
        "python -m fpa cost --config-json {params.runs:q} --code {params.code} "
        "--out-csv {output.csv} --out-md {output.md} --out-html {output.html} > {log} 2>&1"
