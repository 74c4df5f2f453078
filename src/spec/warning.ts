/**
 * @module spec/warning
 * Typed warnings an adapter returns instead of silently dropping a request setting.
 */
export type CallWarning =
  | { type: "unsupported"; setting: string; details?: string }
  | { type: "compatibility"; setting: string; details: string }
  | { type: "other"; message: string };

export function formatWarning(warning: CallWarning): string {
  switch (warning.type) {
    case "unsupported":
      return `unsupported:${warning.setting}${warning.details ? ` (${warning.details})` : ""}`;
    case "compatibility":
      return `compatibility:${warning.setting} (${warning.details})`;
    case "other":
      return warning.message;
  }
}
