rule cache_reference:
    input:
        model=get_base_model,
        train="results/datasets/{model}/train.jsonl",
        val="results/datasets/{model}/val.jsonl",
    output:
        directory("results/reference/{model}/cache"),
    log:
        "logs/cache_reference/{model}.log",
    benchmark:
        "logs/benchmarks/cache_reference/{model}.tsv"
    priority: Priority.TRAINING_INPUTS
    conda:
        "../../envs/train.yaml"
    threads: get_threads("cache_reference")
    resources:
        **get_resources("cache_reference"),
    params:
        numerics=get_numerics(),
        max_length=config["training"]["max_length"],
        precision=config["training"]["precision"],
        attention=config["training"]["attention"],
        device=get_device("cache_reference"),
        weights_dtype=get_reference_weights_dtype(),
        dtype=get_reference_dtype(),
        code=get_code("fpa.cli.reference"),
    shell:
        "{params.numerics}python -m fpa cache-reference --model {input.model} --train {input.train} --val {input.val} "
        "--max-length {params.max_length} --precision {params.precision} --weights-dtype {params.weights_dtype} "
        "--attention {params.attention} "
        "--dtype {params.dtype} --device {params.device} "
        "--code {params.code} --threads {threads} "
        "--out {output} > {log} 2>&1"
