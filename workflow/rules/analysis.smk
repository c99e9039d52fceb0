# Analyses behind the mechanism figures (fpa.analysis); each is planned only as an input of a
# figure the config asks for (fpa.figures.figure_inputs).


# FPA's extrapolation from an anchor snapshot against the run's later snapshots, on the first
# curve benchmark's prompts; the later snapshots' samples stay in work/ per snapshot.
rule future_policy:
    input:
        reference=PLAN.base_model,
        snapshots=paths.SNAPSHOTS,
        benchmark=PLAN.analysis.future_policy_records,
    output:
        paths.ANALYSIS["future_policy"],
    log:
        "logs/future_policy/{model}/{method}/{seed}.log",
    benchmark:
        "logs/benchmarks/future_policy/{model}/{method}/{seed}.tsv"
    conda:
        "../../envs/train.yaml"
    threads: PLAN.threads("evaluate")
    resources:
        **PLAN.resources("evaluate"),
    params:
        numerics=PLAN.numerics(),
        analysis=PLAN.analysis.future_policy_config,
        bench=PLAN.analysis.future_policy_bench,
        code=code_fingerprint("fpa.cli.future_policy", "fpa.analysis.future_policy"),
        work=paths.FUTURE_POLICY_WORK,
    shell:
        "{params.numerics}python -m fpa future-policy --reference {input.reference} --snapshots {input.snapshots} "
        "--benchmark {params.bench} {input.benchmark:q} --config-json {params.analysis:q} "
        "--seed {wildcards.seed} --code {params.code} --threads {threads} --gpus {resources.gpu} --work {params.work} "
        "--out {output} > {log} 2>&1"


# The gradient-entanglement pilot at the base model on pairs of its offline dataset, and on
# the pairs of the preference datasets the config names (entanglement.preference).
rule entanglement:
    input:
        model=PLAN.base_model,
        train=paths.TRAIN_SPLIT,
        pairs=PLAN.analysis.entanglement_pair_files,
    output:
        paths.bind(paths.ANALYSIS["entanglement"], method="base"),
    log:
        "logs/entanglement/{model}/{seed}.log",
    benchmark:
        "logs/benchmarks/entanglement/{model}/{seed}.tsv"
    conda:
        "../../envs/train.yaml"
    threads: PLAN.threads("evaluate")
    resources:
        **PLAN.resources("evaluate"),
    params:
        numerics=PLAN.numerics(),
        analysis=PLAN.analysis.entanglement_config,
        pairs=PLAN.analysis.entanglement_pairs_json,
        code=code_fingerprint(
            "fpa.cli.entanglement",
            "fpa.analysis.entanglement",
            "fpa.analysis.preference_pairs",
        ),
    shell:
        "{params.numerics}python -m fpa entanglement --model {input.model} --train {input.train} "
        "--preference-json {params.pairs:q} "
        "--config-json {params.analysis:q} --seed {wildcards.seed} --code {params.code} "
        "--threads {threads} --out {output} > {log} 2>&1"
