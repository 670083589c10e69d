// The game table: waiting room, seats, role card, actions from view.me.legal, night room,
// calls, chat, log, end screen and replay. Everything shown comes from the server's view and
// from the events this seat may receive; the client never decides what is secret.

import { t, lang } from "./i18n.js";
import { errorText } from "./errors.js";
import { h, api, replaceChildren, replaceChildrenIfChanged, seats, saveSeat, forgetSeat, applyTheme } from "./util.js";
import { createVoice } from "./voice.js";
import { createTones, RING_ENDS } from "./tones.js";

const ABILITY_ORDER = [
  "steal", "evil_vote", "check", "protect", "trap", "heal", "poison", "visit", "seance",
  "shoot", "transfer_vote", "instant_kill",
];
const MEMORY_LABELS = { heal: "memory_heal", poison: "memory_poison", bullets: "memory_bullets" };
// The call-progress tone each event starts, as on the telephone (tones.js).
const TONE_OF = { call_incoming: "incoming_ring", call_outgoing: "ringing", call_busy: "busy" };
// i18n keys naming a move in the outbox (abilities use "act_<kind>").
const MOVE_LABELS = {
  Nominate: "act_nominate", Vote: "act_vote", PlaceCall: "act_call", AnswerCall: "move_answer",
  HangUp: "hang_up", ToggleCallMode: "toggle_mode", Interject: "interject", Leave: "leave_game",
};
// Commands other panels handle (calls, chat, leaving); every other legal command becomes a
// group of buttons in "Handeln", whatever rule set it belongs to.
const NOT_ACTIONS = new Set(["PlaceCall", "AnswerCall", "HangUp", "ToggleCallMode", "Interject", "Say", "Leave"]);

// The group a legal command belongs to: its type, and its kind for a night ability.
function groupKeyOf(cmd) {
  if (cmd.type === "UseAbility") return "ability:" + cmd.kind;
  if (typeof cmd.kind === "string") return `${cmd.type}:${cmd.kind}`;
  return cmd.type;
}

// Urgent or private news is announced at once; everything else reaches screen readers
// politely through the log (role="log").
const ALERT_CODES = new Set([
  "call_incoming", "call_busy", "call_declined", "call_missed", "check_result",
  "medium_result", "witch_victim", "role_stolen", "game_over",
]);

export function mountGame(main, gameId, { spectate, ctx, worldById, announce }) {
  const saved = seats()[gameId] || null;
  const token = spectate ? null : saved?.token || null;
  const g = {
    table: null,
    world: null,
    text: null, // world names and role help in the current language
    view: null,
    seat: null,
    lastSeq: 0,
    events: [],
    chat: [],
    ws: null,
    closed: false,
    deadline: null,
    clockSeq: null,
    retry: 0,
    nextId: 1,
    // Commands sent but not yet answered, by client id: resent after a reconnect, so a
    // command whose answer was lost is answered then (never applied twice: docs/protocol.md).
    pending: new Map(),
    replay: null,
    catchingUp: false,
    // The table's recording notice as the server last sent it (O2/O4), or null. Never a
    // client timer: the mark stays until the server says the recording has ended.
    recording: null,
    lastHeard: 0, // when the server last said anything (heartbeat: docs/protocol.md "ping")
    chosen: new Map(), // group key → target the player picked in this phase (kept highlighted)
    chosenSeq: null,
    accountSeat: null, // this account's seat from the server, when this browser has no token
  };
  let pollTimer = null;
  let tickTimer = null;
  let reconnectTimer = null;
  let heartbeatTimer = null;
  let voice = null; // browser voice (voice.js)
  const tones = createTones(); // ringing and busy tones (tones.js)

  const root = h("div", { class: "game", id: "game", dataset: { game: gameId } });
  main.replaceChildren(root);

  // -- helpers ---------------------------------------------------------------------------
  const nameOf = (house) => g.table?.players.find((p) => p.house === house)?.name || "";
  const houseLabel = (house) => {
    if (house === null || house === undefined) return t("nobody");
    const name = nameOf(house);
    return name ? `${house} · ${name}` : String(house);
  };
  const houseLong = (house) => {
    const name = nameOf(house);
    return name ? `${t("house", { n: house })}, ${name}` : t("house", { n: house });
  };
  const roleName = (key) => (key ? g.text?.roles?.[key] || key : "");
  const worldNames = () => (g.world ? g.world.names[lang()] || g.world.names.de : null);
  const rulesetId = () => g.view?.ruleset || g.table?.ruleset || "standard";
  const rulesetInfo = () => (ctx.rulesets || []).find((r) => r.id === rulesetId()) || null;
  // The seats this player knows to be on their own team (standard partners, the mayor
  // rules' team, the classic wolves' circle or the pact maker's wolves), never itself.
  const teamOf = (me) => (me ? me.partners || me.team || (me.wolves_room?.length ? me.wolves_room : me.wolves) || [] : []).filter((s) => s !== me.seat);
  const loversOf = (me) => (me ? me.lovers || (me.partner != null ? [me.seat, me.partner] : []) : []);

  async function loadText() {
    if (!g.world) return;
    g.text = await api(`/api/worlds/${g.world.id}/text?lang=${lang()}`);
  }

  async function loadTable() {
    const data = await api(`/api/games/${gameId}`);
    g.table = data.game;
    if (!g.world || g.world.id !== g.table.world) {
      g.world = worldById(g.table.world);
      applyTheme(g.world);
      await loadText();
    }
    if (saved) saveSeat(gameId, { world: g.table.world });
    return g.table;
  }

  // -- waiting room ----------------------------------------------------------------------
  function renderWaiting() {
    const table = g.table;
    const n = worldNames();
    const box = waitingError();
    const players = h(
      "ul",
      { class: "plain waiting-list", "aria-live": "polite" },
      table.players.map((p) => h("li", {}, p.name)),
    );
    root.replaceChildren(
      h(
        "section",
        { class: "card waiting", "aria-labelledby": "wait-h" },
        h("h1", { id: "wait-h" }, `${t("waiting_room")} · ${n ? n.world + " · " + n.place : table.world}`),
        n ? h("p", { class: "tagline" }, n.tagline) : null,
        saved?.code ? h("p", { class: "code", id: "invitation-code" }, t("invitation", { code: saved.code })) : null,
        h("p", { id: "waiting-count" }, t("waiting_players", { taken: table.taken, size: table.size })),
        players,
        h(
          "div",
          { class: "buttons" },
          isHost()
            ? h(
                "button",
                {
                  type: "button",
                  class: "primary",
                  id: "start-button",
                  onclick: async () => {
                    try {
                      await api(`/api/games/${gameId}/start`, { method: "POST", body: {} });
                      g.waitingError = null;
                      await enter();
                    } catch (err) {
                      showWaitingError(err);
                    }
                  },
                },
                t("start_now"),
              )
            : null,
          isHost() ? botsButton() : null,
          isHost() ? cancelButton() : null,
          token
            ? h(
                "button",
                {
                  type: "button",
                  class: "ghost",
                  onclick: async () => {
                    try {
                      await api(`/api/games/${gameId}/leave`, { method: "POST", body: { token } });
                    } catch {
                      /* already gone */
                    }
                    forgetSeat(gameId);
                    location.hash = "#/";
                  },
                },
                t("leave_table"),
              )
            : null,
          h("a", { class: "button ghost", href: "#/" }, t("back_to_lobby")),
        ),
        box,
      ),
    );
  }

  // The waiting room is redrawn every poll; its error stays until the player dismisses it.
  function waitingError() {
    if (!g.waitingError) return h("div", { id: "waiting-error", hidden: true });
    return h(
      "div",
      { class: "error dismissable", id: "waiting-error", role: "alert", dataset: { code: g.waitingError.code || "" } },
      h("p", { id: "waiting-error-text" }, t("error", { message: errorText(g.waitingError) })),
      h(
        "button",
        {
          type: "button",
          class: "ghost",
          id: "waiting-error-dismiss",
          dataset: { key: "dismiss" },
          onclick: () => {
            g.waitingError = null;
            renderWaiting();
            root.querySelector("#start-button, #leave-button, a")?.focus();
          },
        },
        t("dismiss"),
      ),
    );
  }

  function showWaitingError(err) {
    g.waitingError = { code: err.code, params: err.params };
    renderWaiting();
    root.querySelector("#waiting-error-dismiss")?.focus();
  }

  // -- seats that belong to the account ----------------------------------------------------
  // A signed-in account gets back to its seat on any device: the server lists its seats and
  // the socket says hello with `account: true` (the session cookie decides, no token).
  async function findAccountSeat() {
    if (!ctx.me) return null;
    try {
      const data = await api("/api/my-games");
      return data.games.find((seat) => seat.game === gameId) || null;
    } catch {
      return null;
    }
  }

  // The host fills the free seats with bots (POST /bots); the full table starts at once.
  function botsButton() {
    return h(
      "button",
      {
        type: "button",
        class: "secondary",
        id: "fill-bots",
        onclick: async () => {
          try {
            await api(`/api/games/${gameId}/bots`, { method: "POST", body: {} });
            g.waitingError = null;
            await enter();
          } catch (err) {
            showWaitingError(err);
          }
        },
      },
      t("fill_bots"),
    );
  }

  // The host calls off a round that has not started (POST /abort; a charge is refunded).
  function cancelButton() {
    return h(
      "button",
      {
        type: "button",
        class: "danger",
        id: "cancel-game",
        onclick: async () => {
          try {
            await api(`/api/games/${gameId}/abort`, { method: "POST", body: {} });
            forgetSeat(gameId);
            location.hash = "#/";
          } catch (err) {
            showWaitingError(err);
          }
        },
      },
      t("cancel_round"),
    );
  }

  const isHost = () => Boolean(saved?.host || g.accountSeat?.host);

  async function enter() {
    if (g.closed) return;
    let table;
    try {
      table = await loadTable();
    } catch (err) {
      root.replaceChildren(
        h("p", { class: "error", role: "alert" }, t("error", { message: errorText(err) })),
        h("a", { class: "button", href: "#/" }, t("back_to_lobby")),
      );
      return;
    }
    if (!token && !spectate && !g.accountSeat) g.accountSeat = await findAccountSeat();
    if (table.status === "lobby") {
      renderWaiting();
      pollTimer = window.setTimeout(enter, 1200);
      return;
    }
    buildTable();
    renderRecording();
    connect();
  }

  // -- WebSocket -------------------------------------------------------------------------
  function connect() {
    if (g.closed) return;
    setConn(g.retry ? t("reconnecting") : t("connecting"), "busy");
    const proto = location.protocol === "https:" ? "wss" : "ws";
    // The game in the URL lets a server of several workers hand the socket to the game's
    // owner before answering (docs/scaling.md); the hello below is what counts.
    const ws = new WebSocket(`${proto}://${location.host}/ws?game=${encodeURIComponent(gameId)}`);
    g.ws = ws;
    ws.addEventListener("open", () => {
      // batch: what the server has for us at once comes as one frame (docs/protocol.md).
      const hello = { type: "hello", game: gameId, lang: lang(), after: g.lastSeq, batch: true };
      if (token) hello.token = token;
      else if (g.accountSeat) hello.account = true;
      else hello.spectate = true;
      ws.send(JSON.stringify(hello));
    });
    ws.addEventListener("message", (msg) => {
      // A socket given up on (silent too long) may still deliver what it had queued; the
      // answers it would need go to the new socket, so it is heard no more.
      if (g.ws !== ws) return;
      g.lastHeard = Date.now();
      onMessage(JSON.parse(msg.data));
    });
    ws.addEventListener("close", () => socketLost(ws));
    startHeartbeat(ws);
  }

  // -- heartbeat and reconnect -------------------------------------------------------------
  const PING_EVERY_MS = 3000;
  const SILENCE_MS = 8000; // no frame (not even a pong) for this long: the socket is dead

  function startHeartbeat(ws) {
    window.clearInterval(heartbeatTimer);
    g.lastHeard = Date.now();
    heartbeatTimer = window.setInterval(() => {
      if (g.ws !== ws) return;
      if (Date.now() - g.lastHeard > SILENCE_MS) {
        // A half-open socket may take minutes to report its close: give up on it now.
        socketLost(ws);
        try {
          ws.close();
        } catch {
          /* already closing */
        }
        return;
      }
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "ping" }));
    }, PING_EVERY_MS);
  }

  function socketLost(ws) {
    if (g.closed || g.ws !== ws) return;
    g.ws = null;
    voice?.detach();
    window.clearInterval(heartbeatTimer);
    g.retry += 1;
    setConn(t("reconnecting"), "down");
    renderOutbox();
    const wait = Math.max(Math.min(5000, 400 * g.retry), (g.holdUntil || 0) - Date.now());
    reconnectTimer = window.setTimeout(connect, wait);
  }

  const MAX_PENDING = 20;

  function newCid() {
    const bytes = crypto.getRandomValues(new Uint8Array(12));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // -- moves: queued while offline, sent, then confirmed or refused ----------------------
  // Every move gets a client id and a line in the outbox (#outbox) that shows its state:
  // "queued" (no connection), "sent", "confirmed" (ack) or "refused" (error with its cid).
  // Queued and sent moves are (re)sent after the next welcome; the server never applies a
  // cid twice (docs/protocol.md), so a resend is safe.
  const SHOW_DONE_MS = 4000;
  const REMATCH_POLL_MS = 3000;

  function send(command) {
    const message = { type: "command", id: g.nextId++, cid: newCid(), command };
    const move = { message, label: describeMove(command), state: "queued", note: "" };
    g.pending.set(message.cid, move);
    if (g.pending.size > MAX_PENDING) g.pending.delete(g.pending.keys().next().value);
    if (g.ws && g.ws.readyState === WebSocket.OPEN) {
      g.ws.send(JSON.stringify(message));
      move.state = "sent";
    }
    renderOutbox();
  }

  function resendPending() {
    for (const move of g.pending.values()) {
      if (move.state !== "queued" && move.state !== "sent") continue;
      g.ws.send(JSON.stringify(move.message));
      move.state = "sent";
    }
    renderOutbox();
  }

  function settleMove(cid, state, note) {
    const move = g.pending.get(cid);
    if (!move) return;
    move.state = state;
    move.note = note || "";
    if (state === "refused") forgetChoice(move.message.command);
    renderOutbox();
    window.setTimeout(() => {
      if (g.pending.get(cid) === move) {
        g.pending.delete(cid);
        renderOutbox();
      }
    }, SHOW_DONE_MS);
  }

  function describeMove(cmd) {
    if (cmd.type === "Say") return `${t("move_say")}: ${cmd.text}`;
    const what = groupLabel(groupKeyOf(cmd));
    const target = cmd.target ?? cmd.callee;
    return target === undefined ? what : `${what}: ${targetText(cmd)}`;
  }

  function renderOutbox() {
    if (!el.outbox) return;
    const moves = [...g.pending.values()];
    el.outbox.hidden = moves.length === 0;
    replaceChildren(
      el.outbox,
      moves.map((move) =>
        h(
          "li",
          { class: "move move-" + move.state, dataset: { cid: move.message.cid, state: move.state, type: move.message.command.type } },
          h("span", { class: "move-label" }, move.label),
          h("span", { class: "move-state" }, t("move_" + move.state)),
          move.note ? h("span", { class: "move-note" }, move.note) : null,
        ),
      ),
    );
  }

  // The target a player chose stays highlighted until the phase changes or it is refused.
  function choose(groupKey, target, cmd) {
    g.chosen.set(groupKey, target);
    send(cmd);
    renderActions();
  }

  function forgetChoice(cmd) {
    g.chosen.delete(groupKeyOf(cmd));
    if (g.view && el.actions) renderActions();
  }

  function keepChoicesFor(view) {
    if (g.chosenSeq !== view.phase_seq) {
      g.chosen.clear();
      g.chosenSeq = view.phase_seq;
    }
  }

  function onMessage(msg) {
    switch (msg.type) {
      case "batch":
        for (const inner of msg.messages) onMessage(inner);
        break;
      case "welcome":
        g.retry = 0;
        g.seat = msg.seat;
        setRecording(null); // a notice in force follows the welcome (docs/protocol.md)
        // The log since `after` follows; the view that answers this sync comes after it, so
        // until then events are history: shown, but not announced or rung again.
        g.catchingUp = true;
        root.dataset.live = "false";
        g.ws.send(JSON.stringify({ type: "sync" }));
        resendPending(); // same cid: the server answers, it does not apply them twice
        setConn(t("connected"), "up");
        setView(msg.view);
        voice?.attach(g.ws, msg);
        break;
      case "ack":
        settleMove(msg.cid, "confirmed");
        break;
      case "pong":
        break;
      case "view":
        g.catchingUp = false;
        root.dataset.live = "true"; // news from now on is announced and rung (tests wait for it)
        setView(msg.view);
        break;
      case "event":
        onEvent(msg);
        break;
      case "side_chat":
        appendSideChat(msg);
        break;
      case "recording":
        setRecording(msg.active ? msg : null);
        if (msg.text) announce(msg.text);
        break;
      case "error":
        onError(msg);
        break;
      default:
        voice?.onMessage(msg);
        break;
    }
  }

  // Errors show the catalogue's sentence for their code in the page's language; a rule
  // refusal (no sentence of its own) arrives rendered in this language already.
  function onError(msg) {
    const text = errorText(msg, msg.message);
    if (msg.cid) settleMove(msg.cid, "refused", text);
    if (msg.code === "not_running" || msg.code === "bad_token" || msg.code === "no_account_seat") {
      setConn(text, "down");
      g.closed = true;
    } else if (msg.code === "too_many_connections") {
      setConn(text, "down"); // the server closes; we retry with the usual back-off
    }
    showAlert(text);
  }

  function onEvent(ev) {
    if (ev.seq <= g.lastSeq) return;
    g.lastSeq = ev.seq;
    g.events.push(ev);
    const live = g.view !== null && !g.catchingUp;
    if (ev.code === "chat") {
      g.chat.push(ev);
      appendChat(ev);
      return;
    }
    appendLog(ev);
    if (ev.code === "phase_started" && live) {
      g.deadline = Date.now() + Number(ev.params.seconds || 0) * 1000;
      g.clockSeq = ev.params.seq;
    }
    if (live && ALERT_CODES.has(ev.code)) announce(ev.text);
    if (live) momentFor(ev);
    if (live && RING_ENDS.has(ev.code)) tones.stop("ringing", "incoming_ring");
    if (live && TONE_OF[ev.code]) tones.play(TONE_OF[ev.code]);
  }

  function setView(view) {
    const phaseChanged = !g.view || g.view.phase_seq !== view.phase_seq;
    g.view = view;
    keepChoicesFor(view);
    if (phaseChanged && g.clockSeq !== view.phase_seq) syncClock();
    if (phaseChanged && g.table && g.table.players.some((p) => p.house === null)) {
      loadTable().then(render).catch(() => {});
    }
    render();
  }

  async function syncClock() {
    try {
      const clock = await api(`/api/games/${gameId}/clock`);
      if (clock.remaining !== null && clock.phase_seq === g.view?.phase_seq) {
        g.deadline = Date.now() + clock.remaining * 1000;
        g.clockSeq = clock.phase_seq;
      }
    } catch {
      g.deadline = null;
    }
    renderTimer();
  }

  // -- table skeleton --------------------------------------------------------------------
  const el = {};
  function buildTable() {
    const n = worldNames();
    el.phase = h("span", { class: "phase-name", id: "phase-name" });
    el.timer = h("span", { class: "timer", role: "timer", "aria-live": "off", id: "timer", "aria-label": t("time_left") });
    el.conn = h("span", { class: "conn", id: "conn", role: "status" });
    el.seats = h("ol", { class: "seats", id: "seats", "aria-label": t("seats") });
    el.role = h("section", { class: "card role-card", id: "role-card", "aria-labelledby": "role-h" });
    el.actions = h("section", { class: "card actions", id: "actions", "aria-labelledby": "actions-h" });
    el.nightRoom = h("section", { class: "card night-room", id: "night-room", "aria-labelledby": "nr-h", hidden: true });
    el.call = h("section", { class: "card call", id: "call-panel", "aria-labelledby": "call-h" });
    el.over = h("section", { class: "card over", id: "over", "aria-labelledby": "over-h", hidden: true });
    el.alert = h("p", { class: "alert", id: "alert", role: "alert" });
    el.recording = h("p", { class: "recording-mark", id: "recording-mark", role: "status", hidden: true });
    // The banner lets clicks through to the table under it (a vote must never wait for it);
    // only its close button takes a click.
    el.moment = h("div", { class: "moment", id: "moment", hidden: true });
    el.momentLive = h("p", { class: "sr-only", id: "moment-live", "aria-live": "polite" });
    el.sound = soundButton();
    el.notify = notifyButton();
    el.outbox = h("ol", { class: "outbox plain", id: "outbox", "aria-label": t("moves"), hidden: true });
    // A list that is also a polite live region; focusable, so the keyboard can scroll it.
    el.chatList = h("ol", { class: "chat-list", id: "chat-list", tabindex: 0, "aria-live": "polite", "aria-label": t("chat") });
    el.chatRoom = h("span", { class: "chat-room", id: "chat-room" });
    el.chatInput = h("input", { id: "chat-input", name: "text", maxlength: 500, autocomplete: "off", "aria-label": t("chat_input") });
    el.chatForm = h(
      "form",
      {
        class: "chat-form",
        id: "chat-form",
        onsubmit: (ev) => {
          ev.preventDefault();
          const text = el.chatInput.value.trim();
          if (!text) return;
          send({ type: "Say", text });
          el.chatInput.value = "";
        },
      },
      el.chatInput,
      h("button", { type: "submit", id: "chat-send" }, t("send")),
    );
    el.log = h("ol", { class: "log-list", id: "log", tabindex: 0, "aria-live": "polite", "aria-label": t("log") });
    el.tools = h("div", { class: "tools", id: "tools" });
    el.operatorDialog = operatorDialog();
    voice = createVoice({ seatsList: el.seats, nightRoomName: () => g.text?.night_room, isPlayer: () => Boolean(token) });

    root.replaceChildren(
      h(
        "header",
        { class: "game-head" },
        h(
          "div",
          { class: "where" },
          h("h1", {}, n ? `${n.world} · ${n.place}` : gameId),
          h("p", { class: "phase-line" }, el.phase, el.timer),
        ),
        h("div", { class: "head-tools" }, el.sound, el.notify, el.conn),
      ),
      el.recording,
      el.moment,
      el.momentLive,
      el.alert,
      el.outbox,
      phoneTabs(),
      h(
        "div",
        { class: "board", dataset: { tab: g.tab } },
        h(
          "section",
          { class: "card seats-card", "aria-labelledby": "seats-h", id: "tab-table", dataset: { tab: "table" } },
          h("h2", { id: "seats-h" }, t("seats")),
          h("div", { class: "circle-wrap" }, el.seats),
        ),
        h("div", { class: "side", id: "tab-act", dataset: { tab: "act" } }, voice.element, tones.element, el.over, el.role, el.actions, el.nightRoom, el.call),
        h(
          "section",
          { class: "card talk", "aria-labelledby": "chat-h", id: "tab-talk", dataset: { tab: "talk" } },
          h("h2", { id: "chat-h" }, t("chat"), " ", el.chatRoom),
          el.chatList,
          el.chatForm,
          h("h2", { id: "log-h" }, t("log")),
          el.log,
        ),
      ),
      el.tools,
      el.operatorDialog,
    );
    tickTimer = window.setInterval(renderTimer, 250);
  }

  // -- phone layout: three tabs (Tisch / Handeln / Gespräch) --------------------------------
  // On a narrow screen the board shows one of its three parts; the tab bar stays under the
  // sticky phase bar. On a wide screen the bar is hidden and all three show side by side.
  const TABS = [["table", "tab_table"], ["act", "tab_act"], ["talk", "tab_talk"]];

  function phoneTabs() {
    if (!g.tab) g.tab = "table";
    const bar = h("div", { class: "phone-tabs", id: "phone-tabs", role: "tablist", "aria-label": t("tabs") });
    const select = (tab) => {
      g.tab = tab;
      root.querySelector(".board").dataset.tab = tab;
      for (const button of bar.querySelectorAll("button")) {
        const on = button.dataset.tab === tab;
        button.setAttribute("aria-selected", on ? "true" : "false");
        button.tabIndex = on ? 0 : -1;
      }
    };
    for (const [tab, key] of TABS) {
      bar.append(
        h(
          "button",
          {
            type: "button",
            role: "tab",
            id: "tab-button-" + tab,
            "aria-controls": "tab-" + tab,
            "aria-selected": tab === g.tab ? "true" : "false",
            tabindex: tab === g.tab ? 0 : -1,
            dataset: { tab },
            onclick: () => select(tab),
            onkeydown: (ev) => {
              const index = TABS.findIndex(([name]) => name === tab);
              const step = ev.key === "ArrowRight" ? 1 : ev.key === "ArrowLeft" ? -1 : 0;
              if (!step) return;
              const next = TABS[(index + step + TABS.length) % TABS.length][0];
              select(next);
              bar.querySelector(`[data-tab="${next}"]`).focus();
            },
          },
          t(key),
        ),
      );
    }
    return bar;
  }

  // -- click a house on the circle to target it --------------------------------------------
  // The first action group that offers this house (night ability, nomination, vote, call)
  // takes the click, exactly as its button in "Handeln" would.
  function seatCommand(seat) {
    const groups = groupLegal();
    const order = [...ABILITY_ORDER.map((k) => "ability:" + k), "Nominate", "Vote", "PlaceCall"];
    for (const key of groups.keys()) if (!order.includes(key)) order.push(key);
    for (const key of order) {
      const cmd = (groups.get(key) || []).find(
        (c) => (c.target ?? c.callee) === seat && (c.second === undefined || c.second === null) && c.kind !== "take_card",
      );
      if (cmd) return { key, cmd };
    }
    return null;
  }

  function seatTarget(seat) {
    const found = seatCommand(seat);
    if (!found) return null;
    const label = groupLabel(found.key);
    return h(
      "button",
      {
        type: "button",
        class: "seat-target",
        dataset: { key: "seat-" + seat, target: String(seat) },
        "aria-label": `${label}: ${houseLong(seat)}`,
        onclick: (ev) => {
          ev.stopPropagation();
          choose(found.key, seat, found.cmd);
        },
      },
      "◎",
    );
  }

  // -- rendering -------------------------------------------------------------------------
  function render() {
    if (!g.view || !el.seats) return;
    const view = g.view;
    root.dataset.phase = view.phase;
    root.dataset.ruleset = rulesetId();
    root.dataset.stage = view.stage || view.phase;
    document.documentElement.dataset.phase = view.phase;
    // A rule set with stages (the mayor rules) names the stage; a night with steps its step.
    const phaseKey = "phase_" + (view.stage || view.phase);
    // Only a step with a name of its own is shown (the standard "main" night step has none).
    const stepKey = "step_" + view.step;
    const step = view.phase === "night" && view.step && t(stepKey) !== stepKey ? ` (${t(stepKey)})` : "";
    el.phase.textContent = `${t(phaseKey)}${step} · ${t("round", { n: view.round })}`;
    renderSeats();
    renderRole();
    renderActions();
    renderNightRoom();
    renderCall();
    renderChatRoom();
    renderTools();
    renderOver();
    renderTimer();
    renderTitle();
  }

  // -- moments: night/day, deaths with roles, banishment, game over -------------------------
  // A full-width banner (one moment at a time, each shown a little while), a short sound that
  // can be switched off, and a polite live line for screen readers. Only live events make
  // moments: history after a reload is shown in the log but not announced again.
  const MOMENT_MS = 3500;
  const moments = [];
  let momentTimer = null;

  function momentKind(ev) {
    const p = ev.params || {};
    if (ev.code === "phase_started" && ["night", "day", "vote"].includes(p.phase)) return p.phase;
    if (ev.code === "morning_report") return (p.dead || []).length ? "death" : "quiet_night";
    if (ev.code === "shot_fired" || ev.code === "night_victim") return "death";
    if (ev.code === "night_quiet") return "quiet_night";
    if (ev.code === "imprisoned") return "banished";
    if (ev.code === "vote_result") return p.banished !== null && p.banished !== undefined ? "banished" : "no_banishment";
    if (ev.code === "game_over") return "over";
    return null;
  }

  function personalResult(ev) {
    if (g.seat === null || g.seat === undefined) return t("moment_over");
    return (ev.params.winners || []).includes(g.seat) ? t("you_won") : t("you_lost");
  }

  function momentFor(ev) {
    const kind = momentKind(ev);
    if (!kind) return;
    const title = kind === "over" ? personalResult(ev) : t("moment_" + kind);
    moments.push({ kind, title, text: ev.text });
    if (!momentTimer) nextMoment();
  }

  function nextMoment() {
    window.clearTimeout(momentTimer);
    momentTimer = null;
    const moment = moments.shift();
    if (!moment) {
      el.moment.hidden = true;
      return;
    }
    el.moment.dataset.kind = moment.kind;
    el.moment.replaceChildren(
      h("strong", { class: "moment-title", id: "moment-title" }, moment.title),
      h("span", { class: "moment-text" }, moment.text),
      h(
        "button",
        { type: "button", class: "moment-close", "aria-label": t("moment_close"), onclick: () => nextMoment() },
        "×",
      ),
    );
    el.moment.hidden = false;
    el.momentLive.textContent = `${moment.title}. ${moment.text}`;
    chime(moment.kind);
    momentTimer = window.setTimeout(nextMoment, moment.kind === "over" ? MOMENT_MS * 3 : MOMENT_MS);
  }

  const soundOn = () => localStorage.getItem("vollmond.sound") !== "off";

  function soundButton() {
    const button = h("button", { type: "button", class: "ghost sound", id: "sound-toggle", dataset: { key: "sound" } });
    const show = () => {
      button.textContent = soundOn() ? t("sound_on") : t("sound_off");
      button.setAttribute("aria-pressed", soundOn() ? "true" : "false");
    };
    button.addEventListener("click", () => {
      localStorage.setItem("vollmond.sound", soundOn() ? "off" : "on");
      show();
    });
    show();
    return button;
  }

  const CHIMES = { night: 220, day: 523, vote: 392, death: 196, banished: 247, over: 659 };

  // One audio context for the page's chimes, suspended between them: a context renders (a
  // thread, a buffer every few milliseconds) for as long as it is open, so one per chime, never
  // closed, kept a phone working for every chime of the game.
  let chimeAudio = null;
  let chiming = 0;

  function chime(kind) {
    if (!soundOn() || !CHIMES[kind]) return;
    try {
      chimeAudio ??= new AudioContext();
      const audio = chimeAudio;
      if (audio.state === "suspended") audio.resume().catch(() => {});
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = CHIMES[kind];
      gain.gain.value = 0.04;
      osc.connect(gain).connect(audio.destination);
      chiming += 1;
      osc.onended = () => {
        chiming -= 1;
        if (chiming === 0) audio.suspend().catch(() => {});
      };
      osc.start();
      osc.stop(audio.currentTime + 0.25);
    } catch {
      /* no audio */
    }
  }

  // The tab title says when this seat has something to do (a vote, a night action, a call).
  const BASE_TITLE = document.title;
  const PASSIVE = new Set(["Say", "Leave", "Interject", "ToggleCallMode", "HangUp"]);

  function renderTitle() {
    const legal = g.view?.me?.legal || [];
    const yourTurn = g.view?.phase !== "over" && legal.some((cmd) => !PASSIVE.has(cmd.type));
    if (!g.flashTimer) document.title = yourTurn ? turnTitle() : BASE_TITLE;
    root.dataset.yourTurn = String(yourTurn);
    if (!yourTurn) stopFlash();
    else if (g.turnSeq !== g.view.phase_seq && !g.catchingUp) {
      g.turnSeq = g.view.phase_seq; // once per phase: a new turn, not every redraw
      if (document.hidden) callAttention();
    }
  }

  function turnTitle() {
    return `▶ ${t("your_turn")} · ${BASE_TITLE}`;
  }

  // Notifications (issue 12): when the tab is hidden and a turn begins (a night action, a
  // vote), the title flashes until the tab is seen again, and a system notification shows
  // if the player switched them on (the browser asks for permission on that click).
  const NOTIFY_KEY = "vollmond.notify";
  const FLASH_MS = 1000;
  const canNotify = () => "Notification" in window;
  const notifyOn = () => canNotify() && localStorage.getItem(NOTIFY_KEY) === "on" && Notification.permission === "granted";

  function callAttention() {
    stopFlash();
    let on = false;
    root.dataset.flashing = "true";
    g.flashTimer = window.setInterval(() => {
      on = !on;
      document.title = on ? `🔔 ${t("your_turn")}` : turnTitle();
    }, FLASH_MS);
    if (!notifyOn()) return;
    try {
      const note = new Notification(t("your_turn"), { body: t("notify_body", { phase: t("phase_" + g.view.phase) }), tag: "vollmond-" + gameId });
      note.onclick = () => {
        window.focus();
        note.close();
      };
    } catch {
      /* the browser refused (e.g. only from a service worker): the title still flashes */
    }
  }

  function stopFlash() {
    if (!g.flashTimer) return;
    window.clearInterval(g.flashTimer);
    g.flashTimer = null;
    delete root.dataset.flashing;
    renderTitle();
  }

  function onVisibility() {
    if (!document.hidden) stopFlash();
  }
  document.addEventListener("visibilitychange", onVisibility);

  function notifyButton() {
    const button = h("button", { type: "button", class: "ghost notify", id: "notify-toggle", dataset: { key: "notify" }, hidden: !canNotify() || spectate });
    const show = () => {
      button.textContent = notifyOn() ? t("notify_on") : t("notify_off");
      button.setAttribute("aria-pressed", notifyOn() ? "true" : "false");
    };
    button.addEventListener("click", async () => {
      if (notifyOn()) {
        localStorage.setItem(NOTIFY_KEY, "off");
      } else {
        const permission = await Notification.requestPermission();
        localStorage.setItem(NOTIFY_KEY, permission === "granted" ? "on" : "off");
        if (permission !== "granted") showAlert(t("notify_denied"));
      }
      show();
    });
    show();
    return button;
  }

  function renderTimer() {
    if (!el.timer) return;
    if (!g.deadline || !g.view || g.view.phase === "over") {
      el.timer.textContent = "";
      return;
    }
    const left = Math.max(0, Math.round((g.deadline - Date.now()) / 1000));
    const text = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    if (el.timer.textContent !== text) {
      el.timer.textContent = text;
      el.timer.dataset.seconds = String(left);
      el.timer.classList.toggle("low", left <= 10);
    }
  }

  function renderSeats() {
    const view = g.view;
    const me = view.me;
    const partners = new Set(teamOf(me));
    const lovers = new Set(loversOf(me));
    const team = new Set(view.night_room?.members || []);
    const nominees = new Set(view.day?.nominees || view.trial?.accused || view.ballot?.candidates || []);
    const voted = new Set(view.day?.voted || view.ballot?.voted || []);
    const count = view.seats.length;
    const items = view.seats.map((s, index) => {
      const isMe = s.seat === g.seat;
      const badges = [];
      if (isMe) badges.push(t("you"));
      if (s.lover || lovers.has(s.seat)) badges.push(t("lover"));
      if (s.captain) badges.push(t("captain"));
      if (s.mayor) badges.push(t("mayor"));
      if (s.status === "imprisoned") badges.push(t("imprisoned"));
      if (partners.has(s.seat)) badges.push(t("partner"));
      if (team.has(s.seat) && !isMe) badges.push(t("teammate"));
      if (nominees.has(s.seat)) badges.push(t("nominated"));
      if (voted.has(s.seat)) badges.push(t("has_voted"));
      const byDay = ["morning", "day", "vote"].includes(view.phase);
      const away = byDay && s.alive && s.present === false;
      if (away) badges.push(t("away"));
      const label = [
        houseLong(s.seat),
        s.alive ? t("alive") : t("dead"),
        s.role ? roleName(s.role) : null,
        ...badges,
      ].filter(Boolean).join(", ");
      return h(
        "li",
        {
          class: ["seat", s.alive ? "alive" : "dead", isMe ? "me" : "", nominees.has(s.seat) ? "nominee" : "", s.present ? "present" : "", away ? "away" : ""].join(" "),
          style: { "--i": index, "--n": count },
          dataset: { seat: s.seat, role: s.role || "", alive: String(s.alive) },
          "aria-label": label,
          onclick: () => root.querySelector(`.seat[data-seat="${s.seat}"] .seat-target`)?.click(),
        },
        seatTarget(s.seat),
        h("span", { class: "house", "aria-hidden": "true" }, String(s.seat)),
        h("span", { class: "seat-name", "aria-hidden": "true" }, nameOf(s.seat) || "—"),
        s.role ? h("span", { class: "seat-role", "aria-hidden": "true" }, roleName(s.role)) : null,
        h("span", { class: "seat-state", "aria-hidden": "true" }, s.alive ? "" : "✝", s.lover || lovers.has(s.seat) ? " ♥" : "", s.captain || s.mayor ? " ★" : "", away ? " ☎" : "", nominees.has(s.seat) ? " ⚖" : "", voted.has(s.seat) ? " ✓" : ""),
      );
    });
    replaceChildrenIfChanged(el.seats, g.view.me?.legal, items);
    el.seats.style.setProperty("--n", count);
  }

  function renderRole() {
    const me = g.view.me;
    if (!me) {
      replaceChildren(el.role, h("h2", { id: "role-h" }, t("spectator")));
      return;
    }
    // A standard fact says evil or not; a classic one answers its question (wolf, seer, awake).
    const facts = (me.facts || []).map((f) =>
      "answer" in f
        ? h(
            "li",
            { class: f.answer ? "evil" : "good" },
            t("fact_" + f.kind, { target: houseLabel(f.subject), answer: t(f.answer ? "answer_yes" : "answer_no") }),
          )
        : h(
            "li",
            { class: f.evil ? "evil" : "good" },
            t(f.evil ? "fact_evil" : "fact_good", { target: houseLabel(f.subject) }),
            f.kind === "medium" ? " " + t("fact_medium", { round: f.round }) : "",
          ),
    );
    const partners = teamOf(me);
    const inLove = loversOf(me).includes(me.seat) || g.view.seats.find((s) => s.seat === me.seat)?.lover;
    const memory = Object.entries(me.memory || {})
      .filter(([key]) => MEMORY_LABELS[key])
      .map(([key, value]) => h("li", {}, `${t(MEMORY_LABELS[key])}: ${value}`));
    replaceChildren(
      el.role,
      h("h2", { id: "role-h" }, t("your_role"), ": ", h("strong", { id: "my-role", dataset: { role: me.role } }, roleName(me.role))),
      h("p", { class: "muted", id: "my-seat" }, houseLong(me.seat), " · ", me.alive ?? me.status === "alive" ? t("alive") : t("dead")),
      h("p", { class: "help", id: "role-help" }, g.text?.help?.[me.role] || ""),
      memory.length ? h("ul", { class: "plain memory" }, memory) : null,
      partners.length ? h("p", { id: "my-team" }, t("partners", { list: partners.map(houseLabel).join(", ") })) : null,
      inLove ? h("p", { class: "help lovers" }, "♥ ", g.text?.help?.lovers || loversOf(me).map(houseLabel).join(" ♥ ")) : null,
      g.view.witch_victim !== null && g.view.witch_victim !== undefined
        ? h("p", { class: "victim", id: "witch-victim" }, t("witch_victim", { target: houseLabel(g.view.witch_victim) }))
        : null,
      facts.length ? h("div", {}, h("h3", {}, t("facts")), h("ul", { class: "plain facts", id: "facts" }, facts)) : null,
    );
  }

  function groupLegal() {
    const groups = new Map();
    for (const cmd of g.view.me?.legal || []) {
      const key = groupKeyOf(cmd);
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(cmd);
    }
    return groups;
  }

  // A group's heading: a night ability by its kind, a move by its type (any rule set).
  function groupLabel(groupKey) {
    const [type, kind] = groupKey.split(":");
    if (kind) return t("act_" + kind);
    if (MOVE_LABELS[type]) return t(MOVE_LABELS[type]);
    return t("cmd_" + type);
  }

  // What one command's button says: a house, two houses (Amor), a card (the thief), yes or
  // no (a candidacy), nobody or abstain.
  function targetText(cmd) {
    if ("stand" in cmd) return t(cmd.stand ? "stand_yes" : "stand_no");
    const target = cmd.target ?? cmd.callee;
    if (cmd.kind === "take_card") {
      const card = g.view.me?.cards?.[target - 1];
      return t("card_n", { n: target, role: roleName(card) });
    }
    if (cmd.second !== undefined && cmd.second !== null) return `${houseLabel(target)} + ${houseLabel(cmd.second)}`;
    if (target === undefined) return groupLabel(groupKeyOf(cmd));
    if (target === null) return cmd.type === "Vote" ? t("abstain") : t("nobody");
    return houseLabel(target);
  }

  // The value a button stands for, as its data-target shows it ("none" for nobody).
  function targetValue(cmd) {
    if ("stand" in cmd) return cmd.stand ? "yes" : "no";
    const target = cmd.target ?? cmd.callee;
    if (target === undefined || target === null) return "none";
    if (cmd.second !== undefined && cmd.second !== null) return `${target}+${cmd.second}`;
    return String(target);
  }

  function commandButtons(groupKey, cmds) {
    const label = groupLabel(groupKey);
    const headingId = "grp-" + groupKey.replace(/[^a-z_]/gi, "-");
    return h(
      "div",
      { class: "group", role: "group", "aria-labelledby": headingId, dataset: { group: groupKey } },
      h("h3", { id: headingId }, label),
      h(
        "div",
        { class: "targets" },
        cmds.map((cmd) => {
          const value = targetValue(cmd);
          const text = targetText(cmd);
          // A house picked on the circle is kept as a number, a button's choice as its value.
          const chosen = g.chosen.has(groupKey) && String(g.chosen.get(groupKey)) === value;
          const target = cmd.target ?? cmd.callee;
          return h(
            "button",
            {
              type: "button",
              class: (value === "none" ? "target none" : "target") + (chosen ? " chosen" : ""),
              "aria-pressed": chosen ? "true" : "false",
              dataset: { key: `${groupKey}:${value}`, target: value },
              "aria-label": `${label}: ${typeof target === "number" && cmd.kind !== "take_card" && cmd.second == null ? houseLong(target) : text}`,
              onclick: () => choose(groupKey, value, cmd),
            },
            text,
          );
        }),
      ),
    );
  }

  function targetButtons(groupKey, label, cmds, targetOf) {
    const headingId = "grp-" + groupKey.replace(/[^a-z_]/gi, "-");
    return h(
      "div",
      { class: "group", role: "group", "aria-labelledby": headingId, dataset: { group: groupKey } },
      h("h3", { id: headingId }, label),
      h(
        "div",
        { class: "targets" },
        cmds.map((cmd) => {
          const target = targetOf(cmd);
          const text = target === null ? (groupKey === "Vote" ? t("abstain") : t("nobody")) : houseLabel(target);
          const chosen = g.chosen.has(groupKey) && g.chosen.get(groupKey) === target;
          return h(
            "button",
            {
              type: "button",
              class: (target === null ? "target none" : "target") + (chosen ? " chosen" : ""),
              "aria-pressed": chosen ? "true" : "false",
              dataset: { key: `${groupKey}:${target}`, target: target === null ? "none" : String(target) },
              "aria-label": `${label}: ${target === null ? text : houseLong(target)}`,
              onclick: () => choose(groupKey, target, cmd),
            },
            text,
          );
        }),
      ),
    );
  }

  function renderActions() {
    const groups = groupLegal();
    const parts = [];
    for (const kind of ABILITY_ORDER) {
      const cmds = groups.get("ability:" + kind);
      if (cmds) parts.push(targetButtons("ability:" + kind, t("act_" + kind), cmds, (c) => c.target));
    }
    if (groups.has("Nominate")) parts.push(targetButtons("Nominate", t("act_nominate"), groups.get("Nominate"), (c) => c.target));
    // Every other legal command, of any rule set, in the order the rule set lists them.
    const shown = new Set([...ABILITY_ORDER.map((k) => "ability:" + k), "Nominate"]);
    for (const [key, cmds] of groups) {
      const type = key.split(":")[0];
      if (shown.has(key) || NOT_ACTIONS.has(type)) continue;
      parts.push(commandButtons(key, cmds));
    }
    const day = g.view.day;
    const dayInfo = publicInfo();
    if (day && Object.keys(day.nominations).length) {
      dayInfo.push(
        h(
          "ul",
          { class: "plain nominations", id: "nominations" },
          Object.entries(day.nominations).map(([by, nominee]) => h("li", {}, `${houseLabel(Number(by))} → ${houseLabel(nominee)}`)),
        ),
      );
    }
    if (day && g.view.phase === "vote" && day.waiting_for?.length) {
      dayInfo.push(h("p", { class: "muted" }, "⏳ ", day.waiting_for.map(houseLabel).join(", ")));
    }
    replaceChildrenIfChanged(
      el.actions,
      g.view.me?.legal,
      h("h2", { id: "actions-h" }, t("actions")),
      parts.length ? parts : h("p", { class: "muted", id: "no-actions" }, g.view.me ? t("no_actions") : t("spectator")),
      dayInfo,
    );
  }

  // What everyone at the table may see of a rule set's public state: the speaker, who is on
  // the ballot or accused, who has not voted yet, the open votes of an election or a day.
  function publicInfo() {
    const view = g.view;
    const out = [];
    const list = (seats) => seats.map(houseLabel).join(", ");
    if (view.floor?.speaker != null) out.push(h("p", { id: "speaker" }, t("speaker", { who: houseLabel(view.floor.speaker) })));
    if (view.ballot?.candidates?.length) out.push(h("p", { id: "ballot" }, t("candidates", { list: list(view.ballot.candidates) })));
    if (view.trial?.accused?.length) out.push(h("p", { id: "accused" }, t("accused_list", { list: list(view.trial.accused) })));
    if (view.ballot?.waiting_for?.length) out.push(h("p", { class: "muted" }, "⏳ ", list(view.ballot.waiting_for)));
    if (view.election?.candidates?.length && !view.ballot) {
      out.push(h("p", { id: "candidates" }, t("candidates", { list: list(view.election.candidates) })));
    }
    // Open votes (the classic captain's election and day vote): voter → target, by house.
    const votes = Object.entries((view.phase === "election" ? view.election : view.day_votes) || {}).filter(
      ([by, target]) => /^\d+$/.test(by) && (target === null || typeof target === "number"),
    );
    if (votes.length) {
      out.push(
        h(
          "ul",
          { class: "plain nominations", id: "open-votes" },
          votes.map(([by, target]) => h("li", {}, `${houseLabel(Number(by))} → ${houseLabel(target)}`)),
        ),
      );
    }
    return out;
  }

  // The night room of any rule set: the standard and mayor views name it; the classic view
  // gives its members the wolves' circle, their votes and the victim.
  function nightRoomOf(view) {
    if (view.night_room) return view.night_room;
    const me = view.me;
    if (view.phase !== "night" || !me?.wolves_room?.length || !me.alive) return null;
    return { members: me.wolves_room, votes: me.wolf_votes || {}, victim: me.victim, victim_locked: me.victim != null };
  }

  function renderNightRoom() {
    const room = nightRoomOf(g.view);
    el.nightRoom.hidden = !room;
    if (!room) {
      el.nightRoom.replaceChildren();
      return;
    }
    const tally = new Map();
    const votes = room.votes || room.choices || {};
    for (const target of Object.values(votes)) tally.set(target, (tally.get(target) || 0) + 1);
    const title = g.text?.night_room || t("night_room");
    // Unchanged, left alone: a screen reader would read the live tally out again.
    replaceChildrenIfChanged(
      el.nightRoom,
      null,
      h("h2", { id: "nr-h" }, title),
      h("p", {}, `${t("night_room_members")}: `, room.members.map(houseLabel).join(", ")),
      h("h3", {}, t("night_room_votes")),
      Object.keys(votes).length
        ? h(
            "ul",
            { class: "plain", id: "night-votes" },
            Object.entries(votes).map(([voter, target]) => h("li", {}, t("voted_for", { voter: houseLabel(Number(voter)), target: houseLabel(target) }))),
          )
        : h("p", { class: "muted" }, t("night_room_no_votes")),
      tally.size
        ? h(
            "p",
            { id: "night-tally", "aria-live": "polite" },
            `${t("night_room_tally")}: `,
            [...tally.entries()].sort((a, b) => b[1] - a[1]).map(([target, n]) => `${houseLabel(target)} ×${n}`).join(" · "),
          )
        : null,
      room.victim_locked ? h("p", { class: "victim", id: "night-victim" }, t("night_room_victim", { target: houseLabel(room.victim) })) : null,
    );
  }

  function renderCall() {
    const me = g.view.me;
    const groups = groupLegal();
    const call = me?.call;
    const parts = [h("h2", { id: "call-h" }, t("call"))];
    el.call.classList.toggle("ringing", Boolean(call && call.status === "ringing" && call.incoming));
    if (call) {
      const who = houseLabel(call.with);
      let status;
      if (call.status === "ringing") status = call.incoming ? t("call_ringing_in", { who }) : t("call_ringing_out", { who });
      else status = call.kind === "seance" ? t("call_seance", { who }) : t("call_active", { who });
      parts.push(h("p", { class: "call-status", id: "call-status", dataset: { status: call.status, incoming: String(call.incoming) } }, status));
      if (call.status === "active") {
        parts.push(h("p", { class: "muted", id: "call-mode" }, t("call_mode", { mode: t(`mode_${call.mode}_label`) })));
      }
      const buttons = [];
      for (const cmd of groups.get("AnswerCall") || []) {
        buttons.push(
          h(
            "button",
            { type: "button", class: cmd.accept ? "primary" : "secondary", id: cmd.accept ? "call-accept" : "call-decline", dataset: { key: cmd.accept ? "accept" : "decline" }, onclick: () => send(cmd) },
            cmd.accept ? t("accept") : t("decline"),
          ),
        );
      }
      if (groups.has("ToggleCallMode")) {
        buttons.push(h("button", { type: "button", id: "call-toggle", dataset: { key: "toggle" }, onclick: () => send(groups.get("ToggleCallMode")[0]) }, t("toggle_mode")));
      }
      if (groups.has("HangUp")) {
        buttons.push(h("button", { type: "button", class: "danger", id: "call-hangup", dataset: { key: "hangup" }, onclick: () => send(groups.get("HangUp")[0]) }, t("hang_up")));
      }
      parts.push(h("div", { class: "buttons" }, buttons));
    } else if (groups.has("PlaceCall")) {
      parts.push(targetButtons("PlaceCall", t("act_call"), groups.get("PlaceCall"), (c) => c.callee));
    } else {
      parts.push(h("p", { class: "muted" }, t("call_none")));
    }
    replaceChildrenIfChanged(el.call, g.view.me?.legal, parts);
    el.call.hidden = !me || (rulesetId() !== "standard" && !call && !groups.has("PlaceCall"));
  }

  // Where this page's words go; the server decides (engine room_of, the spectators' room),
  // this only labels the input. The dead talk among themselves once two or more are dead.
  function myRoom() {
    const view = g.view;
    const me = view.me;
    if (!me) return "spectators";
    if (rulesetId() !== "standard") {
      // The server decides who hears a line (the mayor rules: the market by day, the back
      // room at night, the out players among themselves); the page only names the room.
      if (view.phase === "over") return "market";
      if (me.status && me.status !== "alive") return "out";
      if (view.phase === "night") return view.night_room ? "night_room" : null;
      return "market";
    }
    if (me.call && me.call.status === "active") return "call";
    if (view.phase === "over") return "market";
    if (!me.alive) return (view.seats || []).filter((s) => !s.alive).length > 1 ? "out" : null;
    if (view.phase === "night") return view.night_room ? "night_room" : null;
    return "market";
  }

  function roomLabel(room) {
    if (room === "night_room") return g.text?.night_room || t("night_room");
    if (room === "call") return t("chat_room_call");
    if (room === "market") return t("chat_room_market");
    if (room === "out") return t("chat_room_out");
    if (room === "spectators") return t("chat_room_spectators");
    return t("chat_room_none");
  }

  function renderChatRoom() {
    const room = myRoom();
    el.chatRoom.textContent = `(${roomLabel(room)})`;
    el.chatRoom.dataset.room = room || "none";
    const disabled = room === null;
    el.chatInput.disabled = disabled;
    el.chatForm.querySelector("button").disabled = disabled;
    const info = rulesetInfo();
    // A spectator always has the spectators' room; a player has a chat if the rules have one.
    el.chatForm.hidden = Boolean(g.view.me) && info !== null && !info.chat;
  }

  function appendChat(ev) {
    if (!el.chatList) return;
    const room = ev.params.room;
    el.chatList.append(
      h(
        "li",
        { class: "chat-line room-" + room, dataset: { room, seat: ev.params.seat } },
        h("span", { class: "chat-who" }, houseLabel(ev.params.seat)),
        room !== "market" ? h("span", { class: "chat-tag" }, roomLabel(room)) : null,
        h("span", { class: "chat-text" }, ev.params.text),
      ),
    );
    el.chatList.scrollTop = el.chatList.scrollHeight;
  }

  // A line of the spectators' room: written by a signed-in spectator (by name, not a house).
  function appendSideChat(msg) {
    if (!el.chatList) return;
    el.chatList.append(
      h(
        "li",
        { class: "chat-line room-spectators", dataset: { room: "spectators" } },
        h("span", { class: "chat-who" }, msg.name),
        h("span", { class: "chat-tag" }, roomLabel("spectators")),
        h("span", { class: "chat-text" }, msg.text),
      ),
    );
    el.chatList.scrollTop = el.chatList.scrollHeight;
  }

  function appendLog(ev) {
    if (!el.log) return;
    el.log.append(h("li", { class: "log-line code-" + ev.code, dataset: { code: ev.code, seq: ev.seq } }, ev.text));
    el.log.scrollTop = el.log.scrollHeight;
  }

  // -- the recording mark (O2/O4) ---------------------------------------------------------
  function setRecording(notice) {
    g.recording = notice;
    renderRecording();
  }

  function renderRecording() {
    if (!el.recording) return;
    const notice = g.recording;
    el.recording.hidden = !notice;
    root.dataset.recording = notice ? notice.stage : "";
    if (!notice) {
      el.recording.replaceChildren();
      return;
    }
    el.recording.dataset.stage = notice.stage;
    el.recording.title = notice.text || "";
    el.recording.replaceChildren(
      h("span", { class: "rec-dot", "aria-hidden": "true" }),
      h("strong", {}, notice.mark || ""),
      " ",
      h("span", { class: "rec-text" }, notice.text || ""),
    );
  }

  function showAlert(text) {
    if (!el.alert) return;
    el.alert.textContent = text;
    window.clearTimeout(el.alert.timer);
    el.alert.timer = window.setTimeout(() => (el.alert.textContent = ""), 6000);
  }

  function setConn(text, state) {
    if (!el.conn) return;
    el.conn.textContent = text;
    el.conn.dataset.state = state;
  }

  function renderTools() {
    const groups = groupLegal();
    const me = g.view.me;
    const buttons = [];
    if (groups.has("Interject")) {
      buttons.push(h("button", { type: "button", class: "interject", id: "interject", dataset: { key: "interject" }, onclick: () => send(groups.get("Interject")[0]) }, t("interject")));
    }
    if (me && g.view.phase !== "over") {
      buttons.push(h("button", { type: "button", class: "secondary", id: "operator-button", dataset: { key: "operator" }, onclick: () => el.operatorDialog.open_() }, t("operator")));
      buttons.push(
        h(
          "button",
          {
            type: "button",
            class: "ghost",
            id: "leave-game",
            dataset: { key: "leave" },
            onclick: () => {
              if (window.confirm(t("leave_confirm"))) send({ type: "Leave" });
            },
          },
          t("leave_game"),
        ),
      );
    }
    buttons.push(h("a", { class: "button ghost", href: "#/" }, t("back_to_lobby")));
    replaceChildrenIfChanged(el.tools, g.view.me?.legal, buttons);
  }

  function operatorDialog() {
    const box = h("p", { class: "error", role: "alert" });
    const reason = h(
      "select",
      { name: "reason", id: "operator-reason" },
      h("option", { value: "" }, t("reason_none")),
      [1, 2, 3, 4].map((r) => h("option", { value: r }, `${r} – ${t("reason_" + r)}`)),
    );
    const player = h("select", { name: "player", id: "operator-player" });
    const dialog = h("dialog", { class: "card", id: "operator-dialog", "aria-labelledby": "op-h" });
    const form = h(
      "form",
      {
        method: "dialog",
        onsubmit: async (ev) => {
          ev.preventDefault();
          try {
            await api(`/api/games/${gameId}/operator`, {
              method: "POST",
              body: { token, reason: reason.value ? Number(reason.value) : null, player: player.value ? Number(player.value) : null },
            });
            dialog.close();
            showAlert(t("operator_sent"));
            announce(t("operator_sent"));
          } catch (err) {
            box.textContent = t("error", { message: errorText(err) });
          }
        },
      },
      h("h2", { id: "op-h" }, t("operator_title")),
      h("div", { class: "field" }, h("label", { for: "operator-reason" }, t("operator_reason")), reason),
      h("div", { class: "field" }, h("label", { for: "operator-player" }, t("operator_player")), player),
      h(
        "div",
        { class: "buttons" },
        h("button", { type: "submit", class: "primary", id: "operator-send" }, t("operator_send")),
        h("button", { type: "button", class: "ghost", onclick: () => dialog.close() }, t("cancel")),
      ),
      box,
    );
    dialog.open_ = () => {
      box.textContent = "";
      player.replaceChildren(h("option", { value: "" }, t("nobody")), ...(g.view?.seats || []).map((s) => h("option", { value: s.seat }, houseLabel(s.seat))));
      dialog.showModal();
      reason.focus();
    };
    dialog.append(form);
    return dialog;
  }

  function sideName(side) {
    const text = g.text || {};
    if (side === "village" || side === "democrats") return text.village || side;
    if (side === "evil" || side === "wolves" || side === "nazis") return text.evil_group || side;
    if (side === "fox" || side === "death_seeker") return roleName(side);
    return t("side_" + side);
  }

  // The end of any rule set's game: winners and winning sides (standard `outcome`, the mayor
  // rules' `outcome.side`, the classic view's `winners` and `sides` once it is over).
  function outcomeOf(view) {
    const o = view.outcome;
    if (o) return { winners: o.winners || [], sides: o.sides || (o.side ? [o.side] : []) };
    if (view.phase === "over") return { winners: view.winners || [], sides: view.sides || [] };
    return null;
  }

  function renderOver() {
    const view = g.view;
    const outcome = outcomeOf(view);
    el.over.hidden = !outcome;
    if (!outcome) return;
    if (el.over.dataset.done === String(view.phase_seq)) return;
    el.over.dataset.done = String(view.phase_seq);
    const winners = new Set(outcome.winners);
    const replayBox = h("div", { class: "replay", id: "replay" });
    const chatsBox = h("div", { class: "all-chats-box", id: "all-chats-box" });
    el.over.replaceChildren(
      h("h2", { id: "over-h" }, t("over_title")),
      g.seat !== null && g.seat !== undefined
        ? h("p", { class: "my-result", id: "my-result", dataset: { won: String(winners.has(g.seat)) } }, winners.has(g.seat) ? t("you_won") : t("you_lost"))
        : null,
      h("p", { class: "sides", id: "sides" }, `${t("sides")}: `, outcome.sides.map(sideName).join(", ")),
      h("h3", {}, t("winners")),
      h("ul", { class: "plain winners", id: "winners" }, outcome.winners.map((s) => h("li", {}, houseLabel(s)))),
      h("h3", {}, t("all_roles")),
      h(
        "table",
        { class: "roles-table", id: "all-roles" },
        h("tbody", {}, view.seats.map((s) =>
          h(
            "tr",
            { class: winners.has(s.seat) ? "winner" : "" },
            h("th", { scope: "row" }, houseLabel(s.seat)),
            h("td", {}, roleName(s.role)),
            h("td", {}, s.alive ? t("alive") : s.status === "imprisoned" ? t("imprisoned") : t("dead"), s.lover ? " ♥" : "", winners.has(s.seat) ? " ★" : ""),
          ),
        )),
      ),
      g.seat !== null && g.seat !== undefined ? rematchBox() : null,
      h("h3", {}, t("all_chats")),
      h("button", { type: "button", id: "all-chats-load", onclick: () => loadAllChats(chatsBox) }, t("all_chats_load")),
      chatsBox,
      h("h3", {}, t("replay")),
      h("button", { type: "button", id: "replay-load", onclick: () => loadReplay(replayBox) }, t("replay_load")),
      replayBox,
    );
  }

  // After the end every room's chat is in the history for everyone (night room, calls, the
  // dead): the server reveals it, this lists it room by room in the order it was said.
  async function loadAllChats(box) {
    const data = await api(`/api/games/${gameId}/history`, { method: "POST", body: { token, lang: lang() } });
    const lines = data.events.filter((ev) => ev.code === "chat");
    box.replaceChildren(
      lines.length
        ? h("ol", { class: "log-list all-chats", id: "all-chats", tabindex: 0, "aria-label": t("all_chats") },
            lines.map((ev) => h("li", { class: "chat-line room-" + ev.params.room, dataset: { room: ev.params.room } }, ev.text)))
        : h("p", { class: "muted", id: "all-chats" }, t("all_chats_none")),
    );
    box.querySelector("#all-chats").focus();
  }

  // Rematch: one click founds the same setup (or joins the one another player founded); the
  // others see the offer, asked for every few seconds while the end screen is shown.
  function rematchBox() {
    const box = h("div", { class: "rematch", id: "rematch" });
    const offer = h("p", { class: "rematch-offer", id: "rematch-offer", role: "status" });
    const button = h("button", { type: "button", class: "primary", id: "rematch-button" }, t("rematch"));
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const made = await api(`/api/games/${gameId}/rematch`, { method: "POST", body: { token } });
        if (made.token) saveSeat(made.game, { token: made.token, host: made.founded });
        window.clearInterval(g.rematchPoll);
        location.hash = `#/game/${made.game}`;
      } catch (err) {
        button.disabled = false;
        offer.textContent = errorText(err, t("rematch"));
      }
    });
    let shown = false;
    async function ask() {
      if (box.isConnected) shown = true;
      else if (shown) {
        window.clearInterval(g.rematchPoll); // the end screen is gone
        return;
      }
      try {
        const found = await api(`/api/games/${gameId}/rematch${token ? "?token=" + encodeURIComponent(token) : ""}`);
        if (found.game) {
          offer.textContent = t("rematch_offer");
          button.textContent = t("rematch_join");
        }
      } catch {
        window.clearInterval(g.rematchPoll); // not signed in, or not a player here
      }
    }
    window.clearInterval(g.rematchPoll);
    g.rematchPoll = window.setInterval(ask, REMATCH_POLL_MS);
    window.setTimeout(ask, 0);
    box.append(button, offer);
    return box;
  }

  async function loadReplay(box) {
    const data = await api(`/api/games/${gameId}/history`, { method: "POST", body: { token, lang: lang() } });
    const events = data.events;
    let index = events.length;
    let playing = null;
    const list = h("ol", { class: "log-list replay-list", id: "replay-list", tabindex: 0, "aria-label": t("replay"), "aria-live": "polite" });
    const label = h("span", { id: "replay-step" });
    const slider = h("input", { type: "range", min: 0, max: events.length, value: index, id: "replay-slider", "aria-label": t("replay") });
    const play = h("button", { type: "button", id: "replay-play" }, t("replay_play"));
    function show() {
      list.replaceChildren(
        ...events.slice(0, index).map((ev) =>
          h("li", { class: "log-line code-" + ev.code, dataset: { code: ev.code } }, ev.text),
        ),
      );
      label.textContent = t("replay_step", { i: index, n: events.length });
      slider.value = String(index);
      list.scrollTop = list.scrollHeight;
    }
    slider.addEventListener("input", () => {
      index = Number(slider.value);
      show();
    });
    play.addEventListener("click", () => {
      if (playing) {
        window.clearInterval(playing);
        playing = null;
        play.textContent = t("replay_play");
        return;
      }
      if (index >= events.length) index = 0;
      play.textContent = t("replay_pause");
      playing = window.setInterval(() => {
        index += 1;
        show();
        if (index >= events.length) {
          window.clearInterval(playing);
          playing = null;
          play.textContent = t("replay_play");
        }
      }, 700);
    });
    box.replaceChildren(h("div", { class: "replay-controls" }, play, slider, label), list);
    show();
  }

  // For tests and support: drop the connection as a flaky network would, and stay away for
  // `ms` milliseconds before the usual reconnect.
  window.vollmondDebug = {
    drop(ms = 0) {
      g.holdUntil = Date.now() + ms;
      if (g.ws) g.ws.close();
    },
  };

  enter();

  return () => {
    g.closed = true;
    voice?.destroy();
    tones.destroy();
    chimeAudio?.close().catch(() => {});
    window.clearTimeout(pollTimer);
    window.clearInterval(tickTimer);
    window.clearInterval(g.rematchPoll);
    window.clearTimeout(reconnectTimer);
    window.clearInterval(heartbeatTimer);
    window.clearTimeout(momentTimer);
    window.clearInterval(g.flashTimer);
    document.removeEventListener("visibilitychange", onVisibility);
    document.title = BASE_TITLE;
    if (g.ws) g.ws.close();
    delete document.documentElement.dataset.phase;
  };
}
