# Analyses behind the mechanism figures (fpa.analysis); each is planned only as an input of a
# figure the config asks for (fpa.figures.paths.analysis_path).


# FPA's extrapolation from an anchor snapshot against the run's later snapshots, on the first
# curve benchmark's prompts; the later snapshots' samples stay in work/ per snapshot.
rule future_policy:
    input:
        reference=get_base_model,
        snapshots="results/train/{model}/{method}/{seed}/snapshots",
        benchmark=get_future_policy_records,
    output:
        "results/analysis/future_policy/{model}/{method}/{seed}.csv",
    log:
        "logs/future_policy/{model}/{method}/{seed}.log",
    benchmark:
        "logs/benchmarks/future_policy/{model}/{method}/{seed}.tsv"
    conda:
        "../../envs/train.yaml"
    threads: get_threads("evaluate")
    resources:
        **get_resources("evaluate"),
    params:
        numerics=get_numerics(),
        analysis=get_future_policy_config,
        bench=get_future_policy_bench,
        code=get_code("fpa.cli.future_policy", "fpa.analysis.future_policy"),
        work="results/analysis/future_policy/{model}/{method}/{seed}/work",
    shell:
        "{params.numerics}python -m fpa future-policy --reference {input.reference} --snapshots {input.snapshots} "
        "--benchmark {params.bench} {input.benchmark:q} --config-json {params.analysis:q} "
        "--seed {wildcards.seed} --code {params.code} --threads {threads} --gpus {resources.gpu} --work {params.work} "
        "--out {output} > {log} 2>&1"


# The gradient-entanglement pilot at the base model on pairs of its offline dataset, and on
# the pairs of the preference datasets the config names (entanglement.preference).
rule entanglement:
    input:
        model=get_base_model,
        train="results/datasets/{model}/train.jsonl",
        pairs=get_entanglement_pair_files,
    output:
        "results/analysis/entanglement/{model}/base/{seed}.csv",
    log:
        "logs/entanglement/{model}/{seed}.log",
    benchmark:
        "logs/benchmarks/entanglement/{model}/{seed}.tsv"
    conda:
        "../../envs/train.yaml"
    threads: get_threads("evaluate")
    resources:
        **get_resources("evaluate"),
    params:
        numerics=get_numerics(),
        analysis=get_entanglement_config,
        pairs=get_entanglement_pairs_json,
        code=get_code(
            "fpa.cli.entanglement",
            "fpa.analysis.entanglement",
            "fpa.analysis.preference_pairs",
        ),
    shell:
        "{params.numerics}python -m fpa entanglement --model {input.model} --train {input.train} "
        "--preference-json {params.pairs:q} "
        "--config-json {params.analysis:q} --seed {wildcards.seed} --code {params.code} "
        "--threads {threads} --out {output} > {log} 2>&1"
