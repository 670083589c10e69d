"""`python -m vollmond …`: the `vollmond` command, for a checkout without the script installed."""

from vollmond.cli import app

app(prog_name="vollmond")
