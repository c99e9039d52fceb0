"""The one pad token id of a tokenizer, for every batch the pipeline pads (training, cache, generation).

Llama-3.2-Instruct's tokenizer sets no pad token. As TRL's trainers do (``pad_token = eos_token``
when none is set), a tokenizer without one pads with its EOS id: every padded position is
masked (attention mask, loss rows), so the id only has to exist in the vocabulary.
"""

from __future__ import annotations


def pad_token_id(tokenizer) -> int:
    """The tokenizer's pad id, else its EOS id; a tokenizer with neither is refused."""
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if candidate is not None:
            return int(candidate)
    raise ValueError(f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r}: expected a pad or an EOS token, "
                     f"it has neither (set one in its tokenizer_config.json)")
