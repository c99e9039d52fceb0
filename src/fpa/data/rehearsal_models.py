"""The rehearsal's three models (config/paper-rehearsal.yaml): the paper's families, built without
the hub by rule ``build_models`` (``data.build_models``), in a Hugging Face hub cache that
``fetch_model`` reads as its model mirror.

Each model is randomly initialised at its family's real vocabulary size and special-token ids,
with the shrunk shapes of the config's ``architecture``. Its tokenizer is the family's real BPE:
Llama 3's ``tokenizer.model`` from Meta's ``llama-models`` package and Qwen's ``qwen.tiktoken``
(the 151,643 byte-level merges that Qwen2 and Qwen3 share) from Alibaba's ``dashscope`` SDK, both
fetched from PyPI at test time (``pip download``) and converted to a ``tokenizer.json``. The facts
of each family's tokenizer are those of the real one: EOS and pad (none for Llama), the BOS that
Llama prepends and Qwen does not, and Llama 3.2 Instruct's chat template with its date line.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

#: PyPI packages that ship the families' tokenizer files, and where inside the wheel.
TOKENIZER_WHEELS = {
    "llama3": {"package": "llama-models==0.3.0", "ranks": "llama_models/llama3/tokenizer.model",
               "source": "llama_models/llama3/tokenizer.py", "pattern": "pat_str"},
    "qwen": {"package": "dashscope==2.0.2", "ranks": "dashscope/resources/qwen.tiktoken",
             "source": "dashscope/tokenizers/qwen_tokenizer.py", "pattern": "PAT_STR"},
}
#: Llama 3.2 Instruct's chat template (its hub repository's tokenizer_config.json), which the family's tokenizer carries
CHAT_TEMPLATES = Path(__file__).resolve().parent / "chat_templates"
# Qwen2's added tokens after the 151,643 merges (its tokenizer.json), in id order from 151643;
# the tool-call and fill-in-the-middle markers are added but not special. Qwen3 adds four more.
QWEN2_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
                 "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
                 "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
QWEN2_ADDED = ["<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
               "<|repo_name|>", "<|file_sep|>"]
QWEN3_ADDED = ["<tool_response>", "</tool_response>", "<think>", "</think>"]

#: Each family's facts, as its hub repository's tokenizer_config.json / config.json /
#: generation_config.json set them.
FAMILIES = {
    "qwen3": {"ranks": "qwen", "added": QWEN2_ADDED + QWEN3_ADDED, "bos": None, "add_bos": False,
              "eos": "<|endoftext|>", "pad": "<|endoftext|>", "config_eos": [151643], "chat_template": None},
    "qwen2": {"ranks": "qwen", "added": QWEN2_ADDED, "bos": None, "add_bos": False,
              "eos": "<|endoftext|>", "pad": "<|endoftext|>", "config_eos": [151643], "chat_template": None},
    "llama": {"ranks": "llama3", "added": [], "bos": "<|begin_of_text|>", "add_bos": True,
              "eos": "<|eot_id|>", "pad": None, "config_eos": [128001, 128008, 128009],
              "chat_template": "llama-3.2-instruct.jinja"},
}
CONFIG_CLASSES = {"qwen3": "Qwen3Config", "qwen2": "Qwen2Config", "llama": "LlamaConfig"}


def tokenizer_wheels(cache: Path) -> dict[str, dict]:
    """The tokenizer files of each wheel in ``TOKENIZER_WHEELS``: ``{"ranks": bytes, "pattern": str}``,
    the wheels downloaded once into ``cache``."""
    cache.mkdir(parents=True, exist_ok=True)
    found = {}
    for family, wheel in TOKENIZER_WHEELS.items():
        name, version = wheel["package"].split("==")
        pattern = f"{name.replace('-', '_')}-{version}-*.whl"
        if not list(cache.glob(pattern)):
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", wheel["package"], "-d",
                            str(cache)], check=True, capture_output=True, timeout=300)
        with zipfile.ZipFile(next(cache.glob(pattern))) as archive:
            source = ast.parse(archive.read(wheel["source"]).decode())
            found[family] = {"ranks": archive.read(wheel["ranks"]),
                             "pattern": _literal(source, wheel["pattern"]), "source": source}
    return found


def _literal(tree: ast.AST, name: str):
    """The literal first assigned to ``name`` anywhere in a module (constant, class attribute or local)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError(f"no assignment to {name}")


def byte_level_bpe(ranks_file: bytes) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A tiktoken ranks file (``base64 rank`` lines) as byte-level BPE vocab and merges: each token
    of rank r is merged from its two parts of lower rank, merges ordered by r."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    ranks = {}
    for line in ranks_file.splitlines():
        if line.strip():
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    to_unicode = bytes_to_unicode()

    def text(token: bytes) -> str:
        return "".join(to_unicode[byte] for byte in token)

    merges = []
    for token, rank in ranks.items():
        splits = [(ranks[token[:cut]], ranks[token[cut:]], cut) for cut in range(1, len(token))
                  if token[:cut] in ranks and token[cut:] in ranks]
        merges.extend((rank, left, right, token[:cut], token[cut:]) for left, right, cut in sorted(splits))
    merges.sort(key=lambda merge: merge[:3])
    return ({text(token): rank for token, rank in ranks.items()},
            [(text(left), text(right)) for *_, left, right in merges])


def build_tokenizer(family: str, wheels: dict[str, dict]):
    """The family's tokenizer (a ``PreTrainedTokenizerFast``) with its real ids and facts."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    facts = FAMILIES[family]
    files = wheels[facts["ranks"]]
    vocab, merges = byte_level_bpe(files["ranks"])
    backend = Tokenizer(models.BPE(vocab, merges, ignore_merges=facts["ranks"] == "llama3"))
    if facts["ranks"] == "qwen":
        backend.normalizer = normalizers.NFC()
    backend.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(files["pattern"]), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    backend.decoder = decoders.ByteLevel()
    if facts["ranks"] == "llama3":
        # llama_models' Tokenizer: its named special tokens, then reserved ones up to 256
        special = _literal(files["source"], "special_tokens")
        reserved = _literal(files["source"], "num_reserved_special_tokens")
        special += [f"<|reserved_special_token_{2 + i}|>" for i in range(reserved - len(special))]
    else:
        special = QWEN2_SPECIAL
    backend.add_special_tokens([AddedToken(token, special=True, normalized=False) for token in special])
    backend.add_tokens([AddedToken(token, special=False, normalized=False) for token in facts["added"]])
    if facts["add_bos"]:
        bos_id = backend.token_to_id(facts["bos"])
        backend.post_processor = processors.TemplateProcessing(
            single=f"{facts['bos']}:0 $A:0", pair=f"{facts['bos']}:0 $A:0 {facts['bos']}:1 $B:1",
            special_tokens=[(facts["bos"], bos_id)])
    template = (CHAT_TEMPLATES / facts["chat_template"]).read_text() if facts["chat_template"] else None
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=facts["bos"], eos_token=facts["eos"],
                                   pad_token=facts["pad"], chat_template=template, model_max_length=131072)


#: What the planted answerer writes after the prompt: the paper's answer line with one digit,
#: then EOS or dots up to the length limit, half of the time each.
ANSWER_PREFIX = " The final answer is \\boxed{"
DIGITS = [str(digit) for digit in range(10)]
#: logit margin (nats) between a token's successor and the next best token
MARGIN = 12.0


def answer_chain(tokenizer, prompt_end: int) -> tuple[list[int], "torch.Tensor"]:
    """The answerer's tokens and the symmetric scores M (M[i, j]: how strongly token i and j follow
    each other): along the line the scores rise by one a step, so that each token's successor
    outscores its predecessor; the digits tie, and so do EOS and the dot after ``}``."""
    import torch

    def single(text: str) -> int:
        [token] = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
        return token

    line = [prompt_end, *tokenizer(ANSWER_PREFIX, add_special_tokens=False)["input_ids"]]
    digits, close, dot = [single(digit) for digit in DIGITS], single("}"), single(".")
    tokens = [*line, *digits, close, dot, tokenizer.eos_token_id]
    at = {token: index for index, token in enumerate(tokens)}
    scores = torch.zeros(len(tokens), len(tokens), dtype=torch.float64)

    def link(first: int, second: int, score: int) -> None:
        scores[at[first], at[second]] = scores[at[second], at[first]] = score

    for step, (current, following) in enumerate(zip(line, line[1:]), start=1):
        link(current, following, step)
    top = len(line)
    for digit in digits:
        link(line[-1], digit, top)
        link(digit, close, top + 1)
    link(close, tokenizer.eos_token_id, top + 2)
    link(close, dot, top + 2)
    link(dot, dot, top + 4)
    return tokens, scores


def plant_answerer(model, tokenizer, prompt_end: int) -> None:
    """Make the random ``model`` a bigram sampler of ``ANSWER_PREFIX`` + digit + ``}`` + EOS (or
    dots): its layers' residual branches zeroed, it is norm(E[token]) @ W_out^T, and the rows of
    the chain's tokens are set so that the logits are M (``answer_chain``) times a scale. A final
    norm weight of +1 on half the dimensions and -1 on the other half makes the form indefinite,
    so a token of a tied embedding need not predict itself: M = P - N (its eigenvalues' signs),
    rows [sqrt(P) | sqrt(N)]. The offline dataset keeps only problems with mixed outcomes, which
    a random model, always wrong, would never give; this one answers a problem whose answer is a
    digit right a tenth of the time."""
    import torch

    tokens, scores = answer_chain(tokenizer, prompt_end)
    values, vectors = torch.linalg.eigh(scores)
    half = model.config.hidden_size // 2
    if len(tokens) > half:
        raise ValueError(f"hidden_size {model.config.hidden_size}: too small for {len(tokens)} chain tokens")
    rows = torch.zeros(len(tokens), 2 * half, dtype=torch.float64)
    rows[:, :len(tokens)] = vectors * values.clamp(min=0).sqrt()
    rows[:, half:half + len(tokens)] = vectors * (-values).clamp(min=0).sqrt()
    # logit(j | i) = rows_j . (g * rows_i) / rms(rows_i) = scale * M[i, j] * sqrt(d) / |rows_i|
    scale = MARGIN * rows.norm(dim=1).max() / (2 * half) ** 0.5
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                parameter.zero_()
        model.model.norm.weight.copy_(torch.cat([torch.ones(half), -torch.ones(half)]))
        for weight in (model.get_input_embeddings().weight, model.get_output_embeddings().weight):
            weight[tokens] = (scale * rows).to(weight.dtype)


def prompt_end_token(tokenizer, model: dict) -> int:
    """The last token of a rendered prompt of ``model`` (its chat template's, where it has one)."""
    from fpa.samples.prompts import build_prompts

    prompt = build_prompts(model["prompt_template"], ["1 + 1"],
                           chat_tokenizer=tokenizer if model.get("chat_template") else None)[0]
    return tokenizer(prompt, add_special_tokens=False)["input_ids"][-1]


def build_model(directory: Path, model_config: dict, wheels: dict[str, dict], seed: int) -> None:
    """A random model of the config's ``architecture`` (its family by ``model_type``), its answerer
    planted, and its tokenizer; saved in bf16 as the hub's checkpoints are."""
    import torch
    import transformers

    architecture = model_config["architecture"]
    family = architecture["model_type"]
    facts = FAMILIES[family]
    tokenizer = build_tokenizer(family, wheels)
    eos = facts["config_eos"]
    bos = tokenizer.convert_tokens_to_ids(facts["bos"] or facts["eos"])
    fields = {key: value for key, value in architecture.items() if key != "model_type"}
    config = getattr(transformers, CONFIG_CLASSES[family])(
        **fields, bos_token_id=bos, eos_token_id=eos if len(eos) > 1 else eos[0], max_position_embeddings=4096)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plant_answerer(model, tokenizer, prompt_end_token(tokenizer, model_config))
    model = model.to(torch.bfloat16)
    model.generation_config = transformers.GenerationConfig(bos_token_id=bos, eos_token_id=config.eos_token_id)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)


def hub_cache_entry(cache: Path, hub_id: str, files: Path) -> str:
    """Put the files of ``files`` into the hub cache ``cache`` as ``hub_id``'s main branch (blobs by
    sha256, a snapshot of symlinks, refs/main); returns the commit (a hash of the files)."""
    repo = cache / f"models--{hub_id.replace('/', '--')}"
    hashes = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(files.iterdir())}
    commit = hashlib.sha1(json.dumps(hashes, sort_keys=True).encode()).hexdigest()
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for name, digest in hashes.items():
        blob = repo / "blobs" / digest
        if not blob.exists():
            os.replace(files / name, blob)
        link = snapshot / name
        if not link.is_symlink():
            link.symlink_to(os.path.relpath(blob, snapshot))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return commit


def build_mirror(config: dict, cache: Path, wheel_cache: Path) -> dict[str, str]:
    """Each hub model of the rehearsal ``config`` built into the hub cache ``cache``; returns
    ``{hub_id: commit}``."""
    wheels = tokenizer_wheels(wheel_cache)
    commits = {}
    for index, model in enumerate(config["models"].values()):
        staging = cache / ".staging" / str(index)
        build_model(staging, model, wheels, seed=index)
        commits[model["hub_id"]] = hub_cache_entry(cache, model["hub_id"], staging)
    shutil.rmtree(cache / ".staging")
    return commits
