// The mailbox (X3) and friends (X4) in the page: two buttons in the header (with the number
// of new messages and friend requests), a panel below the page, and friends' invitations to
// their tables or into a conference room (entered on the rooms page, rooms.js). Its own module, loaded beside app.js; it asks GET /api/community every few
// seconds while the page is open (which also shows the player as online to friends).

import { api, h, saveSeat } from "./util.js";
import { lang } from "./i18n.js";
import { errorText, loadErrors } from "./errors.js";
import { ct } from "./community_i18n.js";

const POLL_MS = 5000;
const state = { summary: null, open: null, worlds: {}, note: "" };

function personName(p) {
  return p.name || ct("phone_person", { id: p.phone_id });
}

function worldName(id) {
  const world = state.worlds[id];
  if (!world) return id || "";
  return (world.names[lang()] || world.names.de).world;
}

function currentGame() {
  const match = location.hash.match(/^#\/game\/([\w-]+)$/);
  return match ? match[1] : null;
}

function errorLine(err) {
  return errorText(err);
}

// -- header ---------------------------------------------------------------------------------
function headerButtons() {
  let box = document.getElementById("community-buttons");
  if (!box) {
    box = h("span", { id: "community-buttons", class: "community-buttons" });
    const right = document.querySelector(".topbar-right");
    right.insertBefore(box, right.firstChild);
  }
  // The conference rooms (X2) have a page of their own.
  box.replaceChildren(h("a", { class: "button ghost", id: "rooms-link", href: "/rooms.html" }, ct("rooms_link")));
  const s = state.summary;
  if (!s || s.account === null) return;
  const unread = s.unread || 0;
  box.append(
    h("button", { type: "button", class: "ghost", id: "mail-button", "data-unread": String(unread), onclick: () => toggle("mail") },
      unread ? ct("mail_button_new", { n: unread }) : ct("mail_button")),
    h("button", { type: "button", class: "ghost", id: "friends-button", onclick: () => toggle("friends") },
      s.requests ? ct("friends_button_new", { n: s.requests }) : ct("friends_button")),
  );
}

// How an invitation is taken, by where it leads (its kind): a room is entered on the rooms
// page, which takes the invitation there; a table seats the player here.
function acceptControl(inv, err) {
  if (inv.kind === "room") {
    return h("a", { class: "button accept-invitation", href: `/rooms.html#invitation=${inv.id}` }, ct("invitation_enter"));
  }
  return h("button", { type: "button", class: "accept-invitation", onclick: async () => {
    try {
      const res = await api(`/api/invitations/${inv.id}/accept`, { method: "POST", body: {} });
      saveSeat(res.game, { token: res.token, world: inv.world });
      location.hash = `#/game/${res.game}`;
      await poll();
    } catch (e) {
      err.textContent = errorLine(e);
    }
  } }, ct("invitation_accept"));
}

function invitationBar() {
  let bar = document.getElementById("invitations");
  if (!bar) {
    bar = h("div", { id: "invitations", class: "invitations", "aria-live": "polite" });
    document.querySelector(".topbar").after(bar);
  }
  bar.replaceChildren();
  for (const inv of state.summary?.invitations || []) {
    const words = ct(`invitation_${inv.kind}`, { name: personName(inv.from), world: worldName(inv.world) });
    const err = h("span", { class: "error", role: "alert" });
    bar.append(
      h("p", { class: "invitation", "data-invitation": String(inv.id), "data-kind": inv.kind }, words, " ", acceptControl(inv, err), " ", err),
    );
  }
}

async function poll() {
  try {
    state.summary = await api("/api/community");
  } catch {
    state.summary = null;
  }
  headerButtons();
  invitationBar();
}

// -- the panel ------------------------------------------------------------------------------
function panel() {
  let section = document.getElementById("community-panel");
  if (!section) {
    section = h("section", { id: "community-panel", class: "card community", hidden: true });
    document.getElementById("main").after(section);
  }
  return section;
}

async function toggle(which) {
  state.open = state.open === which ? null : which;
  state.note = "";
  await render();
}

async function render() {
  const section = panel();
  section.replaceChildren();
  section.hidden = !state.open;
  if (!state.open) return;
  await loadErrors();
  const close = h("button", { type: "button", class: "ghost", onclick: () => toggle(state.open) }, ct("close"));
  if (state.open === "mail") await renderMail(section, close);
  else await renderFriends(section, close);
  section.scrollIntoView({ block: "nearest" });
}

function act(errBox, step) {
  return async () => {
    try {
      await step();
      await render();
      await poll();
    } catch (e) {
      errBox.textContent = errorLine(e);
    }
  };
}

async function renderMail(section, close) {
  const err = h("p", { class: "error", role: "alert", id: "mail-error" });
  const data = await api("/api/mail");
  const list = h("ul", { class: "mail-list", id: "mail-list" });
  for (const m of data.messages) {
    const body =
      m.kind === "voice"
        ? h("audio", { controls: true, preload: "none", src: `/api/mail/${m.id}/audio`, "aria-label": ct("mail_voice", { s: Math.round(m.duration_ms / 1000) }) })
        : h("p", { class: "mail-text" }, m.text);
    const reply = h("form", { class: "row-form", hidden: true, onsubmit: async (ev) => {
      ev.preventDefault();
      await act(err, () => api(`/api/mail/${m.id}/reply`, { method: "POST", body: { text: new FormData(reply).get("text") } }))();
    } },
      h("label", {}, ct("mail_reply_to", { name: personName(m.from) }), h("textarea", { name: "text", required: true, maxlength: 10000 })),
      h("button", { type: "submit" }, ct("mail_send")));
    list.append(
      h("li", { class: "mail", "data-id": String(m.id), "data-kind": m.kind, "data-unread": String(m.unread) },
        h("strong", {}, ct("mail_from", { name: personName(m.from) })), " ",
        h("small", { class: "muted" }, new Date(m.at).toLocaleString(lang()), m.unread ? ` · ${ct("mail_new")}` : "", m.kept ? ` · ${ct("mail_kept")}` : ""),
        body,
        h("div", { class: "row" },
          h("button", { type: "button", onclick: () => { reply.hidden = !reply.hidden; } }, ct("mail_reply")),
          h("button", { type: "button", onclick: act(err, () => api(`/api/mail/${m.id}/keep`, { method: "POST", body: { kept: !m.kept } })) }, m.kept ? ct("mail_unkeep") : ct("mail_keep")),
          h("button", { type: "button", class: "danger", onclick: act(err, () => api(`/api/mail/${m.id}/delete`, { method: "POST", body: {} })) }, ct("mail_delete")),
          m.kind === "text" && m.unread
            ? h("button", { type: "button", class: "ghost", onclick: act(err, () => api(`/api/mail/${m.id}/read`, { method: "POST", body: {} })) }, "✓")
            : null),
        reply),
    );
    if (m.kind === "voice") body.addEventListener("play", () => setTimeout(poll, 500));
  }
  const form = h("form", { class: "row-form", id: "mail-form", onsubmit: async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    try {
      await api("/api/mail", { method: "POST", body: { to: String(data.get("to")), text: String(data.get("text")) } });
      state.note = ct("mail_sent");
      await render();
    } catch (e) {
      err.textContent = errorLine(e);
    }
  } },
    h("label", {}, ct("mail_to"), h("input", { name: "to", required: true, maxlength: 64, autocomplete: "off" })),
    h("label", {}, ct("mail_text"), h("textarea", { name: "text", required: true, maxlength: 10000 })),
    h("button", { type: "submit" }, ct("mail_send")));
  section.append(
    h("div", { class: "row" }, h("h2", {}, ct("mail_h")), close),
    data.messages.length ? list : h("p", { class: "muted" }, ct("mail_empty")),
    h("h3", {}, ct("mail_send_h")),
    form,
    h("p", { class: "muted", "aria-live": "polite", id: "mail-note" }, state.note),
    err,
  );
}

function whereText(w) {
  if (w.place === "table" || w.place === "game") return ct(`where_${w.place}`, { world: worldName(w.world) });
  return ct(`where_${w.place}`);
}

async function renderFriends(section, close) {
  const err = h("p", { class: "error", role: "alert", id: "friends-error" });
  const data = await api("/api/friends");
  const game = currentGame();
  const list = h("ul", { class: "friend-list", id: "friend-list" });
  for (const f of data.friends) {
    const who = { who: f.key };
    const buttons = [];
    if (f.state === "asking") buttons.push(h("button", { type: "button", class: "accept-friend", onclick: act(err, () => api("/api/friends/accept", { method: "POST", body: who })) }, ct("friend_accept")));
    if (f.state === "friend" && f.where.place === "table") {
      buttons.push(h("button", { type: "button", onclick: act(err, async () => {
        const res = await api(`/api/games/${f.where.game}/join`, { method: "POST", body: {} });
        saveSeat(res.game, { token: res.token, world: f.where.world });
        location.hash = `#/game/${res.game}`;
      }) }, ct("friend_join")));
    }
    if (f.state === "friend" && f.where.place === "game") {
      buttons.push(h("button", { type: "button", onclick: () => { location.hash = `#/game/${f.where.game}/spectate`; } }, ct("friend_watch")));
    }
    if (f.state === "friend" && f.where.place !== "offline") {
      // The rooms page opens the room, enters it and invites the friend (POST /api/rooms/call).
      buttons.push(h("a", { class: "button call-friend", href: `/rooms.html#call=${encodeURIComponent(f.key)}` }, ct("friend_call_room")));
    }
    if (f.state === "friend" && game) {
      buttons.push(h("button", { type: "button", class: "invite-friend", onclick: act(err, async () => {
        await api("/api/friends/invite", { method: "POST", body: { who: f.key, game } });
        state.note = ct("friend_invited");
      }) }, ct("friend_invite")));
    }
    buttons.push(
      h("button", { type: "button", onclick: () => {
        state.open = "mail";
        render().then(() => { const to = document.querySelector("#mail-form input[name=to]"); if (to) { to.value = f.name || String(f.phone_id); to.focus(); } });
      } }, ct("friend_message")),
      h("button", { type: "button", onclick: act(err, () => api("/api/friends/remove", { method: "POST", body: who })) }, ct("friend_remove")),
      h("button", { type: "button", class: "danger", onclick: act(err, () => api("/api/friends/block", { method: "POST", body: who })) }, ct("friend_block")),
    );
    const status = f.state === "friend" ? whereText(f.where) : ct(`state_${f.state}`);
    list.append(h("li", { class: "friend", "data-key": f.key, "data-state": f.state, "data-place": f.where.place },
      h("strong", {}, personName(f)), " – ", h("span", { class: "where" }, status), " ", h("span", { class: "row" }, buttons)));
  }
  const blocked = h("ul", { class: "blocked-list" });
  for (const b of data.blocked) {
    blocked.append(h("li", {}, personName(b), " ",
      h("button", { type: "button", onclick: act(err, () => api("/api/friends/unblock", { method: "POST", body: { who: b.key } })) }, ct("friend_unblock"))));
  }
  const form = h("form", { class: "row-form", id: "friend-form", onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      const res = await api("/api/friends", { method: "POST", body: { who: String(new FormData(form).get("who")) } });
      state.note = res.state === "friend" ? ct("friend_now") : ct("friend_asked");
      await render();
      await poll();
    } catch (e) {
      err.textContent = errorLine(e);
    }
  } },
    h("label", {}, ct("friend_add"), h("input", { name: "who", required: true, maxlength: 64, autocomplete: "off" })),
    h("button", { type: "submit" }, ct("friend_add_button")));
  section.append(
    h("div", { class: "row" }, h("h2", {}, ct("friends_h")), close),
    data.friends.length ? list : h("p", { class: "muted" }, ct("friends_none")),
    form,
    h("p", { class: "muted", "aria-live": "polite", id: "friends-note" }, state.note),
    err,
    data.blocked.length ? h("h3", {}, ct("blocked_h")) : null,
    data.blocked.length ? blocked : null,
  );
}

async function start() {
  try {
    for (const w of (await api("/api/worlds")).worlds) state.worlds[w.id] = w;
  } catch {
    /* names fall back to ids */
  }
  await loadErrors();
  await poll();
  setInterval(poll, POLL_MS);
  window.addEventListener("hashchange", () => { if (state.open === "friends") render(); });
  document.getElementById("lang-button").addEventListener("click", () => setTimeout(async () => {
    await loadErrors();
    headerButtons();
    invitationBar();
    await render();
  }, 50));
}

start();
