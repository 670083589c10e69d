"""Issue 8 (web): names are unique in their NFKC + case-folded form, so `ALICE` or `ａｌｉｃｅ`
(full width) cannot sign up beside `alice`; any of those forms signs in to the same account.
Signup still says when a name is taken (the operators decided to keep that answer).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .support import PASSWORD, ApiClient


@pytest.mark.parametrize("variant", ["ALICE", "Alice", "ａｌｉｃｅ", "ＡＬＩＣＥ", " alice "])
async def test_name_variants_cannot_sign_up_beside_the_original(
    api: Callable[[], ApiClient], variant: str
) -> None:
    original = await api().signup("alice")
    again = await api().post("/api/signup", {"name": variant, "password": PASSWORD})
    assert again.status_code == 409, again.text
    assert again.json()["error"] == "name_taken"
    login = await api().post("/api/login", {"name": variant, "password": PASSWORD})
    assert login.status_code == 200, login.text
    assert login.json()["account"] == {"id": original["id"], "name": "alice"}


async def test_invisible_characters_are_refused_in_names(api: Callable[[], ApiClient]) -> None:
    for name in ("al\u200bice", "al\u202eice", "al\x00ice"):
        response = await api().post("/api/signup", {"name": name, "password": PASSWORD})
        assert response.status_code == 400, (name, response.text)
