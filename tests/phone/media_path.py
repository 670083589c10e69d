"""Which media path the telephone tests run on: unset or ``VOLLMOND_TEST_MEDIA_PROCESSES=1``
runs the SIP servers of the e2e and voice rigs with one media process, the service's default
(docs/voice.md, "The media process"); ``0`` on the event loop. The media process's own tests
(tests/phone/e2e/test_media_process.py) and the in-process set
(tests/phone/e2e/test_in_process.py) set it themselves, so every run covers both."""

from __future__ import annotations

import os

MEDIA_PROCESSES = int(os.environ.get("VOLLMOND_TEST_MEDIA_PROCESSES", "1"))
