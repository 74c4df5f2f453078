/**
 * @module spec/warning
 * Typed warnings an adapter returns instead of silently dropping a request setting. They are
 * sent in a response header, so their text keeps to printable ASCII (a client's tool or field
 * name may hold anything).
 */
export type CallWarning =
  | { type: "unsupported"; setting: string; details?: string }
  | { type: "compatibility"; setting: string; details: string }
  | { type: "other"; message: string };

export function formatWarning(warning: CallWarning): string {
  return headerText(warningText(warning));
}

function warningText(warning: CallWarning): string {
  switch (warning.type) {
    case "unsupported":
      return `unsupported:${warning.setting}${warning.details ? ` (${warning.details})` : ""}`;
    case "compatibility":
      return `compatibility:${warning.setting} (${warning.details})`;
    case "other":
      return warning.message;
  }
}

/** Printable ASCII only: anything else becomes `?`. */
function headerText(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?");
}
