// Call-progress tones in the page, as the telephone plays them (vollmond/phone/session/
// prompts/tones.py, German public network cadences) and on the same events
// (vollmond/phone/session/game.py): the Freiton while the other side rings, the double ring
// when a call comes in, the Besetztton when the callee is busy. Made with WebAudio, no files.
//
// The element's `data-tone` names the tone playing (empty when none) and `data-audio` the
// WebAudio context's state ("running" once the page may play sound): for support and tests.

// name → {cycle: [[frequencies or null for silence, ms], ...], cycles (null: until stopped)}
const TONES = {
  ringing: { cycle: [[[425], 1000], [null, 4000]], cycles: null },
  incoming_ring: { cycle: [[[425, 475], 400], [null, 200], [[425, 475], 400], [null, 1000]], cycles: null },
  busy: { cycle: [[[425], 480], [null, 480]], cycles: 4 },
};
const LEVEL = 0.3; // of full scale, as the telephone's tones
const FADE_S = 0.005; // 5 ms fades, so a tone does not click
const MAX_RING_S = 120; // the longest ringing a game may set (founding form): a safety stop
// Events after which no ringing goes on (the telephone's RING_ENDS).
export const RING_ENDS = new Set(["call_connected", "call_declined", "call_missed", "call_ended", "call_busy", "seance_opened"]);

export function createTones() {
  const element = document.createElement("span");
  element.id = "call-tone";
  element.hidden = true;
  element.dataset.tone = "";
  let ctx = null;
  let playing = null; // {name, out (GainNode), timer, until}

  // A page may not start audio before the player touched it: resume on the first gesture.
  const unlock = () => ctx?.state === "suspended" && ctx.resume().catch(() => {});
  window.addEventListener("pointerdown", unlock);
  window.addEventListener("keydown", unlock);

  function context() {
    if (!ctx) {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) return null;
      ctx = new Ctx();
      ctx.onstatechange = () => (element.dataset.audio = ctx.state);
      element.dataset.audio = ctx.state;
    }
    if (ctx.state === "suspended") ctx.resume().catch(() => {});
    return ctx;
  }

  function scheduleCycle(audio, out, cycle, start) {
    let at = start;
    for (const [freqs, ms] of cycle) {
      const end = at + ms / 1000;
      if (freqs) {
        const env = audio.createGain();
        env.gain.setValueAtTime(0, at);
        env.gain.linearRampToValueAtTime(LEVEL / freqs.length, at + FADE_S);
        env.gain.setValueAtTime(LEVEL / freqs.length, end - FADE_S);
        env.gain.linearRampToValueAtTime(0, end);
        env.connect(out);
        for (const f of freqs) {
          const osc = audio.createOscillator();
          osc.frequency.value = f;
          osc.connect(env);
          osc.start(at);
          osc.stop(end);
        }
      }
      at = end;
    }
    return at;
  }

  function play(name) {
    stop();
    const spec = TONES[name];
    const audio = context();
    element.dataset.tone = name;
    if (!audio) return; // no WebAudio: the call's text still says it
    const out = audio.createGain();
    out.connect(audio.destination);
    const p = { name, out, timer: null, left: spec.cycles, until: audio.currentTime + MAX_RING_S };
    playing = p;
    let next = audio.currentTime + 0.02;
    const more = () => {
      if (playing !== p) return;
      if (p.left === 0 || next >= p.until) {
        stop(name);
        return;
      }
      if (p.left !== null) p.left -= 1;
      next = scheduleCycle(audio, out, spec.cycle, next);
      // Schedule the following cycle a little before this one ends.
      p.timer = window.setTimeout(more, Math.max(0, (next - audio.currentTime) * 1000 - 100));
    };
    more();
  }

  // Stop the named tones (all when none is named), also in the middle of a cycle.
  function stop(...names) {
    if (!playing || (names.length && !names.includes(playing.name))) return;
    window.clearTimeout(playing.timer);
    playing.out.disconnect();
    playing = null;
    element.dataset.tone = "";
  }

  return {
    element,
    play,
    stop,
    get playing() {
      return playing?.name || "";
    },
    destroy() {
      stop();
      window.removeEventListener("pointerdown", unlock);
      window.removeEventListener("keydown", unlock);
      ctx?.close().catch(() => {});
    },
  };
}
