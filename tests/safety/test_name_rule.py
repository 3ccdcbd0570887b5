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
