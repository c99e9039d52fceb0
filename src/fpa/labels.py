"""When two labels (a table's row labels, column headers, run and column keys) read as one.

A reader cannot tell apart two texts that differ only in Unicode normalisation (``é`` composed or as
``e`` + a combining accent), by a compatibility form (a non-breaking space, a full-width letter), by an
invisible or control character (a zero-width space, a soft hyphen, a BOM), by runs of white space, or
by case. ``label_identity`` maps each text to what a reader sees: the config's judge refuses two rows or
columns of a table whose labels share it (``fpa.planning.validation``), and ``fpa explain`` finds a
row or column named as printed by it, so the one it answers is the one the reader meant.
"""

from __future__ import annotations

import unicodedata

#: Unicode categories a reader does not see: controls (Cc), format characters (Cf: zero-width spaces
#: and joiners, soft hyphen, BOM, bidirectional marks), unassigned (Cn) and private-use (Co) code points
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Co"})


def label_identity(text: str) -> str:
    """``text`` as a reader tells it apart: NFKC, white space (line breaks included) collapsed to one
    space and stripped, invisible characters removed, case folded (then NFKC again: folding may
    un-normalise)."""
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    visible = "".join(char for char in text if unicodedata.category(char) not in INVISIBLE_CATEGORIES)
    return unicodedata.normalize("NFKC", " ".join(visible.split()).casefold())

