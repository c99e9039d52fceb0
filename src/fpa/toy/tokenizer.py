"""A character-level tokenizer for the toy model, loadable with ``AutoTokenizer``.

It is a byte-level BPE with no merges: every byte is one token, so every ASCII
character is one token, and ``decode(encode(text)) == text`` for any text.

Why byte-level: ``AutoTokenizer`` loads a directory whose ``config.json`` says
``qwen2`` as ``Qwen2Tokenizer``, whatever ``tokenizer_config.json`` declares,
and that class rebuilds the pipeline with a ByteLevel pre-tokenizer and decoder.
A plain character vocabulary would silently lose spaces and newlines there;
this one gives the same ids under either class.
"""

from __future__ import annotations

import os
import re
import unicodedata

PAD, EOS = "<|pad|>", "<|endoftext|>"
SPECIAL_TOKENS = (PAD, EOS)
_SPECIAL = re.compile("|".join(map(re.escape, SPECIAL_TOKENS)))


def token_count(text: str) -> int:
    """How many tokens ``build_tokenizer`` makes of ``text`` (no special tokens added): one per special
    token written in it, and one per byte of the NFC form of the text between them. Without
    tokenizers or transformers: what ``fpa check-config`` counts a toy prompt's tokens with."""
    pieces = _SPECIAL.split(text)
    return len(pieces) - 1 + sum(len(unicodedata.normalize("NFC", piece).encode()) for piece in pieces)


def _byte_symbols() -> list[str]:
    """The printable stand-in of bytes 0..255 used by ByteLevel (GPT-2's ``bytes_to_unicode``)."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted, symbols = 0, []
    for byte in range(256):
        if byte in kept:
            symbols.append(chr(byte))
        else:
            symbols.append(chr(256 + shifted))
            shifted += 1
    return symbols


def build_tokenizer():
    """The toy tokenizer (a ``PreTrainedTokenizerFast``): ids 0 and 1 are pad and eos, byte ``b`` is id ``b + 2``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate([*SPECIAL_TOKENS, *_byte_symbols()])}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.normalizer = normalizers.NFC()
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=PAD,
        eos_token=EOS,
        padding_side="left",  # generation pads on the left; training pads by itself
        clean_up_tokenization_spaces=False,
        model_max_length=256,
    )


def save_tokenizer(directory: str | os.PathLike):
    tokenizer = build_tokenizer()
    tokenizer.save_pretrained(directory)
    return tokenizer
