"""Event and rejection codes of the classic rule set.

Codes are stable identifiers that the catalogues render (keys `classic.event.<code>`,
`classic.reject.<code>`); renaming one is a protocol change.
"""

from __future__ import annotations

from enum import StrEnum


class Ev(StrEnum):
    GAME_STARTED = "game_started"
    ROLES_DEALT = "roles_dealt"
    ROLE_ASSIGNED = "role_assigned"
    PHASE_STARTED = "phase_started"
    THIEF_CARDS = "thief_cards"
    ROLE_TAKEN = "role_taken"
    LOVERS_CHOSEN = "lovers_chosen"
    LOVERS_REVEALED = "lovers_revealed"
    ELECTION_VOTE = "election_vote"
    CAPTAIN_ELECTED = "captain_elected"
    PACK_REVEALED = "pack_revealed"
    WOLVES_TOLD = "wolves_told"
    WOLF_VOTE_CAST = "wolf_vote_cast"
    WOLVES_CHOSE = "wolves_chose"
    SEEK_RESULT = "seek_result"
    CHECK_RESULT = "check_result"
    WITCH_VICTIM = "witch_victim"
    SANDMAN_RESULT = "sandman_result"
    ACTION_CONFIRMED = "action_confirmed"
    MORNING_REPORT = "morning_report"
    VOTE_CAST = "vote_cast"
    TIE_TO_CAPTAIN = "tie_to_captain"
    VOTE_RESULT = "vote_result"
    SUCCESSOR_NAMED = "successor_named"
    PLAYER_LEFT = "player_left"
    GAME_OVER = "game_over"


class Rej(StrEnum):
    GAME_OVER = "game_over"
    NOT_A_PLAYER = "not_a_player"
    ACTOR_DEAD = "actor_dead"
    WRONG_PHASE = "wrong_phase"
    NO_SUCH_ABILITY = "no_such_ability"
    TARGET_REQUIRED = "target_required"
    TARGET_UNKNOWN = "target_unknown"
    TARGET_DEAD = "target_dead"
    TARGET_SELF = "target_self"
    TARGET_PACK = "target_pack"
    TARGET_VICTIM = "target_victim"
    SAME_TWICE = "same_twice"
    ALREADY_ACTED = "already_acted"
    ACTION_SPENT = "action_spent"
    NO_VICTIM = "no_victim"
    QUIET_NIGHT = "quiet_night"
    MUST_TAKE_WOLF = "must_take_wolf"
    NO_SUCH_CARD = "no_such_card"
    NOT_CAPTAIN = "not_captain"
    NOT_TIED = "not_tied"
    STALE_TIMER = "stale_timer"
