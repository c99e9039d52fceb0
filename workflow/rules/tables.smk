rule aggregate:
    input:
        get_table_evals,
    output:
        csv="results/tables/{table}.csv",
        md="results/tables/{table}.md",
        tex="results/tables/{table}.tex",
        html=report(
            "results/tables/{table}.html",
            caption="../report/table.rst",
            category="Tables",
            labels={"table": "{table}"},
        ),
    log:
        "logs/aggregate/{table}.log",
    conda:
        "../../envs/tables.yaml"
    resources:
        **get_resources("light"),
    params:
        table=get_table_config,
        code=get_code("fpa.cli.tables"),
        columns=get_table_columns,
    shell:
        "python -m fpa aggregate {input} --name {wildcards.table} --config-json {params.table:q} "
        "--code {params.code} --out-csv {output.csv} --out-md {output.md} --out-tex {output.tex} --out-html {output.html} > {log} 2>&1"
