"""Event and rejection codes of the mayor rule set (stable identifiers; catalogues render
them under `mayor.event.<code>` and `mayor.reject.<code>`)."""

from __future__ import annotations

from enum import StrEnum


class Ev(StrEnum):
    GAME_STARTED = "game_started"
    ROLES_DEALT = "roles_dealt"
    ROLE_ASSIGNED = "role_assigned"
    TEAM_REVEALED = "team_revealed"
    LOVERS_REVEALED = "lovers_revealed"
    STAGE_STARTED = "stage_started"
    CANDIDATE_STOOD = "candidate_stood"
    CANDIDATE_DECLINED = "candidate_declined"
    NO_CANDIDATES = "no_candidates"
    FLOOR_GIVEN = "floor_given"
    FLOOR_RELEASED = "floor_released"
    BALLOT_OPENED = "ballot_opened"
    VOTE_CAST = "vote_cast"
    ELECTION_TIED = "election_tied"
    MAYOR_ELECTED = "mayor_elected"
    MAYOR_LOST = "mayor_lost"
    ACCUSED = "accused"
    NO_ACCUSATIONS = "no_accusations"
    TRIAL_OPENED = "trial_opened"
    TRIAL_TIED = "trial_tied"
    IMPRISONED = "imprisoned"
    ACQUITTED = "acquitted"
    VICTIM_CHOSEN = "victim_chosen"
    NIGHT_VICTIM = "night_victim"
    NIGHT_QUIET = "night_quiet"
    CHAT = "chat"
    PLAYER_LEFT = "player_left"
    GAME_OVER = "game_over"


class Rej(StrEnum):
    GAME_OVER = "game_over"
    WRONG_STAGE = "wrong_stage"
    NOT_A_PLAYER = "not_a_player"
    ACTOR_OUT = "actor_out"
    TARGET_UNKNOWN = "target_unknown"
    TARGET_OUT = "target_out"
    TARGET_SELF = "target_self"
    TARGET_TEAMMATE = "target_teammate"
    NOT_A_CANDIDATE = "not_a_candidate"
    ALREADY_DECIDED = "already_decided"
    ALREADY_VOTED = "already_voted"
    ALREADY_ACCUSED = "already_accused"
    TARGET_ACCUSED = "target_accused"
    NOT_YOUR_FLOOR = "not_your_floor"
    NO_NIGHT_ACTION = "no_night_action"
    TEXT_EMPTY = "text_empty"
    TEXT_TOO_LONG = "text_too_long"
    NOBODY_HEARS = "nobody_hears"
    STALE_TIMER = "stale_timer"
