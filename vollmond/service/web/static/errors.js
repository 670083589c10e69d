// Errors by code in the page's language (issue 12). The sentences come from the server's
// catalogues (GET /api/errors, table `web.errors`), loaded once per language, so no English
// server message and no raw code ever reaches a German page.

import { lang } from "./i18n.js";

const loaded = {};

/** Load the sentences of the current language (call before rendering a page). */
export async function loadErrors() {
  const current = lang();
  if (loaded[current]) return;
  try {
    const response = await fetch(`/api/errors?lang=${current}`, { credentials: "same-origin" });
    loaded[current] = (await response.json()).errors || {};
  } catch {
    loaded[current] = {};
  }
}

/** Refusals the server words itself, in the client's language (tests/service/test_error_catalogue.py). */
const SERVER_WORDED = new Set(["banned", "muted"]);

function fill(template, params) {
  return template.replace(/\{(\w+)\}/g, (whole, name) => (params && name in params ? String(params[name]) : whole));
}

/** True when the catalogue has a sentence for this code. */
export function knownError(code) {
  return Boolean(code && loaded[lang()]?.[code]);
}

/**
 * The sentence for an error: an ApiError / WebSocket error frame ({code, params, message}).
 * A code without a sentence shows `fallback` (a sentence the server already rendered in this
 * language, such as a rule refusal) or the catalogue's "unknown" sentence.
 */
export function errorText(error, fallback) {
  const sentences = loaded[lang()] || {};
  const code = error?.code;
  if (code && sentences[code]) return fill(sentences[code], error.params);
  if (fallback) return fallback;
  // Codes without a sentence here (a ban, a mute) come with the server's own sentence in the
  // page's language, holding the reason and the expiry the person must always see (O5).
  if (code && SERVER_WORDED.has(code) && error.message) return error.message;
  return sentences.unknown || "…";
}
