"""fpa.data.yaml_edit: one entry's keys set in a file people edit, everything else as they wrote it."""

from pathlib import Path

import pytest
import yaml
from ruamel.yaml import YAML

from fpa.data.yaml_edit import set_entry_keys

ROOT = Path(__file__).resolve().parents[2]
# what fpa lock edits: the run configs' model entries and the catalogs' file entries
EDITED = sorted(path for path in [*ROOT.glob("config/*.yaml"), *ROOT.glob(".test/*/*.yaml")]
                if path.name != "paper_results.yaml")

TEXT = """\
models:
  a:
    revision: main  # the branch
    files:
      x: '1'
      y: '2'

  # b is next
  b: {source: toy, hub_id: o/b}
  c:
    source: hub  # c's own
    prompt: &prompt "Q: {problem}\\nA:"

# data next
data:
  prompt: *prompt
  mirror: null
"""


def test_an_entry_gets_its_keys_and_every_comment_stays_where_it_was():
    edited = set_entry_keys(TEXT, "c.yaml", "models", "a", {"files": {"z": "3"}, "revision": "v2", "n": 5})
    edited = set_entry_keys(edited, "c.yaml", "models", "b", {"revision": "v2"})
    edited = set_entry_keys(edited, "c.yaml", "models", "c", {"files": {"q": "1"}})
    assert edited == """\
models:
  a:
    revision: v2    # the branch
    files:
      z: '3'
    n: 5

  # b is next
  b:
    source: toy
    hub_id: o/b
    revision: v2
  c:
    source: hub  # c's own
    prompt: &prompt "Q: {problem}\\nA:"
    files:
      q: '1'

# data next
data:
  prompt: *prompt
  mirror: null
"""
    assert yaml.safe_load(edited)["data"]["prompt"] == "Q: {problem}\nA:"


def test_an_entry_that_is_not_a_mapping_is_named():
    with pytest.raises(ValueError, match=r"c.yaml: models.d: expected a mapping to set revision in, got no such entry"):
        set_entry_keys(TEXT, "c.yaml", "models", "d", {"revision": "v2"})
    with pytest.raises(ValueError, match=r"c.yaml: data.mirror: expected a mapping to set revision in, got None"):
        set_entry_keys(TEXT, "c.yaml", "data", "mirror", {"revision": "v2"})


@pytest.mark.parametrize("path", EDITED, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_projects_files_come_back_as_written_but_for_the_keys_set(path):
    """Each block-style entry of each section, its first scalar key set to its own value: the file unchanged."""
    text = path.read_text()
    document = YAML().load(text)
    entries = [(section, name, entry) for section, block in document.items() if isinstance(block, dict)
               for name, entry in block.items() if isinstance(entry, dict) and entry and not entry.fa.flow_style()]
    assert entries, path
    for section, name, entry in entries:
        key = next((key for key, value in entry.items() if not isinstance(value, (dict, list))), None)
        if key is not None:
            assert set_entry_keys(text, path.name, section, name, {key: entry[key]}) == text, (section, name)
