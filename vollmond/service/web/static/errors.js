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
  return sentences.unknown || "…";
}
