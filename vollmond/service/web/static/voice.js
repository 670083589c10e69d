// Browser voice (docs/protocol.md, "Voice"): one WebRTC peer per game socket.
//
// The server mixes: the page sends its microphone (or nothing) and plays the one stream it is
// sent, which is this seat's own mix from the routing table. The page never decides who hears
// whom. Signalling rides on the game's WebSocket: `voice_offer` → `voice_answer`, the page's
// ICE candidates in `voice_ice`, `voice_status` for the room and who is speaking.
//
// game.js hooks: `createVoice(...)` once, `voice.element` into the page, `voice.attach(ws, welcome)`
// on every welcome (a reconnect or a reload re-offers by itself), `voice.onMessage(msg)` for
// `voice_*` messages, `voice.destroy()` on leaving.

import { t } from "./i18n.js";
import { h } from "./util.js";

const REMEMBER = "vollmond.voice"; // sessionStorage: {on, mode} — a reload resumes the voice
const GATHER_WAIT_MS = 300; // the offer waits this long at most for the page's own candidates

export function createVoice({ seatsList, nightRoomName, isPlayer }) {
  const v = {
    ws: null,
    config: null,
    pc: null,
    stream: null, // the microphone, when there is one
    on: false,
    mode: "ptt", // "ptt" (push to talk) or "open" (open microphone)
    muted: false,
    talking: false, // push-to-talk held
    starting: false, // the join button is waiting for the microphone: it will offer itself
    speaking: new Set(),
  };
  const audio = h("audio", { autoplay: true, id: "voice-audio" });
  const roomText = h("span", { class: "voice-room", id: "voice-room", role: "status" }, "");
  const stateText = h("span", { class: "voice-state muted", id: "voice-state" }, t("voice_off"));
  const micButton = h("button", { type: "button", class: "primary", id: "voice-join", onclick: () => toggle() }, t("voice_join"));
  const modeSelect = h(
    "select",
    { id: "voice-mode", "aria-label": t("voice_mode"), onchange: () => setMode(modeSelect.value) },
    h("option", { value: "ptt" }, t("voice_ptt")),
    h("option", { value: "open" }, t("voice_open")),
  );
  const talkButton = h("button", { type: "button", id: "voice-talk", "aria-pressed": "false" }, t("voice_talk"));
  const muteButton = h("button", { type: "button", id: "voice-mute", "aria-pressed": "false", onclick: () => setMuted(!v.muted) }, t("voice_mute"));
  const volume = h("input", { type: "range", id: "voice-volume", min: 0, max: 1, step: 0.05, value: 1, "aria-label": t("voice_volume"), oninput: () => { audio.volume = Number(volume.value); } });
  const element = h(
    "section",
    { class: "card voice", id: "voice", "aria-labelledby": "voice-h" },
    h("h2", { id: "voice-h" }, t("voice"), " ", roomText),
    h("p", {}, stateText),
    h("div", { class: "voice-controls" }, micButton, modeSelect, talkButton, muteButton),
    h("label", { class: "voice-volume" }, t("voice_volume"), " ", volume),
    audio,
  );

  // Push to talk: hold the button, or the space bar outside text fields.
  const press = (down) => {
    v.talking = down;
    talkButton.setAttribute("aria-pressed", String(down));
    applyMic();
  };
  talkButton.addEventListener("pointerdown", () => press(true));
  for (const ev of ["pointerup", "pointerleave", "pointercancel"]) talkButton.addEventListener(ev, () => press(false));
  const typing = (target) => ["INPUT", "TEXTAREA", "SELECT"].includes(target?.tagName);
  const keydown = (ev) => { if (ev.code === "Space" && !ev.repeat && v.on && v.mode === "ptt" && !typing(ev.target)) { ev.preventDefault(); press(true); } };
  const keyup = (ev) => { if (ev.code === "Space" && v.talking) press(false); };
  window.addEventListener("keydown", keydown);
  window.addEventListener("keyup", keyup);

  // The speaking indicator survives game.js re-rendering the seats.
  const observer = new MutationObserver(() => paintSpeaking());
  if (seatsList) observer.observe(seatsList, { childList: true });

  function paintSpeaking() {
    if (!seatsList) return;
    for (const li of seatsList.querySelectorAll("li[data-seat]")) {
      li.classList.toggle("speaking", v.speaking.has(Number(li.dataset.seat)));
    }
  }

  function remember() {
    sessionStorage.setItem(REMEMBER, JSON.stringify({ on: v.on, mode: v.mode }));
  }

  function setMode(mode) {
    v.mode = mode;
    modeSelect.value = mode;
    remember();
    render();
  }

  function setMuted(muted) {
    v.muted = muted;
    muteButton.setAttribute("aria-pressed", String(muted));
    muteButton.textContent = muted ? t("voice_unmute") : t("voice_mute");
    applyMic();
  }

  function applyMic() {
    const live = !v.muted && (v.mode === "open" || v.talking);
    for (const track of v.stream?.getAudioTracks() || []) track.enabled = live;
    render();
  }

  function render() {
    const hasMic = Boolean(v.stream);
    micButton.textContent = v.on ? t("voice_leave") : t("voice_join");
    modeSelect.hidden = !isPlayer(); // chosen before or while speaking; spectators only listen
    muteButton.hidden = !v.on || !hasMic;
    talkButton.hidden = !v.on || !hasMic || v.mode !== "ptt";
    element.dataset.state = !v.on ? "off" : v.pc?.connectionState || "new";
    element.dataset.mic = hasMic ? (v.muted ? "muted" : v.mode) : "none";
    if (!v.on) stateText.textContent = t("voice_off");
    else if (v.pc?.connectionState !== "connected") stateText.textContent = t("voice_connecting");
    else if (!hasMic) stateText.textContent = t("voice_listen_only");
    else if (v.muted) stateText.textContent = t("voice_muted");
    else if (v.mode === "open" || v.talking) stateText.textContent = t("voice_live");
    else stateText.textContent = t("voice_hold_to_talk");
  }

  async function microphone() {
    if (!isPlayer() || !navigator.mediaDevices?.getUserMedia) return null;
    try {
      return await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    } catch (err) {
      // Refused or no device: the player still hears (the peer is receive-only).
      stateText.textContent = err?.name === "NotAllowedError" ? t("voice_mic_denied") : t("voice_no_mic");
      return null;
    }
  }

  async function toggle() {
    if (v.on) {
      stop(true);
      return;
    }
    v.on = true;
    remember();
    // A welcome arriving while the browser asks for the microphone must not offer as well: two
    // offers on one socket are answered twice, and the first answer reached the second peer.
    v.starting = true;
    try {
      if (!v.stream) v.stream = await microphone();
    } finally {
      v.starting = false;
    }
    applyMic();
    await offer();
  }

  function closePeer() {
    if (v.pc) {
      v.pc.onconnectionstatechange = null;
      v.pc.close();
      v.pc = null;
    }
    audio.srcObject = null;
    v.speaking.clear();
    paintSpeaking();
  }

  function stop(sayBye) {
    v.on = false;
    remember();
    closePeer();
    if (v.stream) for (const track of v.stream.getTracks()) track.stop();
    v.stream = null;
    if (sayBye && v.ws?.readyState === WebSocket.OPEN) v.ws.send(JSON.stringify({ type: "voice_stop" }));
    roomText.textContent = "";
    render();
  }

  async function offer() {
    closePeer();
    const ws = v.ws;
    if (!v.on || !ws || ws.readyState !== WebSocket.OPEN || !v.config?.enabled) return;
    const pc = new RTCPeerConnection({
      iceServers: v.config.ice_servers || [],
      iceTransportPolicy: v.config.relay_only ? "relay" : "all",
    });
    v.pc = pc;
    const mic = v.stream?.getAudioTracks()[0];
    if (mic) pc.addTransceiver(mic, { direction: "sendrecv", streams: [v.stream] });
    else pc.addTransceiver("audio", { direction: "recvonly" });
    pc.ontrack = (ev) => {
      audio.srcObject = ev.streams[0] || new MediaStream([ev.track]);
      audio.play().catch(() => { stateText.textContent = t("voice_click_to_hear"); });
    };
    pc.onconnectionstatechange = () => {
      if (pc.connectionState === "connected") times.connected = performance.now();
      render();
      if (pc === v.pc && pc.connectionState === "failed") window.setTimeout(() => v.pc === pc && offer(), 1000);
    };
    let sent = false;
    const late = [];
    pc.onicecandidate = (ev) => {
      if (!ev.candidate || !ev.candidate.candidate) return;
      const c = { type: "voice_ice", candidate: ev.candidate.candidate, sdpMid: ev.candidate.sdpMid, sdpMLineIndex: ev.candidate.sdpMLineIndex };
      if (sent) ws.send(JSON.stringify(c));
      else late.push(c);
    };
    await pc.setLocalDescription(await pc.createOffer());
    // Host candidates come within milliseconds: send them inside the offer, trickle the rest.
    await new Promise((resolve) => {
      if (pc.iceGatheringState === "complete") resolve();
      pc.onicegatheringstatechange = () => pc.iceGatheringState === "complete" && resolve();
      window.setTimeout(resolve, GATHER_WAIT_MS);
    });
    if (pc !== v.pc || ws.readyState !== WebSocket.OPEN) return;
    const sdp = pc.localDescription.sdp;
    ws.send(JSON.stringify({ type: "voice_offer", sdp }));
    times.offer = performance.now();
    sent = true;
    for (const c of late) if (!sdp.includes(c.candidate)) ws.send(JSON.stringify(c));
    render();
  }

  function roomLabel(status) {
    switch (status.room) {
      case "market": return t("chat_room_market");
      case "night_room": return nightRoomName() || t("night_room");
      case "call": return t("voice_room_call", { n: status.other });
      case "halb": return t("voice_room_halb", { n: status.other });
      default: return t("voice_room_silent");
    }
  }

  // For tests and support: the current peer (its stats show what arrived), and when (ms since
  // this document began, performance.now()) the voice was last attached to a welcome, offered,
  // answered and connected (benchmarks/voice_rejoin.py reads them).
  window.vollmondVoicePeer = () => v.pc;
  const times = {};
  window.vollmondVoiceTimes = times;

  const saved = JSON.parse(sessionStorage.getItem(REMEMBER) || "null");
  if (saved?.mode) setMode(saved.mode);
  render();

  return {
    element,
    // Every welcome (first connect, reconnect, reload): a fresh peer on the new socket.
    async attach(ws, welcome) {
      v.ws = ws;
      v.config = welcome.voice;
      times.welcome = performance.now();
      element.hidden = !v.config?.enabled;
      if (!v.config?.enabled) return;
      if (v.on && !v.starting) await offer();
      else if (saved?.on && !v.stream && !v.pc) {
        saved.on = false; // resume once after a reload; the browser remembers the permission
        v.on = true;
        remember(); // and again after the next reload
        v.stream = await microphone();
        applyMic();
        await offer();
      }
    },
    detach() {
      closePeer(); // the socket went away: so did the server's peer
      render();
    },
    onMessage(msg) {
      if (msg.type === "voice_answer") {
        // Only the peer waiting for its answer takes one: an answer to an offer this page has
        // since replaced would fail on the newer peer and turn the voice off.
        if (v.pc?.signalingState !== "have-local-offer") return true;
        times.answer = performance.now();
        v.pc.setRemoteDescription({ type: "answer", sdp: msg.sdp }).catch(() => stop(false));
        return true;
      }
      if (msg.type === "voice_status") {
        roomText.textContent = `(${roomLabel(msg)})`;
        roomText.dataset.room = msg.room;
        v.speaking = new Set(msg.speaking || []);
        paintSpeaking();
        return true;
      }
      return msg.type?.startsWith("voice_") || false;
    },
    destroy() {
      stop(false);
      observer.disconnect();
      window.removeEventListener("keydown", keydown);
      window.removeEventListener("keyup", keyup);
    },
  };
}
