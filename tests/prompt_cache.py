"""One prompt cache for every test process of a run and every service they start.

A service with a telephone renders its 248 fixed prompts at start (espeak-ng and sox, some ten
seconds of CPU), and without this each test's data directory rendered them again. The cache is
keyed by the voice and the words, so sharing it changes no prompt; tests/phone/session/
test_voice_files.py still proves the data directory's own cache. scripts/test.sh puts it in the
run's temporary directory; xdist gives all workers of a run the same id.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

PROMPT_CACHE = Path(
    os.environ.setdefault(
        "VOLLMOND_PROMPT_CACHE",
        str(
            Path(tempfile.gettempdir())
            / f"vollmond-prompts-{os.environ.get('PYTEST_XDIST_TESTRUNUID', os.getpid())}"
        ),
    )
)


def render_fixed_prompts() -> int:
    """Render the telephone's fixed prompts into the cache once, before the test processes
    start, as a service does at its start (`prewarm`): the first run's workers, starting such
    services together, rendered most of them several times over (espeak-ng and sox: 31 CPU s
    in a whole run; once, 6 CPU s). Returns how many prompts there are."""
    import asyncio  # noqa: PLC0415 - only for this command

    from vollmond.phone.session.prompts.prewarm import prewarm  # noqa: PLC0415
    from vollmond.phone.session.prompts.voice import EspeakVoice  # noqa: PLC0415

    return asyncio.run(prewarm(EspeakVoice(PROMPT_CACHE), "de"))


if __name__ == "__main__":
    print(f"{render_fixed_prompts()} fixed prompts in {PROMPT_CACHE}")
