"""Issue 8 (web): `X-Forwarded-For` is believed only from the operator's trusted proxies, and
the rate limiters' memory stays bounded.

The proxy tests run the real `vollmond serve` (its uvicorn settings are part of the finding:
uvicorn's own proxy handling trusts every local peer).
"""

from __future__ import annotations

from pathlib import Path

from vollmond.service.policy import Policy
from vollmond.service.web.ratelimit import RateLimiter

from .process import Browser, ServerProcess, serving

LIMIT = Policy().invitation_attempts_per_minute


async def code_attempts(browser: Browser, forwarded_for: list[str]) -> list[int]:
    """One invitation-code attempt per claimed address; the status codes."""
    await browser.post("/api/me")  # the CSRF cookie
    token = browser.http.cookies["vollmond_csrf"]
    statuses = []
    for address in forwarded_for:
        response = await browser.http.post(
            "/api/join",
            json={"code": "WRONGCODE1"},
            headers={"X-CSRF-Token": token, "X-Forwarded-For": address},
        )
        statuses.append(response.status_code)
    return statuses


async def test_forwarded_for_from_an_untrusted_peer_does_not_reset_the_limit(
    tmp_path: Path,
) -> None:
    """Without trusted proxies a local client claiming ever new addresses is still one client."""
    async with serving(ServerProcess(tmp_path / "data")) as server:
        browser = Browser(server)
        try:
            await browser.signup("Guesser")
            claimed = [f"198.51.100.{i}" for i in range(LIMIT + 3)]
            statuses = await code_attempts(browser, claimed)
        finally:
            await browser.close()
    assert statuses[:LIMIT] == [404] * LIMIT
    assert statuses[LIMIT:] == [429] * 3


async def test_a_trusted_proxy_names_the_client(tmp_path: Path) -> None:
    """From a trusted proxy the forwarded address is the client: one client's limit does not
    stop another behind the same proxy; spoofed entries left of the proxy's are ignored."""
    config = tmp_path / "vollmond.toml"
    config.write_text('[web]\ntrusted_proxies = ["127.0.0.1/32"]\n')
    server = ServerProcess(tmp_path / "data", extra_env={"VOLLMOND_CONFIG": str(config)})
    async with serving(server):
        browser = Browser(server)
        try:
            await browser.signup("Behind")
            # What the client wrote (left) is ignored; the proxy's entry (right) counts.
            first = await code_attempts(browser, [f"10.9.9.{i}, 203.0.113.5" for i in range(12)])
            second = await code_attempts(browser, ["203.0.113.6"])
        finally:
            await browser.close()
    assert first[:LIMIT] == [404] * LIMIT and first[LIMIT:] == [429] * (12 - LIMIT)
    assert second == [404]


def test_the_rate_limit_store_is_bounded_and_forgets_expired_keys() -> None:
    now = [0.0]
    limiter = RateLimiter(2, 60.0, lambda: now[0], max_keys=1000)
    for i in range(50_000):
        assert limiter.allow(f"addr{i}")
    assert len(limiter) <= 1000
    # A flood from one key stays limited however many other keys pass by.
    assert limiter.allow("flood") and limiter.allow("flood")
    for i in range(500):
        limiter.allow(f"other{i}")
    assert not limiter.allow("flood")
    # After the window, old keys are forgotten as new calls come in.
    now[0] = 120.0
    for i in range(10):
        assert limiter.allow(f"late{i}")
    assert len(limiter) <= 11
