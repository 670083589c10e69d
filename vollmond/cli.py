"""The `vollmond` command."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from vollmond.engine.core import Json
from vollmond.engine.ruleset import (
    AnyRuleSet,
    OptionsDecodeError,
    SeatsBots,
    Simulated,
    UnknownRuleSetError,
    get_ruleset,
    ruleset_ids,
)
from vollmond.moderation import commands as moderation_commands
from vollmond.sim import pit, summarise
from vollmond.worlds import get_world, world_ids

app = typer.Typer(help="Vollmond: Werewolf-family games by telephone and in the browser.")
admin = typer.Typer(help="Operator tasks.")
app.add_typer(admin, name="admin")
moderation_commands.register(admin)  # set-role, ban, bans, alarms, grant, recordings, ...
prompts = typer.Typer(help="Telephone prompts.")
app.add_typer(prompts, name="prompts")


@app.callback()
def main() -> None:
    """Vollmond command line."""


@app.command()
def simulate(
    rules: Annotated[str, typer.Option(help=f"Rule set: {', '.join(ruleset_ids())}.")] = "standard",
    world: Annotated[
        str | None, typer.Option(help="World id of that rule set (default: its first).")
    ] = None,
    players: Annotated[int, typer.Option(min=1, max=60, help="Seats per game.")] = 12,
    deck: Annotated[str | None, typer.Option(help="Role deck (default: the rule set's).")] = None,
    games: Annotated[int, typer.Option(min=1, help="How many games to play.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the first game; game i uses seed+i.")] = 1,
    unanimous: Annotated[bool, typer.Option(help="Option 'einstimmig' (standard).")] = False,
    instant_kill: Annotated[bool, typer.Option(help="Option 'Sofort-Mord' (standard).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    pit_bots: Annotated[
        bool,
        typer.Option(
            "--pit", help="Smart against random bots: half the seats each, win rate per kind."
        ),
    ] = False,
) -> None:
    """Play complete bot games and report win rates per side and games per second.

    Every game is played by the rule set itself (`RuleSet.simulate`), so the same rules,
    options and seeds always give the same figures."""
    ruleset, world = _ruleset_and_world(rules, world)
    if deck == "custom":
        raise typer.BadParameter("the custom deck is founded on the web, not simulated here")
    if not ruleset.min_players <= players <= ruleset.max_players:
        bounds = f"{ruleset.min_players}..{ruleset.max_players}"
        raise typer.BadParameter(f"{rules} games need {bounds} players")
    wanted: dict[str, Json] = {"players": players, "world": world}
    if deck is not None:
        wanted["deck"] = deck
    if unanimous:
        wanted["unanimous"] = True
    if instant_kill:
        wanted["instant_kill"] = True
    try:
        options = ruleset.decode_options(wanted)
    except OptionsDecodeError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if pit_bots:
        _pit(ruleset, options, players, games, seed, as_json=as_json)
        return
    err = Console(stderr=True)
    played: list[Simulated] = []
    started = time.perf_counter()
    with Progress(
        TextColumn("[bold]simulating"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=as_json or not err.is_terminal,
    ) as progress:
        task = progress.add_task("games", total=games)
        for i in range(games):
            played.append(ruleset.simulate(options, seed + i))
            progress.advance(task)
    elapsed = time.perf_counter() - started
    report = summarise(played)
    per_second = report.games / elapsed if elapsed > 0 else 0.0
    deck_id = str(ruleset.encode_options(options).get("deck", "-"))
    if as_json:
        out = {
            "rules": ruleset.id,
            "world": world,
            "players": players,
            "deck": deck_id,
            "seed": seed,
            "games": report.games,
            "wins": report.wins,
            "win_rates": report.win_rates(),
            "average_rounds": report.rounds,
            "commands": report.commands,
            "games_per_second": per_second,
        }
        sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
        return
    names = get_world(world).names_in("en")
    title = f"{report.games} games · {ruleset.id} · {names.world} · {players} players · {deck_id}"
    table = Table(title=title)
    table.add_column("side")
    table.add_column("wins", justify="right")
    table.add_column("rate", justify="right")
    for side, wins in report.wins.items():
        table.add_row(side, str(wins), f"{wins / report.games:.1%}")
    console = Console()
    console.print(table)
    console.print(
        f"average rounds {report.rounds:.2f} · {report.commands} commands · "
        f"{per_second:.1f} games/s"
    )


def _ruleset_and_world(rules: str, world: str | None) -> tuple[AnyRuleSet, str]:
    """The rule set named on the command line and one of its worlds (default: its first)."""
    try:
        ruleset = get_ruleset(rules)
    except UnknownRuleSetError as exc:
        known = ", ".join(ruleset_ids())
        raise typer.BadParameter(f"unknown rule set {rules!r}; known: {known}") from exc
    worlds = world_ids(ruleset.id)
    world = world or worlds[0]
    if world not in worlds:
        raise typer.BadParameter(f"unknown {rules} world {world!r}; known: {', '.join(worlds)}")
    return ruleset, world


def _pit(
    ruleset: AnyRuleSet, options: object, players: int, games: int, seed: int, *, as_json: bool
) -> None:
    if not isinstance(ruleset, SeatsBots) or not {"smart", "random"} <= set(ruleset.bots):
        raise typer.BadParameter(f"the {ruleset.id} rules have no smart and random bots to pit")
    report = pit(ruleset, options, players, games, seed)
    if as_json:
        out = {
            "games": report.games,
            "rules": ruleset.id,
            "players": players,
            "seed": seed,
            "smart": {"seats": report.smart_seats, "wins": report.smart_wins},
            "random": {"seats": report.random_seats, "wins": report.random_wins},
            "smart_win_rate": report.smart_rate,
            "random_win_rate": report.random_rate,
        }
        sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
        return
    table = Table(title=f"{report.games} games · {players} players · smart against random")
    table.add_column("bot")
    table.add_column("seats played", justify="right")
    table.add_column("won", justify="right")
    table.add_column("rate", justify="right")
    table.add_row(
        "smart", str(report.smart_seats), str(report.smart_wins), f"{report.smart_rate:.1%}"
    )
    table.add_row(
        "random", str(report.random_seats), str(report.random_wins), f"{report.random_rate:.1%}"
    )
    Console().print(table)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to bind [VOLLMOND_HOST].")] = None,
    port: Annotated[int | None, typer.Option(help="HTTP port [VOLLMOND_PORT].")] = None,
    sip_port: Annotated[
        int | None, typer.Option(help="SIP/UDP port, 0 = no telephone [VOLLMOND_SIP_PORT=5060].")
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option(help="Data directory, SQLite by default [VOLLMOND_DATA_DIR].")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(help="Operator settings file (TOML, docs/settings.md) [VOLLMOND_CONFIG]."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Worker processes sharing the games and rooms (docs/scaling.md), one per core "
            "by default (one with --nats-url); worker i answers SIP on --sip-port + i "
            "[VOLLMOND_WORKERS].",
            envvar="VOLLMOND_WORKERS",
            show_default=False,
        ),
    ] = None,
    worker_port_base: Annotated[
        int | None,
        typer.Option(help="With --workers: worker i also listens alone on this port + i."),
    ] = None,
    nats_url: Annotated[
        str | None,
        typer.Option(
            help="Share the games with other nodes over this NATS server (docs/deployment.md); "
            "needs --node-id, --nodes and one PostgreSQL database [VOLLMOND_NATS_URL].",
            envvar="VOLLMOND_NATS_URL",
        ),
    ] = None,
    node_id: Annotated[
        str | None,
        typer.Option(
            help="With --nats-url: this node's name [VOLLMOND_NODE_ID].", envvar="VOLLMOND_NODE_ID"
        ),
    ] = None,
    nodes: Annotated[
        str | None,
        typer.Option(
            help="With --nats-url: every node's name, comma-separated, the same list on every "
            "node [VOLLMOND_NODES].",
            envvar="VOLLMOND_NODES",
        ),
    ] = None,
    nats_namespace: Annotated[
        str,
        typer.Option(
            help="With --nats-url: the subjects' first token, one per deployment sharing a "
            "NATS server [VOLLMOND_NATS_NAMESPACE].",
            envvar="VOLLMOND_NATS_NAMESPACE",
        ),
    ] = "vollmond",
    ownership: Annotated[
        str,
        typer.Option(
            help="With --nats-url: who owns a game — 'hash' (the fixed --nodes list) or "
            "'leases' (the store's leases: a dead node's games are taken over) "
            "[VOLLMOND_OWNERSHIP].",
            envvar="VOLLMOND_OWNERSHIP",
        ),
    ] = "hash",
    lease_ttl: Annotated[
        float,
        typer.Option(
            help="With --ownership leases: a lease's time-to-live in seconds; a dead node's "
            "games move within about this [VOLLMOND_LEASE_TTL].",
            envvar="VOLLMOND_LEASE_TTL",
        ),
    ] = 6.0,
    media_processes: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=64,
            help="Processes for the calls' RTP, 20 ms clock and mixing, 0 = in the service's "
            "process; 1 by default (docs/voice.md) "
            "[VOLLMOND_MEDIA_PROCESSES; [phone] media_processes].",
            envvar="VOLLMOND_MEDIA_PROCESSES",
        ),
    ] = None,
    media_priority: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=99,
            help="Real-time priority (SCHED_RR) of the media processes, 0 = ordinary; 20 by "
            "default, tried where the system grants it (CAP_SYS_NICE; docs/voice.md) "
            "[VOLLMOND_MEDIA_PRIORITY; [phone] media_priority].",
            envvar="VOLLMOND_MEDIA_PRIORITY",
        ),
    ] = None,
) -> None:
    """Run the service: web, WebSocket and game actors (DATABASE_URL selects PostgreSQL)."""
    from vollmond.server import build_app  # noqa: PLC0415
    from vollmond.service.config import Settings  # noqa: PLC0415
    from vollmond.service.logs import configure_logging  # noqa: PLC0415
    from vollmond.workers import (  # noqa: PLC0415
        WorkersError,
        default_workers,
        serve_app,
        serve_workers,
    )

    settings = Settings.from_env(config, host=host, port=port, sip_port=sip_port, data_dir=data_dir)
    media = {"media_processes": media_processes, "media_priority": media_priority}
    if any(value is not None for value in media.values()):
        given = {name: value for name, value in media.items() if value is not None}
        phone = dataclasses.replace(settings.phone, **given)
        settings = dataclasses.replace(settings, phone=phone)
    configure_logging()
    if nats_url is not None:
        from vollmond.nodes import NodeSpec, serve_node  # noqa: PLC0415

        try:
            if workers is not None and workers > 1:
                raise WorkersError("a node over NATS is one process: leave out --workers")
            spec = NodeSpec.parse(node_id, nodes, nats_url, nats_namespace, ownership, lease_ttl)
            serve_node(settings, spec)
        except WorkersError as exc:
            raise typer.BadParameter(str(exc)) from exc
        return
    workers = default_workers() if workers is None else workers
    if workers > 1:
        try:
            code = serve_workers(settings, workers, worker_port_base=worker_port_base)
        except WorkersError as exc:
            raise typer.BadParameter(str(exc)) from exc
        raise typer.Exit(code)
    serve_app(build_app(settings), settings)


@prompts.command("export")
def prompts_export(
    lang: Annotated[str, typer.Option(help="Language of the prompts: de or en.")] = "de",
) -> None:
    """List every fixed telephone prompt as "code<TAB>text", for a speaker to record.

    Save each recording as <data-dir>/voice/<code>.wav (English: <code>.en.wav), any sample
    rate; the service plays it instead of the synthetic voice."""
    from vollmond.phone.session.prompts.prewarm import static_prompt_codes  # noqa: PLC0415

    if lang not in ("de", "en"):
        raise typer.BadParameter("the languages are de and en")
    for code, line in static_prompt_codes(lang).items():
        sys.stdout.write(f"{code}\t{line}\n")


@admin.command("create-admin")
def create_admin_command(
    name: Annotated[str, typer.Argument(help="Account name.")],
    password: Annotated[str, typer.Option(prompt=True, hide_input=True)],
    data_dir: Annotated[Path | None, typer.Option(help="Data directory.")] = None,
) -> None:
    """Create the first admin account (or another one)."""
    import asyncio  # noqa: PLC0415

    from vollmond.service.config import Settings  # noqa: PLC0415
    from vollmond.store import create_admin, open_store  # noqa: PLC0415

    settings = Settings.from_env(data_dir=data_dir)

    async def run() -> int:
        async with open_store(settings.database()) as sessions:
            account = await create_admin(sessions, name, password)
            return account.id

    account_id = asyncio.run(run())
    Console().print(f"admin {name!r} created (account {account_id})")


if __name__ == "__main__":  # `python -m vollmond.cli …` (guarded: worker processes import it)
    app(prog_name="vollmond")
