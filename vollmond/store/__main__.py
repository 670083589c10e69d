"""`python -m vollmond.store [URL] [--data-dir DIR]`: upgrade the database without the service.

For operators who want to migrate before rolling out new nodes; the service itself migrates
at start anyway.
"""

from __future__ import annotations

import argparse
import asyncio

from vollmond.store.db import resolve_database_url
from vollmond.store.migrate import migrate


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and upgrade to head."""
    parser = argparse.ArgumentParser(
        prog="python -m vollmond.store", description="Upgrade the vollmond database to head."
    )
    parser.add_argument("url", nargs="?", help="database URL (default: DATABASE_URL or ./data)")
    parser.add_argument("--data-dir", default=None, help="directory of the SQLite file")
    args = parser.parse_args(argv)
    url = args.url or resolve_database_url(args.data_dir)
    asyncio.run(migrate(url))
    print(
        f"migrated {url.render_as_string(hide_password=True) if not isinstance(url, str) else url}"
    )


if __name__ == "__main__":
    main()
