// Entry point: language, account, router (#/ lobby, #/game/<id>), the lobby itself.

import { t, setLang, lang, initialLang } from "./i18n.js";
import { h, api, seats, saveSeat, applyTheme, toneOf } from "./util.js";
import { mountGame } from "./game.js";
import { loadErrors, errorText } from "./errors.js";

const ROLE_KEYS = [
  "evil", "seer", "doctor", "witch", "night_owl", "hunter", "knight", "medium", "necromancer",
  "trapper", "twin", "defector", "fox", "vagabond", "vote_giver", "princess", "creeper", "filler",
];
const DECKS = ["auto", "starter", "loner", "full_moon", "may_dance", "cauldron", "tribunal", "custom"];

const ctx = {
  me: null,
  worlds: [],
  rulesets: [],
  worldFilter: localStorage.getItem("vollmond.world") || "",
  dispose: null,
};

export function worldById(id) {
  return ctx.worlds.find((w) => w.id === id) || null;
}

export function announce(text) {
  const el = document.getElementById("announcer");
  el.textContent = "";
  window.setTimeout(() => (el.textContent = text), 30);
}

function names(world) {
  return world.names[lang()] || world.names.de;
}

// The lobby's world chips and the front page's rules show the standard rule set's worlds; a
// further rule set's worlds are offered when founding one of its games.
function standardWorlds() {
  return ctx.worlds.filter((w) => (w.ruleset || "standard") === "standard");
}

async function loadMe() {
  const data = await api("/api/me");
  ctx.me = data.account;
  const label = document.getElementById("account-label");
  label.textContent = ctx.me ? t("signed_in_as", { name: ctx.me.name }) : "";
}

function chrome() {
  document.getElementById("skip-link").textContent = t("skip");
  const button = document.getElementById("lang-button");
  button.textContent = t("lang_switch");
  // The visible word is part of the name (WCAG 2.5.3), then what the button does.
  button.setAttribute("aria-label", `${t("lang_switch")} – ${t("lang_switch_label")}`);
  button.lang = lang() === "de" ? "en" : "de";
  document.getElementById("account-label").textContent = ctx.me
    ? t("signed_in_as", { name: ctx.me.name })
    : "";
}

// -- router --------------------------------------------------------------------------------
async function route() {
  if (ctx.dispose) {
    ctx.dispose();
    ctx.dispose = null;
  }
  const main = document.getElementById("main");
  const match = location.hash.match(/^#\/game\/([\w-]+)(\/spectate)?$/);
  chrome();
  if (match) {
    ctx.dispose = mountGame(main, match[1], { spectate: Boolean(match[2]), ctx, worldById, announce });
  } else {
    applyTheme(worldById(ctx.worldFilter));
    ctx.dispose = mountLobby(main);
  }
}

// -- lobby ---------------------------------------------------------------------------------
function field(label, input, hint) {
  const id = input.id || "f-" + Math.random().toString(36).slice(2);
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), input, hint ? h("small", {}, hint) : null);
}

function checkbox(label, name, checked = false) {
  const id = "cb-" + name;
  return h(
    "div",
    { class: "check" },
    h("input", { type: "checkbox", id, name, checked }),
    h("label", { for: id }, label),
  );
}

function numberInput(name, value, min, max, step = 1) {
  return h("input", { type: "number", name, value, min, max, step, inputmode: "numeric" });
}

function errorBox() {
  return h("p", { class: "error", role: "alert", "aria-live": "assertive" });
}

function showError(box, err) {
  box.textContent = t("error", { message: errorText(err) });
}

function authSection(refresh) {
  const section = h("section", { class: "card", "aria-labelledby": "auth-h" });
  if (ctx.me) {
    // Phone link: the PIN signs in by phone; a number is linked only after the caller typed
    // the code shown here while calling from that number (key 4 in the announcer).
    const phoneBox = errorBox();
    const phoneStatus = h("p", { class: "muted", "aria-live": "polite", id: "phone-status" });
    const phoneCode = h("p", { class: "phone-code", "aria-live": "polite", id: "phone-code" });
    const showPhone = (res) => {
      const lines = [];
      if (res.phone_id) lines.push(t("phone_id", { id: res.phone_id }));
      lines.push(res.has_pin ? t("phone_has_pin") : t("phone_no_pin"));
      if (res.number) lines.push(t("phone_linked", { number: res.number }));
      phoneStatus.textContent = lines.join(" ");
      phoneCode.textContent = "";
      if (res.pending && res.pending.code) {
        phoneCode.textContent = t("phone_code", {
          code: res.pending.code,
          number: res.pending.number,
          minutes: Math.max(1, Math.round(res.pending.expires_in / 60)),
        });
      } else if (res.pending) {
        phoneCode.textContent = t("phone_pending", { number: res.pending.number });
      }
    };
    api("/api/phone")
      .then(showPhone)
      .catch(() => {});
    const phoneForm = h(
      "form",
      {
        class: "row-form",
        id: "phone-form",
        onsubmit: async (ev) => {
          ev.preventDefault();
          const data = new FormData(phoneForm);
          const body = {};
          if (data.get("number")) body.number = String(data.get("number"));
          if (data.get("pin")) body.pin = String(data.get("pin"));
          try {
            showPhone(await api("/api/phone", { method: "POST", body }));
            phoneBox.textContent = "";
            phoneForm.reset();
          } catch (err) {
            showError(phoneBox, err);
          }
        },
      },
      field(t("phone_number"), h("input", { name: "number", type: "tel", autocomplete: "tel", maxlength: 40 }), t("phone_number_hint")),
      field(
        t("phone_pin"),
        h("input", { name: "pin", type: "password", inputmode: "numeric", autocomplete: "off", maxlength: 12, pattern: "[0-9]{4,12}" }),
      ),
      h("button", { type: "submit" }, t("save")),
    );
    // A phone ID made by keypad without an account: its PIN proves it, and its karma, credit
    // and premium move into this account once (issue 10).
    const takeForm = h(
      "form",
      {
        class: "row-form",
        id: "phone-take-form",
        onsubmit: async (ev) => {
          ev.preventDefault();
          const data = new FormData(takeForm);
          const id = Number(data.get("link_id"));
          const body = { link_id: id, link_pin: String(data.get("link_pin") || "") };
          try {
            showPhone(await api("/api/phone", { method: "POST", body }));
            phoneBox.textContent = t("phone_taken", { id });
            takeForm.reset();
            await loadMe();
          } catch (err) {
            showError(phoneBox, err);
          }
        },
      },
      field(
        t("phone_take_id"),
        h("input", { name: "link_id", inputmode: "numeric", autocomplete: "off", maxlength: 12, pattern: "[0-9]{1,12}", required: true }),
        t("phone_take_hint"),
      ),
      field(
        t("phone_take_pin"),
        h("input", { name: "link_pin", type: "password", inputmode: "numeric", autocomplete: "off", maxlength: 12, pattern: "[0-9]{4,12}", required: true }),
      ),
      h("button", { type: "submit" }, t("phone_take")),
    );
    section.append(
      h("h2", { id: "auth-h" }, t("signed_in_as", { name: ctx.me.name })),
      h(
        "button",
        {
          type: "button",
          class: "ghost",
          onclick: async () => {
            await api("/api/logout", { method: "POST", body: {} });
            await loadMe();
            refresh();
          },
        },
        t("signout"),
      ),
      h("details", { id: "phone-link" }, h("summary", {}, t("phone_link")), phoneForm, takeForm, phoneStatus, phoneCode, phoneBox),
    );
    return section;
  }
  const box = errorBox();
  const form = h(
    "form",
    { class: "row-form", id: "auth-form", onsubmit: (ev) => ev.preventDefault() },
    field(t("name"), h("input", { name: "name", autocomplete: "username", required: true, id: "auth-name" })),
    field(
      t("password"),
      h("input", { name: "password", type: "password", autocomplete: "current-password", required: true, id: "auth-password" }),
    ),
  );
  const submit = (path) => async () => {
    if (!form.reportValidity()) return;
    const data = new FormData(form);
    try {
      await api(path, { method: "POST", body: { name: data.get("name"), password: data.get("password") } });
      await loadMe();
      refresh();
    } catch (err) {
      showError(box, err);
    }
  };
  form.append(
    h("div", { class: "buttons" },
      h("button", { type: "button", id: "signin-button", onclick: submit("/api/login") }, t("signin")),
      h("button", { type: "button", id: "signup-button", class: "secondary", onclick: submit("/api/signup") }, t("signup")),
    ),
  );
  section.append(h("h2", { id: "auth-h" }, t("signin")), h("p", { class: "muted" }, t("please_sign_in")), form, box);
  return section;
}

function worldPicker(refresh) {
  const list = h("div", { class: "world-list", role: "group", "aria-labelledby": "worlds-h" });
  const all = h(
    "button",
    { type: "button", class: "world-chip all", "aria-pressed": String(!ctx.worldFilter), onclick: () => pick("") },
    t("all_worlds"),
  );
  list.append(all);
  for (const world of standardWorlds()) {
    const n = names(world);
    list.append(
      h(
        "button",
        {
          type: "button",
          class: "world-chip",
          "aria-pressed": String(ctx.worldFilter === world.id),
          style: { "--chip": world.colors.primary, "--chip-accent": world.colors.accent, "--chip-bg": world.colors.background },
          dataset: { tone: toneOf(world.colors.background) },
          title: n.tagline,
          onclick: () => pick(world.id),
        },
        h("span", { class: "swatch", "aria-hidden": "true" }),
        h("span", {}, n.world, h("small", {}, n.place)),
      ),
    );
  }
  function pick(id) {
    ctx.worldFilter = id;
    localStorage.setItem("vollmond.world", id);
    applyTheme(worldById(id));
    refresh();
  }
  const current = worldById(ctx.worldFilter);
  return h(
    "section",
    { class: "card", "aria-labelledby": "worlds-h" },
    h("h2", { id: "worlds-h" }, t("worlds")),
    list,
    current ? h("p", { class: "tagline" }, names(current).tagline) : null,
  );
}

async function joinGame(gameId, box) {
  try {
    const res = await api(`/api/games/${gameId}/join`, { method: "POST", body: {} });
    saveSeat(gameId, { token: res.token });
    location.hash = `#/game/${gameId}`;
  } catch (err) {
    if (err.code === "already_seated" && seats()[gameId]) {
      location.hash = `#/game/${gameId}`;
      return;
    }
    showError(box, err);
  }
}

function gamesSection() {
  const box = errorBox();
  const list = h("ul", { class: "game-list", "aria-live": "polite", id: "public-games" });
  const section = h(
    "section",
    { class: "card", "aria-labelledby": "games-h" },
    h("h2", { id: "games-h" }, t("public_games")),
    list,
    box,
  );
  // The list is asked for again every 3 s. It is redrawn only when it changed, never under a
  // pressed pointer (a click whose press and release land on two different buttons is lost),
  // and the focused control keeps the focus (a keyboard user tabbing through the list).
  let shown = "";
  let pressing = false;
  list.addEventListener("pointerdown", () => {
    pressing = true;
  });
  window.addEventListener("pointerup", () => window.setTimeout(() => (pressing = false), 0));
  function focusedKey() {
    const active = document.activeElement;
    if (!active || !list.contains(active)) return null;
    if (active.dataset.join) return `[data-join="${active.dataset.join}"]`;
    const href = active.getAttribute("href");
    return href ? `[href="${href}"]` : null;
  }
  async function load() {
    const query = ctx.worldFilter ? `?world=${encodeURIComponent(ctx.worldFilter)}` : "";
    let data;
    try {
      data = await api("/api/games" + query);
    } catch (err) {
      showError(box, err);
      return;
    }
    const mine = seats();
    const signature = JSON.stringify([data.games, Object.keys(mine).sort(), ctx.me, lang()]);
    if (signature === shown || pressing) return;
    shown = signature;
    const focus = focusedKey();
    const items = data.games.map((game) => {
      const world = worldById(game.world);
      const n = world ? names(world) : null;
      // A rule set without decks (the mayor rules) is named instead; another one's with its deck.
      const rules = game.ruleset && game.ruleset !== "standard" ? t("ruleset_" + game.ruleset) : null;
      const deckName = n && game.deck ? n.decks[game.deck] || game.deck : game.deck;
      const deck = [rules, deckName].filter(Boolean).join(" · ");
      const status =
        game.status === "lobby"
          ? t("status_lobby")
          : game.phase
            ? `${t("status_running")} · ${t("phase_" + game.phase)}`
            : t("status_running");
      const seated = Boolean(mine[game.id]);
      return h(
        "li",
        { class: "game-item", dataset: { game: game.id }, style: world ? { "--chip": world.colors.primary } : {} },
        h("span", { class: "swatch", "aria-hidden": "true" }),
        h("span", { class: "game-title" }, n ? `${n.world} · ${n.place}` : game.world, h("small", {}, `${deck} · ${status}`)),
        h("span", { class: "game-seats" }, t("seats_taken", { taken: game.taken, size: game.size })),
        h(
          "span",
          { class: "buttons" },
          seated
            ? h("a", { class: "button", href: `#/game/${game.id}` }, t("open"))
            : game.status === "lobby" && game.free > 0 && ctx.me
              ? h("button", { type: "button", "data-join": game.id, onclick: () => joinGame(game.id, box) }, t("join"))
              : null,
          game.status === "running"
            ? h("a", { class: "button secondary", href: `#/game/${game.id}/spectate` }, t("spectate"))
            : null,
        ),
      );
    });
    list.replaceChildren(...(items.length ? items : [h("li", { class: "muted" }, t("no_games"))]));
    if (focus) list.querySelector(focus)?.focus();
  }
  load();
  const timer = window.setInterval(load, 3000);
  section.dispose = () => window.clearInterval(timer);
  return section;
}

// "Meine Spiele": the account's seats from the server (any device), then this browser's own
// seat tokens (guests, and games the server no longer lists).
function myGamesSection() {
  const list = h("ul", { class: "plain", id: "my-games" });
  const section = h(
    "section",
    { class: "card", "aria-labelledby": "mine-h", hidden: true },
    h("h2", { id: "mine-h" }, t("my_games")),
    list,
  );
  const entries = new Map();
  for (const [id, info] of Object.entries(seats()).sort((a, b) => b[1].saved - a[1].saved).slice(0, 8)) {
    entries.set(id, { world: info.world, status: null });
  }
  function show() {
    const items = [...entries.entries()].map(([id, info]) => {
      const world = worldById(info.world);
      const label = world ? `${names(world).world} · ${id}` : id;
      const status = info.status ? ` (${t(info.status === "lobby" ? "status_lobby" : "status_running")})` : "";
      return h("li", { dataset: { game: id } }, h("a", { href: `#/game/${id}` }, label + status));
    });
    list.replaceChildren(...items);
    section.hidden = items.length === 0;
  }
  show();
  if (ctx.me) {
    api("/api/my-games")
      .then((data) => {
        const local = [...entries.entries()];
        entries.clear();
        for (const seat of data.games) entries.set(seat.game, { world: seat.world, status: seat.status });
        for (const [id, info] of local) if (!entries.has(id)) entries.set(id, info);
        show();
      })
      .catch(() => {});
  }
  return section;
}

// A game's reasons are codes the catalogue names; an operator's booking carries its own words.
function karmaReason(reason) {
  const key = "karma_reason_" + reason;
  const named = t(key);
  return named === key ? `${t("karma_reason_other")}: ${reason}` : named;
}

// The account's standing (issue 10): karma with its history and reasons, the unlock it earned
// and until when, premium and credit (granted by operators; there is no payment).
function standingSection() {
  if (!ctx.me) return null;
  const me = ctx.me;
  const summary = [
    t("karma_balance", { karma: me.karma }),
    me.premium ? t("premium_on") : t("premium_off"),
    t("credit_line", { credit: me.credit }),
  ];
  const unlock = me.karma_unlock_until
    ? h("p", { id: "karma-unlock" }, t("karma_unlock", { date: new Date(me.karma_unlock_until).toLocaleDateString(lang()) }))
    : null;
  const history = h("ol", { class: "plain karma-history", id: "karma-history", "aria-live": "polite" });
  const box = errorBox();
  const more = h(
    "button",
    {
      type: "button",
      class: "secondary",
      id: "karma-history-button",
      onclick: async () => {
        let data;
        try {
          data = await api("/api/me/karma");
        } catch (err) {
          showError(box, err);
          return;
        }
        const rows = data.history.map((entry) =>
          h(
            "li",
            { class: entry.amount < 0 ? "karma-minus" : "karma-plus", dataset: { reason: entry.reason } },
            `${entry.amount > 0 ? "+" : ""}${entry.amount} · ${karmaReason(entry.reason)} · ${new Date(entry.at).toLocaleDateString(lang())}`,
          ),
        );
        history.replaceChildren(...(rows.length ? rows : [h("li", { class: "muted" }, t("karma_empty"))]));
        more.hidden = true;
      },
    },
    t("karma_history"),
  );
  return h(
    "section",
    { class: "card", "aria-labelledby": "standing-h", id: "standing" },
    h("h2", { id: "standing-h" }, t("karma_h")),
    h("p", { id: "standing-summary" }, summary.join(" · ")),
    unlock,
    more,
    history,
    box,
  );
}

function foundSection() {
  if (!ctx.me) return null;
  const box = errorBox();
  // The rule set decides which worlds, decks and options the form offers. The standard
  // rule set keeps its own form below; any other is built from its founding options as the
  // server describes them (GET /api/rulesets: the options' JSON with their defaults).
  const rulesetSelect = h(
    "select",
    { name: "ruleset", id: "found-ruleset" },
    ctx.rulesets.map((r) => h("option", { value: r.id, selected: r.id === "standard" }, t("ruleset_" + r.id))),
  );
  const rulesetOf = () => ctx.rulesets.find((r) => r.id === rulesetSelect.value) || null;
  const isStandard = () => rulesetSelect.value === "standard";
  const worldSelect = h("select", { name: "world", id: "found-world" });
  function fillWorlds() {
    const id = rulesetSelect.value || "standard";
    const keep = worldSelect.value || ctx.worldFilter || "werwolf";
    const shown = ctx.worlds.filter((w) => (w.ruleset || "standard") === id);
    const chosen = shown.some((w) => w.id === keep) ? keep : shown[0]?.id;
    worldSelect.replaceChildren(...shown.map((w) => h("option", { value: w.id, selected: w.id === chosen }, names(w).world)));
  }
  fillWorlds();
  const sizeInput = numberInput("size", 8, 4, 60);
  const genericBox = h("div", { id: "ruleset-options" });
  const standardParts = [];
  const deckSelect = h("select", { name: "deck", id: "found-deck" });
  const customBox = h("fieldset", { class: "custom-deck", id: "custom-deck", hidden: true });
  const customRows = h("div", { class: "custom-rows" });
  function worldNames() {
    const w = worldById(worldSelect.value) || ctx.worlds[0];
    return names(w);
  }
  function fillDecks() {
    const n = worldNames();
    const keep = deckSelect.value || "auto";
    deckSelect.replaceChildren(...DECKS.map((d) => h("option", { value: d, selected: d === keep }, n.decks[d] || d)));
    for (const select of customRows.querySelectorAll("select")) {
      const value = select.value;
      select.replaceChildren(...ROLE_KEYS.map((r) => h("option", { value: r, selected: r === value }, n.roles[r] || r)));
    }
  }
  function addRow(role = "filler", count = 1) {
    const n = worldNames();
    const index = customRows.children.length;
    const row = h(
      "div",
      { class: "custom-row" },
      field(
        t("role"),
        h("select", { name: "role", id: `custom-role-${index}` }, ROLE_KEYS.map((r) => h("option", { value: r, selected: r === role }, n.roles[r] || r))),
      ),
      field(t("count"), h("input", { type: "number", name: "count", min: 1, max: 60, value: count, id: `custom-count-${index}` })),
      h("button", { type: "button", class: "ghost", onclick: () => row.remove(), "aria-label": t("remove") }, "✕"),
    );
    customRows.append(row);
  }
  customBox.append(
    h("legend", {}, t("custom_roles")),
    customRows,
    h("button", { type: "button", class: "secondary", id: "custom-add", onclick: () => addRow() }, t("add_role")),
  );
  addRow("evil", 1);
  addRow("seer", 1);
  addRow("filler", 2);
  worldSelect.addEventListener("change", () => {
    applyTheme(worldById(worldSelect.value));
    fillDecks();
    if (!isStandard()) renderGeneric();
  });
  rulesetSelect.addEventListener("change", () => {
    fillWorlds();
    applyTheme(worldById(worldSelect.value));
    const rules = rulesetOf();
    if (rules) {
      sizeInput.min = rules.min_players;
      sizeInput.max = rules.max_players;
    }
    for (const part of standardParts) part.hidden = !isStandard();
    customBox.hidden = !isStandard() || deckSelect.value !== "custom";
    if (isStandard()) genericBox.replaceChildren();
    else renderGeneric();
  });

  // A further rule set's options, one control per option of its JSON: a deck (the world's
  // deck names), switches, numbers (empty means "the rule set decides") and durations.
  function renderGeneric() {
    const rules = rulesetOf();
    if (!rules) return;
    const n = worldNames();
    const controls = [];
    const durations = [];
    for (const [key, value] of Object.entries(rules.defaults)) {
      if (["players", "world", "custom_roles"].includes(key)) continue;
      if (key === "deck") {
        const decks = Object.keys(n.decks || {}).filter((d) => d !== "custom");
        controls.push(
          field(
            t("deck"),
            h(
              "select",
              { name: "deck", id: "found-ruleset-deck", dataset: { option: key, kind: "string" } },
              decks.map((d) => h("option", { value: d, selected: d === value }, n.decks[d] || d)),
            ),
          ),
        );
      } else if (typeof value === "boolean") {
        const box = checkbox(t("opt_" + key), "opt-" + key, value);
        box.querySelector("input").dataset.option = key;
        box.querySelector("input").dataset.kind = "boolean";
        controls.push(box);
      } else if (value === null || typeof value === "number") {
        const input = numberInput(key, value === null ? "" : value, 0, 3600);
        input.dataset.option = key;
        input.dataset.kind = "number";
        controls.push(field(t(key === "stalemate_rounds" ? key : "opt_" + key), input));
      } else if (value && typeof value === "object") {
        for (const [name, seconds] of Object.entries(value)) {
          const input = numberInput(name, seconds, 1, 3600);
          input.dataset.option = key;
          input.dataset.sub = name;
          input.dataset.kind = "number";
          durations.push(field(t("d_" + name), input));
        }
      }
    }
    genericBox.replaceChildren(
      h("fieldset", {}, h("legend", {}, t("options")), h("div", { class: "grid2" }, controls)),
      durations.length
        ? h("details", { id: "ruleset-durations" }, h("summary", {}, t("durations")), h("div", { class: "grid3" }, durations))
        : null,
    );
  }

  function genericOptions() {
    const out = {};
    for (const input of genericBox.querySelectorAll("[data-option]")) {
      const key = input.dataset.option;
      let value;
      if (input.dataset.kind === "boolean") value = input.checked;
      else if (input.dataset.kind === "number") value = input.value === "" ? null : Number(input.value);
      else value = input.value;
      if (input.dataset.sub) {
        out[key] = out[key] || {};
        out[key][input.dataset.sub] = value;
      } else {
        out[key] = value;
      }
    }
    return out;
  }
  deckSelect.addEventListener("change", () => {
    customBox.hidden = deckSelect.value !== "custom";
  });
  fillDecks();

  const d = (key, value, min, max) => field(t("d_" + key), numberInput(key, value, min, max));
  // The standard rule set's own parts of the form: hidden while another rule set is chosen.
  const standardPart = (node) => {
    standardParts.push(node);
    return node;
  };
  const form = h(
    "form",
    {
      id: "found-form",
      onsubmit: async (ev) => {
        ev.preventDefault();
        const data = new FormData(form);
        const on = (name) => data.get(name) === "on";
        const num = (name) => Number(data.get(name));
        if (!isStandard()) {
          const body = {
            ruleset: rulesetSelect.value,
            world: worldSelect.value,
            private: data.get("visibility") === "private",
            size: num("size"),
            ...genericOptions(),
          };
          try {
            const res = await api("/api/games", { method: "POST", body });
            saveSeat(res.game, { token: res.token, code: res.invitation_code, host: true, world: body.world });
            location.hash = `#/game/${res.game}`;
          } catch (err) {
            showError(box, err);
          }
          return;
        }
        const body = foundingBody();
        try {
          const res = await api("/api/games", { method: "POST", body });
          saveSeat(res.game, { token: res.token, code: res.invitation_code, host: true, world: body.world });
          location.hash = `#/game/${res.game}`;
        } catch (err) {
          showError(box, err);
        }
      },
    },
    h(
      "div",
      { class: "grid2" },
      field(t("ruleset"), rulesetSelect),
      field(t("world"), worldSelect),
      field(t("size"), sizeInput),
      standardPart(field(t("deck"), deckSelect)),
      h(
        "fieldset",
        { class: "radios" },
        h("legend", {}, t("visibility")),
        h("label", {}, h("input", { type: "radio", name: "visibility", value: "public", checked: true }), " ", t("public")),
        h("label", {}, h("input", { type: "radio", name: "visibility", value: "private", id: "found-private" }), " ", t("private")),
      ),
    ),
    customBox,
    genericBox,
    standardPart(h(
      "fieldset",
      {},
      h("legend", {}, t("options")),
      checkbox(t("opt_lovers"), "lovers"),
      checkbox(t("opt_unanimous"), "unanimous"),
      checkbox(t("opt_instant_kill"), "instant_kill"),
    )),
    standardPart(h(
      "details",
      {},
      h("summary", {}, t("calls")),
      h(
        "div",
        { class: "grid2" },
        checkbox(t("calls_enabled"), "calls_enabled", true),
        checkbox(t("calls_by_day"), "by_day"),
        checkbox(t("evil_may_call"), "evil_may_call", true),
        field(t("calls_max"), numberInput("max_duration_s", 120, 10, 600)),
        field(t("calls_per_night"), numberInput("per_night", 3, 0, 10)),
        field(t("ring_s"), numberInput("ring_s", 20, 3, 120)),
        field(
          t("day_modes"),
          h(
            "select",
            { name: "day_modes" },
            h("option", { value: "both" }, t("mode_both")),
            h("option", { value: "stumm" }, t("mode_stumm")),
            h("option", { value: "halb" }, t("mode_halb")),
          ),
        ),
      ),
    )),
    standardPart(h(
      "details",
      { id: "durations" },
      h("summary", {}, t("durations")),
      h(
        "div",
        { class: "grid3" },
        d("steal_s", 30, 3, 600),
        d("night_s", 120, 3, 1800),
        d("morning_s", 20, 1, 600),
        d("day_s", 180, 3, 3600),
        d("vote_s", 60, 3, 600),
        d("floor_s", 20, 3, 120),
        field(t("stalemate_rounds"), numberInput("stalemate_rounds", 3, 1, 20)),
      ),
    )),
    h("button", { type: "submit", id: "found-submit", class: "primary" }, t("found_submit")),
    box,
  );
  // The founding options as POST /api/games reads them (also sent for the balance preview).
  function foundingBody() {
    const data = new FormData(form);
        const on = (name) => data.get(name) === "on";
        const num = (name) => Number(data.get(name));
        const body = {
          world: worldSelect.value,
          private: data.get("visibility") === "private",
          size: num("size"),
          deck: deckSelect.value,
          unanimous: on("unanimous"),
          instant_kill: on("instant_kill"),
          lovers: on("lovers") ? true : null,
          calls: {
            enabled: on("calls_enabled"),
            max_duration_s: num("max_duration_s"),
            per_night: num("per_night"),
            by_day: on("by_day"),
            day_modes: String(data.get("day_modes")),
            evil_may_call: on("evil_may_call"),
            ring_s: num("ring_s"),
          },
          stalemate_rounds: num("stalemate_rounds"),
          durations: {
            steal_s: num("steal_s"),
            night_s: num("night_s"),
            morning_s: num("morning_s"),
            day_s: num("day_s"),
            vote_s: num("vote_s"),
            floor_s: num("floor_s"),
          },
        };
        if (body.deck === "custom") {
          body.custom_roles = [...customRows.children].map((row) => [
            row.querySelector("select").value,
            Number(row.querySelector("input").value),
          ]);
        }
    return body;
  }

  // Balance preview (issue 12): win rates of this deck in a few bot games on the server.
  const balanceResult = h("p", { class: "balance-result", id: "balance-result", role: "status" });
  const balanceButton = h("button", { type: "button", class: "secondary", id: "balance-check" }, t("balance_check"));
  balanceButton.addEventListener("click", async () => {
    balanceButton.disabled = true;
    balanceResult.textContent = t("balance_wait");
    try {
      const res = await api(`/api/balance?lang=${lang()}`, { method: "POST", body: foundingBody() });
      const side = (s) => (res.sides[s] && res.sides[s] !== s ? res.sides[s] : t("side_" + s));
      const rates = Object.entries(res.win_rates).map(([s, r]) => `${side(s)} ${Math.round(r * 100)} %`);
      balanceResult.textContent = t("balance_result", { games: res.games, rates: rates.join(", ") });
    } catch (err) {
      balanceResult.textContent = errorText(err, t("balance_check"));
    } finally {
      balanceButton.disabled = false;
    }
  });
  customBox.append(balanceButton, balanceResult);
  return h("section", { class: "card wide", "aria-labelledby": "found-h" }, h("h2", { id: "found-h" }, t("found")), form);
}

function codeSection() {
  if (!ctx.me) return null;
  const box = errorBox();
  const form = h(
    "form",
    {
      class: "row-form",
      onsubmit: async (ev) => {
        ev.preventDefault();
        const code = new FormData(form).get("code");
        try {
          const res = await api("/api/join", { method: "POST", body: { code } });
          saveSeat(res.game, { token: res.token });
          location.hash = `#/game/${res.game}`;
        } catch (err) {
          showError(box, err);
        }
      },
    },
    field(t("code"), h("input", { name: "code", id: "join-code", autocomplete: "off", required: true, autocapitalize: "characters" })),
    h("button", { type: "submit", id: "join-code-submit" }, t("join_submit")),
  );
  return h("section", { class: "card", "aria-labelledby": "code-h" }, h("h2", { id: "code-h" }, t("join_code")), form, box);
}

// -- front page (issue 12): what this is, rules per world, guest play, quick join, call in ---
function frontSection(refresh) {
  const what = h("p", { class: "front-what", id: "front-what" });
  const rules = h("div", { class: "front-rules", id: "front-rules" });
  const call = h("p", { class: "front-call", id: "front-call", hidden: true });
  const box = errorBox();
  const section = h(
    "section",
    { class: "card front", "aria-labelledby": "front-h" },
    h("h1", { id: "front-h" }, t("app_title")),
    what,
    call,
    ctx.me ? quickJoin(box) : guestForm(refresh, box),
    box,
    h("h2", { id: "rules-h" }, t("rules_30s")),
    rules,
  );
  api(`/api/front?lang=${lang()}`)
    .then((front) => {
      what.textContent = front.what;
      call.textContent = front.call.join(" · ");
      call.hidden = front.call.length === 0;
      const shown = ctx.worldFilter ? ctx.worlds.filter((w) => w.id === ctx.worldFilter) : standardWorlds();
      rules.replaceChildren(
        ...shown.map((world, index) =>
          h(
            "details",
            { open: index === 0 || Boolean(ctx.worldFilter), dataset: { world: world.id } },
            h("summary", {}, names(world).world),
            h("p", {}, front.rules[world.id] || ""),
          ),
        ),
      );
    })
    .catch((err) => showError(box, err));
  return section;
}

function guestForm(refresh, box) {
  const form = h(
    "form",
    {
      class: "row-form",
      id: "guest-form",
      onsubmit: async (ev) => {
        ev.preventDefault();
        try {
          await api("/api/guest", { method: "POST", body: { name: String(new FormData(form).get("name") || "") } });
          await loadMe();
          refresh();
        } catch (err) {
          showError(box, err);
        }
      },
    },
    field(t("guest_name"), h("input", { name: "name", id: "guest-name", autocomplete: "nickname", required: true, maxlength: 64 })),
    h("button", { type: "submit", class: "primary", id: "guest-submit" }, t("play_as_guest")),
  );
  return form;
}

// "Nächster freier Tisch": the first public round of the chosen world still waiting for players.
function quickJoin(box) {
  return h(
    "button",
    {
      type: "button",
      class: "primary",
      id: "quick-join",
      onclick: async () => {
        try {
          const query = ctx.worldFilter ? `?world=${encodeURIComponent(ctx.worldFilter)}` : "";
          const data = await api("/api/games" + query);
          const mine = seats();
          const open = data.games.find((game) => game.status === "lobby" && game.free > 0 && !mine[game.id]);
          if (!open) {
            box.textContent = t("no_open_table");
            return;
          }
          await joinGame(open.id, box);
        } catch (err) {
          showError(box, err);
        }
      },
    },
    t("quick_join"),
  );
}

function mountLobby(main) {
  let games = null;
  function render() {
    if (games) games.dispose();
    games = gamesSection();
    main.replaceChildren(
      h(
        "div",
        { class: "lobby" },
        frontSection(render),
        authSection(render),
        worldPicker(render),
        games,
        myGamesSection(),
        standingSection(),
        codeSection(),
        foundSection(),
      ),
    );
    chrome();
  }
  render();
  return () => games && games.dispose();
}

// -- start ---------------------------------------------------------------------------------
async function start() {
  setLang(initialLang());
  document.getElementById("lang-button").addEventListener("click", () => {
    setLang(lang() === "de" ? "en" : "de");
    loadErrors().then(route);
  });
  const [, worlds, rulesets] = await Promise.all([loadMe(), api("/api/worlds"), api("/api/rulesets"), loadErrors()]);
  ctx.worlds = worlds.worlds;
  ctx.rulesets = rulesets.rulesets;
  window.addEventListener("hashchange", route);
  await route();
}

start();
