// Conference rooms in the browser (X2): the public room of each world and private rooms by code,
// with text chat (callers in the same room hear the lines read out) and voice over WebRTC (the
// room's own mixer, as a caller's line). Every word comes from the server's catalogue
// (GET /api/rooms → words); the API is vollmond/service/web/rooms_api.py. Friends (X4) arrive
// here from the main page's friends list: `#call=<key>` calls that friend into a new private
// room, `#invitation=<id>` enters the room a friend called them into; invitations into rooms
// are listed here too.

import { api, ApiError, h, replaceChildren } from "/util.js";
import { initialLang, setLang, lang } from "/i18n.js";

const POLL_MS = 1000;
// One poll at a time, so a poll that hangs (a connection lost without a word) would stop the
// page for good: it is given up after this long and the next tick asks again.
const POLL_TIMEOUT_MS = 8000;
const INVITATIONS_MS = 5000;
const GATHER_WAIT_MS = 1500;
const state = { words: {}, rooms: [], member: null, after: 0, chat: [], timer: null, polling: false, error: "", note: "", invitations: [] };
const voice = { pc: null, stream: null, audio: null };

function w(key, params = {}) {
  const template = state.words[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
}

function say(message) {
  document.getElementById("announcer").textContent = message;
}

function fail(error) {
  state.error = error?.message || String(error);
  say(state.error);
  render();
}

async function loadRooms() {
  const data = await api(`/api/rooms?lang=${lang()}`);
  state.words = data.words;
  state.rooms = data.rooms;
  document.title = `${w("title")} – Vollmond`;
}

async function enter(body) {
  try {
    took(await api("/api/rooms/enter", { method: "POST", body }));
  } catch (error) {
    fail(error);
  }
}

async function openPrivate() {
  try {
    took(await api("/api/rooms/private", { method: "POST", body: {} }));
  } catch (error) {
    fail(error);
  }
}

function personName(person) {
  return person.name || w("phone_person", { n: person.phone_id });
}

async function callFriend(who) {
  try {
    const data = await api("/api/rooms/call", { method: "POST", body: { who } });
    state.note = w("called", { name: personName(data.invited) });
    took(data);
    say(state.note);
  } catch (error) {
    fail(error);
  }
}

// Friends' invitations into rooms (GET /api/community; a table's are on the main page).
// Drawn again only when they changed, so a code being typed is not wiped.
async function loadInvitations() {
  let invitations = [];
  try {
    const data = await api("/api/community");
    invitations = (data.invitations || []).filter((inv) => inv.kind === "room");
  } catch {
    invitations = [];
  }
  const changed = JSON.stringify(invitations) !== JSON.stringify(state.invitations);
  state.invitations = invitations;
  if (changed && !state.member) render();
}

/** Arrived from the friends list (#call=a:12) or an invitation (#invitation=7): done once. */
async function fromHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.has("call") && !params.has("invitation")) return;
  history.replaceState(null, "", location.pathname + location.search);
  if (params.get("call")) await callFriend(params.get("call"));
  else await enter({ invitation: Number(params.get("invitation")) });
}

function took(data) {
  state.member = data;
  state.chat = data.chat;
  state.after = data.chat.length ? data.chat[data.chat.length - 1].seq : 0;
  state.error = "";
  clearInterval(state.timer);
  state.timer = setInterval(poll, POLL_MS);
  render();
}

// The server ending the membership (left elsewhere, removed, banned) ends the polling; any
// other failure (a phone browser in a tunnel, a busy server) is asked again on the next tick.
const MEMBERSHIP_OVER = new Set([403, 404]);

async function poll() {
  if (!state.member || state.polling) return;
  state.polling = true; // one request at a time: a slow answer is not overtaken by the next
  try {
    const data = await api(`/api/rooms/member/${state.member.token}?after=${state.after}`, {
      timeoutMs: POLL_TIMEOUT_MS,
    });
    update(data);
  } catch (error) {
    if (error instanceof ApiError && MEMBERSHIP_OVER.has(error.status)) {
      clearInterval(state.timer);
      state.member = null;
      fail(error);
    }
  } finally {
    state.polling = false;
  }
}

function update(data) {
  state.member = data;
  for (const line of data.chat) {
    state.chat.push(line);
    state.after = line.seq;
  }
  render();
}

async function act(path, body = {}) {
  try {
    const data = await api(`/api/rooms/member/${state.member.token}/${path}`, { method: "POST", body });
    if (data.message) say(data.message);
    if (data.token) update(data);
  } catch (error) {
    fail(error);
  }
}

// -- voice: one peer connection to the room's mixer; the offer carries our candidates ---------
function voiceState() {
  return voice.pc ? voice.pc.connectionState : "off";
}

async function stopVoice() {
  if (voice.pc) voice.pc.close();
  voice.pc = null;
  if (voice.stream) for (const track of voice.stream.getTracks()) track.stop();
  voice.stream = null;
  if (voice.audio) voice.audio.srcObject = null;
  render();
}

async function startVoice() {
  const config = state.member?.voice;
  if (!config?.enabled) return;
  try {
    voice.stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
  } catch {
    voice.stream = null; // no microphone: the page still hears the room
  }
  const pc = new RTCPeerConnection({ iceServers: config.ice_servers || [], iceTransportPolicy: config.relay_only ? "relay" : "all" });
  voice.pc = pc;
  window.vollmondRoomPeer = () => voice.pc;
  const mic = voice.stream?.getAudioTracks()[0];
  if (mic) pc.addTransceiver(mic, { direction: "sendrecv", streams: [voice.stream] });
  else pc.addTransceiver("audio", { direction: "recvonly" });
  pc.ontrack = (ev) => {
    voice.audio.srcObject = ev.streams[0] || new MediaStream([ev.track]);
    voice.audio.play().catch(() => {});
  };
  pc.onconnectionstatechange = () => render();
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    if (pc.iceGatheringState === "complete") resolve();
    pc.onicegatheringstatechange = () => pc.iceGatheringState === "complete" && resolve();
    window.setTimeout(resolve, GATHER_WAIT_MS);
  });
  try {
    const answer = await api(`/api/rooms/member/${state.member.token}/voice`, { method: "POST", body: { sdp: pc.localDescription.sdp } });
    if (pc === voice.pc) await pc.setRemoteDescription({ type: "answer", sdp: answer.sdp });
  } catch (error) {
    await stopVoice();
    fail(error);
  }
  render();
}

async function leave() {
  await stopVoice();
  await act("leave");
  clearInterval(state.timer);
  state.member = null;
  state.chat = [];
  state.note = "";
  await loadRooms();
  render();
}

function memberItem(m, you) {
  const marks = [m.channel === "phone" ? w("on_phone") : w("in_browser")];
  if (m.listening) marks.push(w("listening"));
  if (m.muted) marks.push(w("muted"));
  if (m.slot === you.slot) marks.push(w("you"));
  return h("li", { dataset: { slot: m.slot } }, `${m.slot} ${m.name} (${marks.join(", ")})`);
}

function roomView() {
  const data = state.member;
  const room = data.room;
  const name = room.world ? w("room_public", { name: state.rooms.find((r) => r.world === room.world)?.name || room.world }) : w("room_private");
  const input = h("input", { id: "chat-text", name: "text", autocomplete: "off", "aria-label": w("message"), disabled: data.you.listening });
  return h(
    "section",
    { id: "room", "aria-labelledby": "room-title" },
    h("h1", { id: "room-title" }, name),
    room.code ? h("p", { class: "code", id: "room-code" }, w("code_shown", { code: room.code, digits: room.digits })) : null,
    state.note ? h("p", { class: "note", id: "room-note", role: "status" }, state.note) : null,
    data.recording ? h("p", { class: "recording", id: "room-recording", role: "status" }, w("recording")) : null,
    h("h2", {}, w("members")),
    h("ul", { id: "members" }, data.members.map((m) => memberItem(m, data.you))),
    h("h2", {}, w("chat")),
    h("ol", { id: "chat", "aria-live": "polite" }, state.chat.map((c) => h("li", {}, h("strong", {}, `${c.name}: `), c.text))),
    h(
      "form",
      {
        id: "chat-form",
        onsubmit: async (event) => {
          event.preventDefault();
          const text = input.value;
          input.value = "";
          await act("chat", { text });
        },
      },
      input,
      h("button", { type: "submit", disabled: data.you.listening }, w("send")),
    ),
    h(
      "p",
      { class: "actions" },
      data.voice?.enabled
        ? h("button", { type: "button", id: "room-voice", dataset: { state: voiceState() }, onclick: () => (voice.pc ? stopVoice() : startVoice()) }, voice.pc ? w("voice_off") : w("voice_on"))
        : null,
      " ",
      h("button", { type: "button", id: "listen-toggle", onclick: () => act("listen", { listening: !data.you.listening }) }, data.you.listening ? w("talk") : w("listen_only")),
      " ",
      h("button", { type: "button", id: "operator", onclick: () => act("operator", {}) }, w("operator")),
      " ",
      h("button", { type: "button", id: "leave", onclick: leave }, w("leave")),
    ),
  );
}

function listView() {
  const code = h("input", { id: "room-code-input", name: "code", autocomplete: "off", "aria-label": w("code") });
  return h(
    "section",
    { id: "rooms", "aria-labelledby": "rooms-title" },
    h("h1", { id: "rooms-title" }, w("title")),
    h("p", {}, w("intro")),
    state.invitations.length ? h("h2", {}, w("invitations")) : null,
    state.invitations.length
      ? h(
          "ul",
          { id: "room-invitations" },
          state.invitations.map((inv) =>
            h(
              "li",
              { dataset: { invitation: inv.id } },
              `${w("invitation", { name: personName(inv.from) })} `,
              h("button", { type: "button", class: "accept-invitation", onclick: () => enter({ invitation: inv.id }) }, w("accept_invitation")),
            ),
          ),
        )
      : null,
    h("h2", {}, w("public")),
    h(
      "ul",
      { id: "room-list" },
      state.rooms.map((r) =>
        h(
          "li",
          { dataset: { room: r.id } },
          `${r.name} – ${w("people", { count: r.count, size: r.size })} `,
          h("button", { type: "button", class: "enter", onclick: () => enter({ room: r.id }) }, w("enter")),
          " ",
          h("button", { type: "button", class: "listen", onclick: () => enter({ room: r.id, listening: true }) }, w("listen")),
        ),
      ),
    ),
    h("h2", {}, w("private")),
    h("p", {}, h("button", { type: "button", id: "open-private", onclick: openPrivate }, w("open_private"))),
    h(
      "form",
      {
        id: "code-form",
        onsubmit: (event) => {
          event.preventDefault();
          enter({ code: code.value });
        },
      },
      code,
      h("button", { type: "submit" }, w("enter_code")),
    ),
    h("p", {}, h("a", { href: "/" }, w("back"))),
  );
}

function render() {
  const main = document.getElementById("main");
  const error = state.error ? h("p", { class: "error", id: "rooms-error", role: "alert" }, state.error) : null;
  const typing = typingIn("chat-text");
  replaceChildren(main, error, state.member ? roomView() : listView());
  typing.restore();
}

// The page is drawn anew at every poll; what someone is typing (and where the cursor is)
// must survive it, or a line sent right after a redraw goes out empty.
function typingIn(id) {
  const old = document.getElementById(id);
  if (!old) return { restore() {} };
  const kept = { value: old.value, focused: document.activeElement === old, start: old.selectionStart, end: old.selectionEnd };
  return {
    restore() {
      const input = document.getElementById(id);
      if (!input || input.disabled) return;
      input.value = kept.value;
      if (kept.focused) {
        input.focus();
        input.setSelectionRange(kept.start, kept.end);
      }
    },
  };
}

async function start() {
  setLang(initialLang());
  voice.audio = h("audio", { id: "room-audio", autoplay: true });
  document.body.append(voice.audio); // outside the view: a redraw never cuts the sound
  try {
    await loadRooms();
  } catch (error) {
    state.error = error?.message || String(error);
  }
  render(); // a closed page stops asking; the service takes it out of its room after 30 s
  await fromHash();
  await loadInvitations();
  window.setInterval(() => state.member || loadInvitations(), INVITATIONS_MS);
}

start();
