// The moderation console (issue 9): alarm queue (live over /ws/mod), games with the operator
// view, sanctions, bans, accounts; for admins recordings, holds, the audit log, roles, grants,
// and the nodes with their game leases.
// The server decides every permission; this page only shows what the API answers.

import { api, h, replaceChildren } from "./util.js";
import { errorText, initialLang, lang, mt, setLang } from "./mod_i18n.js";
import { createVoice } from "./voice.js";

const main = document.getElementById("mod-main");
const nav = document.getElementById("mod-nav");
const dialog = document.getElementById("sanction-dialog");
const announcer = document.getElementById("mod-announcer");
const liveLabel = document.getElementById("mod-live");

// `drafts`: the outcome and note a moderator has chosen on a taken alarm but not sent yet. The
// queue is drawn again on every message of the live feed; the drafts carry the choice over, so a
// redraw between picking "warned" and pressing Enter cannot turn it back into the default.
const state = { me: null, alarms: new Map(), showAll: false, socket: null, live: false, drafts: new Map() };

function announce(text) {
  announcer.textContent = "";
  setTimeout(() => (announcer.textContent = text), 30);
}

function when(iso) {
  if (!iso) return mt("permanent");
  return new Date(iso).toLocaleString(lang() === "en" ? "en-GB" : "de-DE");
}

function banLimitHours() {
  const m = state.me?.powers.ban_limit_minutes;
  return m === null || m === undefined ? "∞" : Math.round(m / 60);
}

function showError(box, error) {
  box.textContent = errorText(error, { hours: banLimitHours() });
  box.className = "mod-error";
  box.setAttribute("role", "alert");
}

function table(headers, rows) {
  return h("div", { class: "mod-table-wrap" },
    h("table", { class: "mod-table" },
      h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x)))),
      h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c)))))));
}

function field(label, control) {
  return h("label", {}, h("span", {}, label), control);
}

// -- routing -----------------------------------------------------------------------------
const TABS = [
  ["queue", "tab_queue", false], ["games", "tab_games", false], ["bans", "tab_bans", false],
  ["account", "tab_account", false], ["recordings", "tab_recordings", true], ["audit", "tab_audit", true],
  ["nodes", "tab_nodes", true],
];

function route() {
  const [tab, arg] = (location.hash.replace(/^#\/?/, "") || "queue").split("/");
  renderNav(tab);
  const views = { queue: renderQueue, games: renderGames, game: renderGame, bans: renderBans,
    account: renderAccounts, recordings: renderRecordings, audit: renderAudit, nodes: renderNodes };
  (views[tab] || renderQueue)(arg ? decodeURIComponent(arg) : null);
}

function renderNav(current) {
  const admin = state.me?.powers.administer;
  const active = current === "game" ? "games" : current;
  replaceChildren(nav, TABS.filter(([, , adminOnly]) => admin || !adminOnly).map(([id, key]) =>
    h("button", { type: "button", id: "tab-" + id, "data-key": "tab-" + id,
      "aria-current": id === active ? "page" : false,
      onclick: () => (location.hash = "#" + id) }, mt(key),
      id === "queue" ? ` (${openCount()})` : "")));
}

function openCount() {
  return [...state.alarms.values()].filter((a) => a.status !== "resolved").length;
}

// -- the live queue ------------------------------------------------------------------------
function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws/mod`);
  state.socket = ws;
  ws.onopen = () => { state.live = true; liveLabel.textContent = mt("live_on"); };
  ws.onmessage = (msg) => {
    const data = JSON.parse(msg.data);
    if (data.type === "queue") {
      for (const alarm of data.alarms) state.alarms.set(alarm.id, alarm);
    } else if (data.type === "alarm") {
      const fresh = !state.alarms.has(data.alarm.id);
      state.alarms.set(data.alarm.id, data.alarm);
      if (fresh) announce(mt("new_alarm", { id: data.alarm.id, game: data.alarm.game_id ?? data.alarm.conference }));
    } else {
      return;
    }
    renderNav((location.hash.replace(/^#\/?/, "") || "queue").split("/")[0]);
    if (currentTab() === "queue") renderQueue();
  };
  ws.onclose = () => {
    state.live = false;
    liveLabel.textContent = mt("live_off");
    if (state.me) setTimeout(connect, 1000);
  };
}

function currentTab() {
  return (location.hash.replace(/^#\/?/, "") || "queue").split("/")[0];
}

async function renderQueue() {
  const alarms = [...state.alarms.values()]
    .filter((a) => state.showAll || a.status !== "resolved")
    .sort((a, b) => a.id - b.id);
  const toggle = h("input", { type: "checkbox", id: "show-all", checked: state.showAll,
    onchange: async (e) => {
      state.showAll = e.target.checked;
      if (state.showAll) {
        const data = await api("/api/mod/alarms?all=1");
        for (const alarm of data.alarms) state.alarms.set(alarm.id, alarm);
      }
      renderQueue();
    } });
  replaceChildren(main,
    h("h1", { id: "queue-h" }, mt("queue_h")),
    h("p", {}, h("label", { for: "show-all" }, toggle, " ", mt("show_all"))),
    alarms.length === 0 ? h("p", { id: "queue-empty" }, mt("queue_empty")) :
      h("ul", { class: "mod-list", id: "alarm-list", "aria-labelledby": "queue-h" }, alarms.map(alarmCard)));
}

function alarmCard(alarm) {
  const error = h("p", { "aria-live": "polite" });
  const caller = alarm.caller.account ? mt("alarm_caller_account", { id: alarm.caller.account })
    : mt("alarm_caller", { house: alarm.caller.house ?? "?" });
  const status = alarm.status === "open" ? mt("status_open")
    : alarm.status === "taken" ? mt("status_taken", { by: alarm.taken_by })
    : mt("status_resolved", { outcome: mt("out_" + alarm.outcome) });
  const act = async (fn) => {
    try {
      const data = await fn();
      state.alarms.set(data.alarm.id, data.alarm);
      renderQueue();
    } catch (e) { showError(error, e); }
  };
  const buttons = [
    // An alarm from a conference room (X2) names the room, not a game: nothing to open.
    alarm.game_id ? h("button", { type: "button", onclick: () => (location.hash = "#game/" + alarm.game_id) }, mt("open_game")) : null,
    h("button", { type: "button", class: "ghost", onclick: () => openSanction({ game_id: alarm.game_id, alarm_id: alarm.id }) }, mt("sanction")),
  ].filter(Boolean);
  if (alarm.status === "open") {
    buttons.unshift(h("button", { type: "button", class: "primary", "data-key": `take-${alarm.id}`,
      id: `take-${alarm.id}`, onclick: () => act(() => api(`/api/mod/alarms/${alarm.id}/take`, { method: "POST" })) }, mt("take")));
  }
  let resolveForm = null;
  if (alarm.status === "taken" && alarm.taken_by === state.me.id) {
    const draft = state.drafts.get(alarm.id) || { outcome: "dismissed", note: "" };
    const keep = () => state.drafts.set(alarm.id, { outcome: outcome.value, note: note.value });
    const outcome = h("select", { id: `outcome-${alarm.id}`, "data-key": `outcome-${alarm.id}`, name: "outcome", onchange: keep },
      ["dismissed", "warned", "muted", "kicked", "banned", "false_alarm"].map((o) => h("option", { value: o }, mt("out_" + o))));
    const note = h("input", { id: `note-${alarm.id}`, "data-key": `note-${alarm.id}`, name: "note", maxlength: "500", oninput: keep });
    outcome.value = draft.outcome;
    note.value = draft.note;
    resolveForm = h("form", { class: "mod-row", onsubmit: (e) => {
      e.preventDefault();
      act(async () => {
        const data = await api(`/api/mod/alarms/${alarm.id}/resolve`, { method: "POST", body: { outcome: outcome.value, note: note.value } });
        state.drafts.delete(alarm.id);
        return data;
      });
    } }, field(mt("outcome"), outcome), field(mt("note"), note),
    h("button", { type: "submit", class: "primary", id: `resolve-${alarm.id}` }, mt("resolve")));
  }
  return h("li", { class: "mod-card", "data-alarm": alarm.id, "data-status": alarm.status },
    h("strong", {}, mt("alarm_line", { id: alarm.id, game: alarm.game_id ?? alarm.conference, round: alarm.round, phase: alarm.phase })),
    h("span", {}, [caller, alarm.accused_house ? mt("alarm_accused", { house: alarm.accused_house }) : null,
      alarm.reason ? mt("reason_" + alarm.reason) : mt("reason_none"), when(alarm.created_at)].filter(Boolean).join(" · ")),
    h("span", { class: "alarm-status" }, status, alarm.note ? ` – ${alarm.note}` : ""),
    h("div", { class: "buttons" }, buttons), resolveForm, error);
}

// -- games and the operator view ----------------------------------------------------------
async function renderGames() {
  replaceChildren(main, h("h1", {}, mt("games_h")));
  const data = await api("/api/mod/games");
  main.append(data.games.length === 0 ? h("p", {}, mt("no_games")) :
    h("ul", { class: "mod-list", id: "game-list" }, data.games.map((g) =>
      h("li", { class: "mod-card", "data-game": g.id },
        h("span", {}, mt("game_line", { id: g.id, world: g.world, status: g.phase || g.status, taken: g.taken, size: g.size }),
          g.private ? ` · ${mt("private_game")}` : ""),
        h("div", { class: "buttons" }, h("button", { type: "button", onclick: () => (location.hash = "#game/" + g.id) }, mt("open_game")))))));
}

async function renderGame(gameId) {
  const data = await api(`/api/mod/games/${encodeURIComponent(gameId)}`);
  const g = data.game;
  const byHouse = new Map(g.players.map((p) => [p.house, p]));
  const parts = [h("h1", {}, mt("game_line", { id: g.id, world: g.world, status: g.phase || g.status, taken: g.taken, size: g.size }))];
  const view = data.view;
  if (!view) {
    parts.push(h("p", {}, mt("lobby_only")));
    parts.push(table([mt("th_name"), mt("th_account"), ""], g.players.map((p) => [p.name, p.account ?? "–",
      p.account ? h("button", { type: "button", class: "ghost", onclick: () => openSanction({ account: p.account, game_id: g.id }) }, mt("sanction")) : ""])));
  } else {
    parts.push(h("h2", {}, mt("operator_view")), h("p", { id: "operator-phase" }, mt("phase_round", { phase: view.phase, round: view.round })));
    parts.push(h("div", { id: "operator-seats" }, table([mt("th_house"), mt("th_name"), mt("th_state"), mt("th_role"), ""],
      view.seats.map((s) => {
        const p = byHouse.get(s.seat) || {};
        return [String(s.seat), p.name || "–", s.alive ? mt("alive") : mt("dead"), s.role || mt("role_hidden"),
          p.account ? h("button", { type: "button", class: "ghost", onclick: () => openSanction({ account: p.account, game_id: g.id }) }, mt("sanction")) : ""];
      }))));
  }
  const held = data.alarms.some((a) => a.status === "taken" && a.taken_by === state.me.id);
  if (view && held) parts.push(listenSection(g.id));
  if (data.alarms.length) parts.push(h("h2", {}, mt("tab_queue")), h("ul", { class: "mod-list" }, data.alarms.map(alarmCard)));
  replaceChildren(main, ...parts);
}

// -- listening in (O1): the market place as a spectator hears it ------------------------------
// The game's own socket with `hello {operator: true}` (the server checks that this account
// holds a taken alarm of the game) and the game page's browser voice, listen-only: no
// microphone is asked for, the server sends the spectators' mix (nothing secret at night).
let listening = null;

function stopListening() {
  if (!listening) return;
  listening.voice.destroy();
  listening.ws.onclose = null;
  listening.ws.close();
  listening = null;
}
window.addEventListener("hashchange", stopListening);

function listenSection(gameId) {
  const box = h("div", { id: "listen-box" });
  const error = h("p", { id: "listen-error", "aria-live": "assertive" });
  const button = h("button", { type: "button", class: "primary", id: "listen-start", onclick: () => {
    stopListening();
    button.hidden = true;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws?game=${encodeURIComponent(gameId)}`);
    const voice = createVoice({ seatsList: null, nightRoomName: () => "", isPlayer: () => false });
    listening = { ws, voice };
    ws.onopen = () => ws.send(JSON.stringify({ type: "hello", game: gameId, operator: true, lang: lang() }));
    ws.onmessage = async (msg) => {
      const data = JSON.parse(msg.data);
      if (data.type === "welcome") {
        replaceChildren(box, voice.element);
        await voice.attach(ws, data);
        if (voice.element.dataset.state === "off") voice.element.querySelector("#voice-join")?.click();
      } else if (data.type === "error" && !listening?.welcomed) {
        showError(error, { code: data.code, message: data.message });
        stopListening();
        button.hidden = false;
      } else {
        voice.onMessage(data);
      }
      if (data.type === "welcome" && listening) listening.welcomed = true;
    };
    ws.onclose = () => { if (listening?.ws === ws) { voice.detach(); button.hidden = false; } };
  } }, mt("listen"));
  return h("section", { class: "mod-card", id: "listen", "aria-labelledby": "listen-h" },
    h("h2", { id: "listen-h" }, mt("listen_h")), h("p", { class: "muted" }, mt("listen_hint")), button, box, error);
}

// -- sanctions -----------------------------------------------------------------------------
const AREAS = ["world", "private", "spectate", "conference", "mailbox", "friends", "web", "all"];

function openSanction(preset = {}) {
  const error = h("p", { id: "sanction-error", "aria-live": "assertive" });
  const kind = h("select", { id: "s-kind", name: "kind" }, ["warn", "mute", "kick", "ban"].map((k) => h("option", { value: k, selected: k === (preset.kind || "ban") }, mt("kind_" + k))));
  const account = h("input", { id: "s-account", name: "account", inputmode: "numeric", value: preset.account ?? "" });
  const phone = h("input", { id: "s-phone", name: "phone", inputmode: "numeric" });
  const area = h("select", { id: "s-area", name: "area" }, AREAS.map((a) => h("option", { value: a, selected: a === "web" }, mt("area_" + a))));
  const world = h("input", { id: "s-world", name: "world", placeholder: "werwolf" });
  const minutes = h("input", { id: "s-minutes", name: "minutes", type: "number", min: "1" });
  const reason = h("input", { id: "s-reason", name: "reason", required: true, maxlength: "500" });
  const game = h("input", { id: "s-game", name: "game_id", value: preset.game_id ?? "" });
  const alarm = h("input", { id: "s-alarm", name: "alarm_id", inputmode: "numeric", value: preset.alarm_id ?? "" });
  const submit = async (e) => {
    e.preventDefault();
    const num = (el) => (el.value.trim() ? Number(el.value.trim()) : null);
    const body = { kind: kind.value, reason: reason.value, account: num(account), phone: num(phone),
      game_id: game.value.trim() || null, alarm_id: num(alarm), minutes: num(minutes) };
    if (kind.value === "ban") body.area = area.value === "world" ? `world:${world.value.trim()}` : area.value;
    try {
      const data = await api("/api/mod/sanctions", { method: "POST", body });
      dialog.close();
      announce(mt("imposed", { id: data.sanction.id }));
      route();
    } catch (err) { showError(error, err); }
  };
  replaceChildren(dialog, h("form", { method: "dialog", onsubmit: submit },
    h("h2", { id: "sanction-h" }, mt("sanction_h")),
    state.me.powers.administer ? null : h("p", { class: "muted" }, mt("moderator_limit", { hours: banLimitHours() })),
    field(mt("kind"), kind), field(mt("person_account"), account), field(mt("person_phone"), phone),
    field(mt("area"), area), field(mt("world_id"), world), field(mt("minutes"), minutes),
    field(mt("reason"), reason), field(mt("game_id"), game), field(mt("alarm_id"), alarm), error,
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "s-submit" }, mt("impose")),
      h("button", { type: "button", class: "ghost", onclick: () => dialog.close() }, mt("cancel")))));
  dialog.showModal();
  kind.focus();
}

async function renderBans(query) {
  const q = h("input", { id: "ban-q", name: "q", value: query || "" });
  const all = h("input", { type: "checkbox", id: "ban-all" });
  const list = h("div", { id: "ban-list" });
  const error = h("p", {});
  const load = async () => {
    const params = new URLSearchParams({ q: q.value.trim(), all: all.checked ? "1" : "0" });
    const data = await api("/api/mod/bans?" + params);
    replaceChildren(list, data.bans.length === 0 ? h("p", {}, mt("no_bans")) : h("ul", { class: "mod-list" }, data.bans.map((b) =>
      h("li", { class: "mod-card", "data-ban": b.id },
        h("span", {}, mt("ban_line", { id: b.id, who: b.name || `${b.subject.kind}:${b.subject.id}`, area: b.area, until: when(b.expires_at) })),
        h("span", {}, b.reason, b.lifted_at ? ` · ${mt("lifted")}` : !b.active ? ` · ${mt("expired")}` : ""),
        b.active ? h("div", { class: "buttons" }, h("button", { type: "button", onclick: async () => {
          try { await api(`/api/mod/sanctions/${b.id}/lift`, { method: "POST" }); load(); } catch (e) { showError(error, e); }
        } }, mt("lift"))) : null))));
  };
  replaceChildren(main, h("h1", {}, mt("bans_h")),
    h("form", { class: "mod-row", role: "search", onsubmit: (e) => { e.preventDefault(); load(); } },
      field(mt("search_name"), q), h("label", { for: "ban-all" }, all, " ", mt("show_all")),
      h("button", { type: "submit", id: "ban-search" }, mt("search")),
      h("button", { type: "button", class: "ghost", onclick: () => openSanction({}) }, mt("sanction"))), error, list);
  await load();
}

// -- accounts ------------------------------------------------------------------------------
async function renderAccounts(accountId) {
  if (accountId) return renderAccount(accountId);
  const q = h("input", { id: "acc-q", name: "q" });
  const list = h("div", { id: "acc-list" });
  replaceChildren(main, h("h1", {}, mt("accounts_h")),
    h("form", { class: "mod-row", role: "search", onsubmit: async (e) => {
      e.preventDefault();
      const data = await api("/api/mod/accounts?q=" + encodeURIComponent(q.value.trim()));
      replaceChildren(list, data.accounts.length === 0 ? h("p", {}, mt("no_accounts")) : h("ul", { class: "mod-list" }, data.accounts.map((a) =>
        h("li", {}, h("a", { href: `#account/${a.id}` }, `${a.name} (#${a.id}, ${mt("role_" + a.role)})`)))));
    } }, field(mt("search_name"), q), h("button", { type: "submit", id: "acc-search" }, mt("search"))), list);
}

async function renderAccount(accountId) {
  const data = await api(`/api/mod/accounts/${encodeURIComponent(accountId)}`);
  const a = data.account;
  const parts = [h("h1", {}, `${a.name} (#${a.id})`),
    h("p", { id: "acc-standing" }, [mt("role_" + a.role), mt("karma", { n: data.karma }), mt("credit", { n: data.credit }),
      data.premium_until ? mt("premium_until", { until: when(data.premium_until) }) : mt("no_premium")].join(" · ")),
    h("div", { class: "buttons" }, h("button", { type: "button", onclick: () => openSanction({ account: a.id }) }, mt("sanction"))),
    h("h2", {}, mt("sanctions_h")),
    table([mt("kind"), mt("area"), mt("th_reason"), mt("th_when"), mt("permanent")], data.sanctions.map((s) =>
      [mt("kind_" + s.kind), s.area || "–", s.reason, when(s.created_at), s.lifted_at ? mt("lifted") : when(s.expires_at)])),
    h("h2", {}, mt("karma_h")),
    table([mt("th_when"), mt("th_amount"), mt("th_reason")], data.karma_history.map((e) => [when(e.at), String(e.amount), e.reason])),
    h("h2", {}, mt("credit_h")),
    table([mt("th_when"), mt("th_amount"), mt("th_balance"), mt("th_reason")], data.credit_history.map((e) => [when(e.at), String(e.amount), String(e.balance), e.reason])),
    h("h2", {}, mt("grants_h")),
    table([mt("grant_kind"), mt("amount"), mt("th_reason"), mt("th_when")], data.grants.map((g) => [g.name, String(g.value ?? "–"), g.reason, when(g.expires_at)]))];
  if (state.me.powers.administer) parts.push(...adminAccountForms(a));
  replaceChildren(main, ...parts);
}

function adminAccountForms(a) {
  const roleBox = h("p", { "aria-live": "polite", id: "role-result" });
  const role = h("select", { id: "acc-role", name: "role" }, ["player", "moderator", "admin"].map((r) => h("option", { value: r, selected: r === a.role }, mt("role_" + r))));
  const grantBox = h("p", { "aria-live": "polite", id: "grant-result" });
  const kind = h("select", { id: "g-kind", name: "kind" }, ["premium", "credit", "karma", "private_seats"].map((k) => h("option", { value: k }, mt("grant_" + k))));
  const amount = h("input", { id: "g-amount", name: "amount", type: "number" });
  const days = h("input", { id: "g-days", name: "days", type: "number", min: "1" });
  const reason = h("input", { id: "g-reason", name: "reason", required: true, maxlength: "500" });
  const num = (el) => (el.value.trim() ? Number(el.value.trim()) : null);
  return [
    h("h2", {}, mt("role_h")),
    h("form", { class: "mod-row", onsubmit: async (e) => {
      e.preventDefault();
      try {
        await api(`/api/mod/accounts/${a.id}/role`, { method: "POST", body: { role: role.value } });
        roleBox.className = "mod-ok"; roleBox.textContent = mt("role_set", { role: mt("role_" + role.value) });
      } catch (err) { showError(roleBox, err); }
    } }, field(mt("role_h"), role), h("button", { type: "submit", id: "acc-role-set" }, mt("set_role"))), roleBox,
    h("h2", {}, mt("grant_h")),
    h("form", { class: "mod-row", onsubmit: async (e) => {
      e.preventDefault();
      try {
        await api(`/api/mod/accounts/${a.id}/grants`, { method: "POST", body: { kind: kind.value, amount: num(amount), days: num(days), reason: reason.value } });
        renderAccount(a.id).then(() => { const box = document.getElementById("grant-result"); box.className = "mod-ok"; box.textContent = mt("granted"); });
      } catch (err) { showError(grantBox, err); }
    } }, field(mt("grant_kind"), kind), field(mt("amount"), amount), field(mt("days"), days), field(mt("th_reason"), reason),
    h("button", { type: "submit", id: "g-submit" }, mt("grant"))), grantBox];
}

// -- admins: recordings and the audit log ---------------------------------------------------
async function renderRecordings() {
  replaceChildren(main, h("h1", {}, mt("recordings_h")));
  const error = h("p", {});
  main.append(error);
  let data;
  try { data = await api("/api/mod/recordings"); } catch (e) { showError(error, e); return; }
  if (data.recordings.length === 0) { main.append(h("p", {}, mt("no_recordings"))); return; }
  main.append(h("ul", { class: "mod-list", id: "recording-list" }, data.recordings.map((r) => {
    const box = h("p", { "aria-live": "polite" });
    const chat = h("div", {});
    const reason = h("input", { name: "hold_reason", id: `hold-${r.id}`, maxlength: "500" });
    const call = async (path, body) => {
      try { await api(`/api/mod/recordings/${r.id}/${path}`, { method: "POST", body }); renderRecordings(); } catch (e) { showError(box, e); }
    };
    return h("li", { class: "mod-card", "data-recording": r.id },
      h("strong", {}, mt("rec_line", { id: r.id.slice(0, 8), game: r.game_id || "–", room: r.room, started: when(r.started_at) })),
      r.held_at ? h("span", {}, mt("held", { reason: r.hold_reason })) : null,
      // preload none: the audio is fetched (and the access audited) only when played.
      h("audio", { controls: true, preload: "none", src: `/api/mod/recordings/${r.id}/audio`, "aria-label": mt("play_label", { id: r.id.slice(0, 8) }) }),
      h("div", { class: "mod-row" },
        r.held_at ? h("button", { type: "button", onclick: () => call("release") }, mt("release"))
          : h("form", { class: "mod-row", onsubmit: (e) => { e.preventDefault(); call("hold", { reason: reason.value }); } },
            field(mt("hold_reason"), reason), h("button", { type: "submit" }, mt("hold"))),
        h("button", { type: "button", onclick: async () => {
          try {
            const c = await api(`/api/mod/recordings/${r.id}/chat`);
            replaceChildren(chat, table(["ms", mt("th_name"), "Chat"], c.chat.map((l) => [String(l.at_ms), l.speaker, l.text])));
          } catch (e) { showError(box, e); }
        } }, mt("chat")),
        h("button", { type: "button", class: "danger", onclick: () => { if (confirm(mt("confirm_delete"))) call("delete"); } }, mt("delete"))),
      chat, box);
  })));
}

async function renderAudit() {
  const data = await api("/api/mod/audit");
  replaceChildren(main, h("h1", {}, mt("audit_h")),
    h("button", { type: "button", id: "audit-refresh", onclick: () => renderAudit() }, mt("refresh")),
    h("div", { id: "audit-log" }, table([mt("th_when"), mt("th_actor"), mt("th_action"), mt("th_target"), mt("th_detail")],
      data.entries.map((e) => [when(e.created_at), e.actor === null ? mt("service") : `#${e.actor}`, e.action, `${e.target_kind}:${e.target_id}`, e.detail]))));
}

// -- admins: the nodes and their game leases (several machines, docs/deployment.md) -----------
async function renderNodes() {
  replaceChildren(main, h("h1", {}, mt("nodes_h")));
  const error = h("p", {});
  main.append(error);
  let data;
  try { data = await api("/api/mod/nodes"); } catch (e) { showError(error, e); return; }
  const here = data.node;
  main.append(h("button", { type: "button", id: "nodes-refresh", onclick: () => renderNodes() }, mt("refresh")),
    h("p", { id: "node-here" }, here
      ? mt("node_here", { node: here.node, ownership: mt("ownership_" + here.ownership), owned: here.games_owned, mirrored: here.games_mirrored })
      : mt("node_single")));
  if (here?.counters) main.append(h("p", { id: "node-counters" }, mt("node_counters", here.counters)));
  if (data.nodes.length === 0) { main.append(h("p", { id: "no-leases" }, mt("no_leases"))); return; }
  main.append(h("h2", {}, mt("nodes_db_h")),
    h("div", { id: "node-list" }, table([mt("th_node"), mt("th_live"), mt("th_expired"), mt("th_next_expiry"), mt("th_last_renewal")],
      data.nodes.map((n) => [n.this ? mt("node_this", { node: n.node }) : n.node, String(n.live), String(n.expired), when(n.next_expiry), when(n.last_renewal)]))),
    h("h2", {}, mt("leases_h")),
    h("div", { id: "lease-list" }, table([mt("game_id"), mt("th_node"), mt("th_epoch"), mt("th_expiry")],
      data.leases.map((l) => [h("a", { href: "#game/" + encodeURIComponent(l.game) }, l.game.slice(0, 8)), l.node, String(l.epoch),
        l.live ? mt("expires_in", { s: l.expires_in_s }) : mt("lease_expired", { s: -l.expires_in_s })]))));
}

// -- start -----------------------------------------------------------------------------------
function applyLang() {
  document.title = mt("title");
  document.getElementById("mod-title").textContent = mt("title");
  document.getElementById("skip-link").textContent = mt("skip");
  nav.setAttribute("aria-label", mt("nav_label"));
  const button = document.getElementById("mod-lang");
  button.textContent = mt("lang_switch");
  if (state.me) document.getElementById("mod-account").textContent = mt("signed_in", { name: state.me.name, role: mt("role_" + state.me.role) });
  liveLabel.textContent = state.me ? mt(state.live ? "live_on" : "live_off") : "";
}

async function start() {
  setLang(initialLang());
  document.getElementById("mod-lang").addEventListener("click", () => {
    setLang(lang() === "de" ? "en" : "de");
    applyLang();
    route();
  });
  applyLang();
  try {
    state.me = await api("/api/mod/me");
  } catch (e) {
    replaceChildren(main, h("p", { class: "mod-error", role: "alert", id: "mod-refused" },
      e.code === "login_required" ? mt("need_login") : mt("not_staff")), h("a", { href: "/" }, mt("to_login")));
    return;
  }
  applyLang();
  window.addEventListener("hashchange", () => route());
  route();
  connect();
}

window.addEventListener("unhandledrejection", (event) => {
  const box = h("p", { class: "mod-error", role: "alert" }, errorText(event.reason || {}, { hours: banLimitHours() }));
  main.prepend(box);
});

start();
