/**
 * @module test/support/responses-routes
 * The sandbox routes `/v1/responses` is tested over: OpenAI (served natively by its own
 * Responses API), an OpenAI-compatible vendor, Anthropic and Gemini (translated to chat).
 */
export const RESPONSES_ROUTES = [
  { name: "OpenAI route (native)", model: "gpt-4o-mini", native: true },
  { name: "OpenAI-compatible route (Mistral)", model: "mistral-small-latest", native: false },
  { name: "Anthropic route", model: "claude-haiku-4-5", native: false },
  { name: "Gemini route", model: "gemini-2.5-flash", native: false },
];
