"""Which media path the telephone tests run on: ``VOLLMOND_TEST_MEDIA_PROCESSES=1`` runs the
SIP servers of the e2e and voice rigs with one media process (docs/voice.md, "The media
process"); unset or 0, on the event loop as before. The media process's own tests set it
themselves."""

from __future__ import annotations

import os

MEDIA_PROCESSES = int(os.environ.get("VOLLMOND_TEST_MEDIA_PROCESSES", "0"))
