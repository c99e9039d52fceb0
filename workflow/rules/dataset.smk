rule sample_offline:
    input:
        model=get_base_model,
        problems="results/problems/train.jsonl",
    output:
        "results/datasets/{model}/samples.jsonl",
    log:
        "logs/sample_offline/{model}.log",
    conda:
        "../../envs/train.yaml"
    threads: get_threads("sample_offline")
    resources:
        **get_resources("sample_offline"),
    params:
        dataset=get_dataset_config,
        code=get_code("fpa.cli.dataset"),
        work="results/datasets/{model}/work/samples",
        numerics=get_numerics(),
    shell:
        "{params.numerics}python -m fpa sample --model {input.model} --problems {input.problems} "
        "--config-json {params.dataset:q} --code {params.code} --threads {threads} "
        "--work {params.work} --out {output} > {log} 2>&1"


rule build_dataset:
    input:
        samples="results/datasets/{model}/samples.jsonl",
    output:
        train="results/datasets/{model}/train.jsonl",
        val="results/datasets/{model}/val.jsonl",
    log:
        "logs/build_dataset/{model}.log",
    conda:
        "../../envs/train.yaml"
    # code rewards (taco_apps) grade in a thread pool over the CPUs the job may use
    threads: get_threads("build_dataset")
    resources:
        **get_resources("build_dataset"),
    params:
        dataset=get_dataset_config,
        code=get_code("fpa.cli.dataset"),
    shell:
        "python -m fpa build-dataset --samples {input.samples} "
        "--config-json {params.dataset:q} --code {params.code} "
        "--out-train {output.train} --out-val {output.val} > {log} 2>&1"
