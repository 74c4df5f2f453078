/**
 * @module test/support/prometheus-text
 * A strict reader of the Prometheus text exposition format (version 0.0.4): `# HELP` and
 * `# TYPE` lines, then samples `name{label="value",…} value`. It throws on anything the format
 * does not allow — a malformed line, a bad name, an unescaped label value, a sample of a family
 * without a `TYPE`, a family typed twice, a histogram without `+Inf` or whose buckets decrease —
 * so a scrape that parses is one Prometheus accepts. `read` sums the samples of a name whose
 * labels include the given ones.
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name → type. */
  types: Map<string, MetricType>;
  samples: Sample[];
  /** Sum of the samples named `name` whose labels include `labels` (0 when there are none). */
  read(name: string, labels?: Record<string, string>): number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  // Prometheus reads values with Go's ParseFloat, which takes NaN in any case; prom-client writes
  // the event-loop lag of a process that has not sampled it yet as `Nan`.
  if (text.toLowerCase() === "nan") return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text))
    throw new Error(`bad sample value '${text}' in: ${line}`);
  return Number(text);
}

/** `{a="x",b="y\"z"}` → labels; the index just past the closing brace. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let at = start + 1;
  while (line[at] !== "}") {
    const equals = line.indexOf("=", at);
    if (equals < 0) throw new Error(`bad labels in: ${line}`);
    const name = line.slice(at, equals);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name '${name}' in: ${line}`);
    if (name in labels) throw new Error(`label '${name}' twice in: ${line}`);
    if (line[equals + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let value = "";
    let index = equals + 2;
    for (;;) {
      const char = line[index];
      if (char === undefined) throw new Error(`unterminated label value in: ${line}`);
      if (char === '"') break;
      if (char === "\\") {
        const next = line[index + 1];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`bad escape in: ${line}`);
        index += 2;
        continue;
      }
      value += char;
      index++;
    }
    labels[name] = value;
    at = index + 1;
    if (line[at] === ",") at++;
    else if (line[at] !== "}") throw new Error(`bad label separator in: ${line}`);
  }
  return { labels, end: at + 1 };
}

/** The family a sample belongs to (`x_bucket` of histogram `x` → `x`). */
function familyOf(name: string, types: Map<string, MetricType>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const type = types.get(base);
    if (type === "histogram" || (type === "summary" && suffix !== "_bucket")) return base;
  }
  return undefined;
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, MetricType>();
  const samples: Sample[] = [];
  if (text.length > 0 && !text.endsWith("\n"))
    throw new Error("exposition must end with a newline");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!match) continue; // a plain comment
      const [, kind, name, rest] = match;
      if (!NAME.test(name!)) throw new Error(`bad metric name in: ${line}`);
      if (kind === "TYPE") {
        if (!TYPES.has(rest!)) throw new Error(`bad type in: ${line}`);
        if (types.has(name!)) throw new Error(`${name} typed twice`);
        types.set(name!, rest as MetricType);
      }
      continue;
    }
    const nameEnd = line.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`bad sample line: ${line}`);
    const name = line.slice(0, nameEnd);
    if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
    let labels: Record<string, string> = {};
    let rest = line.slice(nameEnd);
    if (rest.startsWith("{")) {
      const parsed = parseLabels(line, nameEnd);
      labels = parsed.labels;
      rest = line.slice(parsed.end);
    }
    const fields = rest.trim().split(/\s+/);
    if (!rest.startsWith(" ") || fields.length < 1 || fields.length > 2)
      throw new Error(`bad sample line: ${line}`);
    const value = parseValue(fields[0]!, line);
    if (!familyOf(name, types)) throw new Error(`sample of an untyped family: ${line}`);
    samples.push({ name, labels, value });
  }
  checkHistograms(samples, types);
  return {
    types,
    samples,
    read(name, wanted = {}) {
      return samples
        .filter(
          (sample) =>
            sample.name === name &&
            Object.entries(wanted).every(([label, value]) => sample.labels[label] === value),
        )
        .reduce((sum, sample) => sum + sample.value, 0);
    },
  };
}

/** Each histogram series has a `+Inf` bucket equal to its `_count`, and buckets never decrease. */
function checkHistograms(samples: Sample[], types: Map<string, MetricType>): void {
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  for (const sample of samples) {
    const family = familyOf(sample.name, types);
    if (!family || types.get(family) !== "histogram") continue;
    const { le, ...rest } = sample.labels;
    const key = `${family}${JSON.stringify(rest)}`;
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith("_bucket")) {
      if (le === undefined) throw new Error(`bucket without le: ${sample.name}`);
      entry.buckets.push([parseValue(le, sample.name), sample.value]);
    } else if (sample.name.endsWith("_count")) entry.count = sample.value;
  }
  for (const [key, { buckets, count }] of series) {
    const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
    const last = sorted.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY) throw new Error(`${key} has no +Inf bucket`);
    if (last[1] !== count) throw new Error(`${key}: +Inf bucket differs from _count`);
    for (let i = 1; i < sorted.length; i++)
      if (sorted[i]![1] < sorted[i - 1]![1]) throw new Error(`${key}: buckets decrease`);
  }
}
