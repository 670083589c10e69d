"""Run the service for the browser tests: `python -m tests.browser.serve PORT DATA_DIR`.

The same app as `vollmond serve`, with the operators' rate limits raised: one test signs up
eight accounts from one address within a minute, which the default limit would refuse, and
argon2 with cheap parameters (tests/cheap_hashing.py).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import uvicorn

from tests.cheap_hashing import use_cheap_hashing
from vollmond.server import build_app
from vollmond.service.config import Settings
from vollmond.service.policy import Policy
from vollmond.settings import WebSettings

PHONE_NUMBER = "+49 30 5550100"
SIP_ADDRESS = "sip:vollmond@example.org"


def main(argv: list[str]) -> None:
    port, data_dir = int(argv[0]), Path(argv[1])
    use_cheap_hashing()  # the browser tests sign up every player
    policy = replace(
        Policy(), login_attempts_per_minute=10_000, invitation_attempts_per_minute=10_000
    )
    # The front page shows where to call in (issue 12); the number is a test value.
    web = WebSettings(phone_number=PHONE_NUMBER, sip_address=SIP_ADDRESS)
    settings = Settings(port=port, data_dir=data_dir, policy=policy, web=web)
    uvicorn.run(
        build_app(settings), host="127.0.0.1", port=port, log_level="warning", ws_max_size=8192
    )


if __name__ == "__main__":
    main(sys.argv[1:])
