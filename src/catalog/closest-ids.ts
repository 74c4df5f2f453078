/**
 * @module catalog/closest-ids
 * The catalog ids closest to a model name the gateway does not know, for the "did you mean"
 * of `model_not_found` (pure). Names are compared without a trailing date or `-latest`
 * (`claude-sonnet-4-7-20260101` is near `claude-sonnet-4-6`) by edit distance; a candidate is
 * close when the distance is small for the name's length, or when it belongs to the same family
 * (the same first word, e.g. every `claude-…` for a `claude-…` name newer than the catalog).
 * Ties go to the longer common prefix, then the shorter id, then the higher version; ids that
 * differ only by a date are offered once, by their shortest form.
 */

/** Names longer than this are not compared (a hostile 10 MB model name costs nothing). */
const MAX_COMPARED = 100;

/** `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `gpt-4o-2024-08-06` → `gpt-4o`. */
function base(id: string): string {
  return id.toLowerCase().replace(/-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, "");
}

function family(id: string): string {
  return id.toLowerCase().split(/[-.:/]/)[0] ?? "";
}

/** Levenshtein distance, one row at a time. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}

function commonPrefix(a: string, b: string): number {
  let length = 0;
  while (length < a.length && length < b.length && a[length] === b[length]) length++;
  return length;
}

/** Up to `limit` ids of `candidates` close to `requested`, closest first. */
export function closestIds(requested: string, candidates: readonly string[], limit = 3): string[] {
  if (requested.length === 0 || requested.length > MAX_COMPARED) return [];
  const wanted = base(requested);
  const tolerance = Math.max(1, Math.floor(wanted.length * 0.35));
  const scored = candidates.flatMap((id) => {
    const distance = editDistance(wanted, base(id));
    const close = distance <= tolerance || family(id) === family(requested);
    return close
      ? [{ id, key: base(id), distance, prefix: commonPrefix(requested.toLowerCase(), id) }]
      : [];
  });
  scored.sort(
    (a, b) =>
      a.distance - b.distance ||
      b.prefix - a.prefix ||
      a.id.length - b.id.length ||
      // The newer of two equally close versions first (`4-6` before `4-5`).
      b.id.localeCompare(a.id, "en", { numeric: true }),
  );
  const seen = new Set<string>();
  const chosen: string[] = [];
  for (const entry of scored) {
    if (seen.has(entry.key)) continue;
    seen.add(entry.key);
    chosen.push(entry.id);
    if (chosen.length === limit) break;
  }
  return chosen;
}
