// Small helpers: DOM building without innerHTML, the JSON API with CSRF, local storage.

/** h("button", {class: "x", onclick: f}, "text", child) → element. Never parses HTML. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "style" && typeof value === "object") {
      for (const [prop, v] of Object.entries(value)) el.style.setProperty(prop, v);
    } else if (key === "dataset") {
      for (const [k, v] of Object.entries(value)) if (v !== undefined && v !== null) el.dataset[k] = v;
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace a container's children, keeping keyboard focus on the element with the same key. */
export function replaceChildren(container, ...children) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.dataset.key : null;
  container.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  if (key) {
    const again = container.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again) again.focus();
  }
}

const shown = new WeakMap();

/**
 * replaceChildren, unless the new children would show the same (their HTML) and do the same
 * (`state`: what their handlers act on, such as the legal commands). A view comes with every
 * change at the table, and a button replaced between a pointer's press and release loses the
 * click or tap: the buttons stay put while what they offer stays the same.
 */
export function replaceChildrenIfChanged(container, state, ...children) {
  const nodes = children.flat().filter((c) => c !== null && c !== undefined && c !== false);
  const html = nodes.map((n) => (n instanceof Element ? n.outerHTML : String(n instanceof Node ? n.textContent : n))).join("");
  const signature = JSON.stringify(state) + "\n" + html;
  if (shown.get(container) === signature && container.childNodes.length) return;
  shown.set(container, signature);
  replaceChildren(container, nodes);
}

function cookie(name) {
  for (const part of document.cookie.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return "";
}

export class ApiError extends Error {
  constructor(status, code, message, params) {
    super(message || code);
    this.status = status;
    this.code = code;
    this.params = params || {};
  }
}

export async function api(path, { method = "GET", body, timeoutMs } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    if (!cookie("vollmond_csrf")) await fetch("/api/me", { credentials: "same-origin" });
    headers["X-CSRF-Token"] = cookie("vollmond_csrf");
  }
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
    // A request that never answers (a dropped connection) is given up after timeoutMs.
    signal: timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined,
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    throw new ApiError(response.status, data?.error || "http_" + response.status, data?.message, data?.params);
  }
  return data;
}

const SEATS_KEY = "vollmond.seats";

/** Seat tokens by game id, kept across reloads (the seat token is the player's key). */
export function seats() {
  try {
    return JSON.parse(localStorage.getItem(SEATS_KEY) || "{}");
  } catch {
    return {};
  }
}

export function saveSeat(gameId, info) {
  const all = seats();
  all[gameId] = { ...(all[gameId] || {}), ...info, saved: Date.now() };
  localStorage.setItem(SEATS_KEY, JSON.stringify(all));
}

export function forgetSeat(gameId) {
  const all = seats();
  delete all[gameId];
  localStorage.setItem(SEATS_KEY, JSON.stringify(all));
}

/** "light" or "dark": which ink reads on this background colour (#rrggbb). */
export function toneOf(hex) {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex || "");
  if (!m) return "dark";
  const [r, g, b] = m.slice(1).map((x) => {
    const c = parseInt(x, 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.4 ? "light" : "dark";
}

/** Apply a world's colours to the page (CSS custom properties). */
export function applyTheme(world) {
  const root = document.documentElement;
  if (!world) {
    root.style.removeProperty("--primary");
    root.style.removeProperty("--accent");
    root.style.removeProperty("--bg");
    delete root.dataset.world;
    delete root.dataset.tone;
    return;
  }
  root.style.setProperty("--primary", world.colors.primary);
  root.style.setProperty("--accent", world.colors.accent);
  root.style.setProperty("--bg", world.colors.background);
  root.dataset.world = world.id;
  root.dataset.tone = toneOf(world.colors.background);
}
