"""The one rule for names that become paths (pipeline/names.py), and the containment check, on their own."""
from __future__ import annotations

import pytest

from pipeline.config import full_schema
from pipeline.names import PATTERN, UnsafeName, check_name, inside


def test_the_name_rule_is_the_schemas_name_pattern():
    assert full_schema()["definitions"]["name"]["pattern"] == f"^{PATTERN}$"  # generated: pipeline/config_schema.py
    for good in ("r20261202-170429-3fa1", "adhoc-r1", "khan2025", "v1.2_x"):
        assert check_name(good, "x") == good
    for bad in ("../x", "a/b", ".hidden", "..", "-x", "", "a\nb", "x" * 201):
        with pytest.raises(UnsafeName, match="^here: .* \\(a name is"):
            check_name(bad, "here")


def test_inside_follows_symlinks(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path)
    assert inside(tmp_path / "root", "a", "b.csv") == tmp_path / "root" / "a" / "b.csv"
    with pytest.raises(UnsafeName, match="outside"):
        inside(tmp_path / "root", "link", "x")
    with pytest.raises(UnsafeName, match="outside"):
        inside(tmp_path / "root", "/etc/passwd")


def test_a_split_name_is_a_name_without_a_dot_in_the_config_and_the_dag_alike():
    """The DAG's ``{split}`` wildcard is the config's rule for a split (pipeline/rules/common.smk): a split
    ``dev-1`` passed the config and matched no rule while the wildcard was ``[A-Za-z0-9_]+``."""
    import re

    from pipeline.datasets.paths import REPO
    from pipeline.names import SPLIT_PATTERN

    assert full_schema()["definitions"]["split"]["pattern"] == f"^{SPLIT_PATTERN}$"
    assert "split=names.SPLIT_PATTERN" in (REPO / "pipeline" / "rules" / "common.smk").read_text().replace(" ", "")
    assert re.fullmatch(SPLIT_PATTERN, "dev-1") and re.fullmatch(SPLIT_PATTERN, "train_2")
    # '.' would make `questions/train.gold.csv` both split train's labels and a split `train.gold`'s questions
    assert not re.fullmatch(SPLIT_PATTERN, "train.gold")
