"""The migrations' head read from the scripts' source (`scripts_head`): the answer Alembic gives
for the packaged migrations, and no answer (Alembic decides) for anything but one chain.

A wrong head would be worse than a slow one: a database at an older revision taken for one at
the head would serve without its newest tables. So the reading is checked against Alembic's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.script import ScriptDirectory

from vollmond.store.migrate import MIGRATIONS_DIR, alembic_config, head_revision, scripts_head


def test_the_packaged_head_is_alembics() -> None:
    alembic_head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert alembic_head is not None
    assert scripts_head(MIGRATIONS_DIR / "versions") == alembic_head
    assert head_revision() == alembic_head


def _scripts(folder: Path, scripts: dict[str, str]) -> Path:
    for name, body in scripts.items():
        (folder / f"{name}.py").write_text(body, encoding="utf-8")
    return folder


CHAIN = {
    "__init__": "",
    "0001_first": 'revision = "0001"\ndown_revision = None\n',
    "0002_second": 'revision: str = "0002"\ndown_revision: str | None = "0001"\n',
    "0003_third": '"""Doc."""\nimport sqlalchemy\nrevision = "0003"\ndown_revision = "0002"\n',
}


def test_a_chain_has_its_last_revision_as_head(tmp_path: Path) -> None:
    assert scripts_head(_scripts(tmp_path, CHAIN)) == "0003"


def test_the_chain_not_the_file_names_decides(tmp_path: Path) -> None:
    """The newest revision in a file whose name sorts first is still the head."""
    scripts = {**CHAIN, "0000_newest": CHAIN["0003_third"]}
    del scripts["0003_third"]
    assert scripts_head(_scripts(tmp_path, scripts)) == "0003"


@pytest.mark.parametrize(
    ("case", "scripts"),
    [
        ("none", {}),
        ("branch", {**CHAIN, "0004_other": 'revision = "0004"\ndown_revision = "0002"\n'}),
        ("merge", {**CHAIN, "0004_m": 'revision = "0004"\ndown_revision = ("0003", "0002")\n'}),
        ("two roots", {**CHAIN, "0004_root": 'revision = "0004"\ndown_revision = None\n'}),
        ("gap", {**CHAIN, "0004_gap": 'revision = "0004"\ndown_revision = "0009"\n'}),
        ("twice", {**CHAIN, "0004_again": 'revision = "0003"\ndown_revision = "0003"\n'}),
        ("computed", {**CHAIN, "0004_f": 'revision = "00" + "04"\ndown_revision = "0003"\n'}),
        ("no revision", {**CHAIN, "0004_helper": "HELPER = 1\n"}),
    ],
)
def test_anything_but_one_chain_is_left_to_alembic(
    tmp_path: Path, case: str, scripts: dict[str, str]
) -> None:
    assert scripts_head(_scripts(tmp_path, scripts)) is None, case
