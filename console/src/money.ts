/**
 * @module console/money
 * Money as the console shows it: integer micro-USD in, text out, with integer (BigInt) math
 * only, so no amount is ever rounded by a float. `formatMicros(1_500_000)` → `"1.50 USD"`,
 * `formatMicros(123)` → `"0.000123 USD"`. `parseAmount("2.5")` → `2_500_000n` for forms.
 */

const MICROS_PER_UNIT = 1_000_000n;

/** Accepts what the APIs send (a JSON number, or a string of digits) and BigInt. */
export type Micros = number | bigint | string;

export function toBigInt(value: Micros): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not an integer amount: ${value}`);
    return BigInt(value);
  }
  if (!/^-?\d+$/.test(value.trim())) throw new RangeError(`not an integer amount: ${value}`);
  return BigInt(value.trim());
}

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * `minDigits` fraction digits always (default 2), more as needed up to six, so every micro
 * shows: 1_000_000 → "1.00 USD", 1_234_567 → "1.234567 USD", -500_000 → "-0.50 USD".
 */
export function formatMicros(
  value: Micros,
  currency = "USD",
  options: { minDigits?: number } = {},
): string {
  const micros = toBigInt(value);
  const negative = micros < 0n;
  const magnitude = negative ? -micros : micros;
  const whole = magnitude / MICROS_PER_UNIT;
  let fraction = (magnitude % MICROS_PER_UNIT).toString().padStart(6, "0");
  const minDigits = Math.max(0, Math.min(6, options.minDigits ?? 2));
  while (fraction.length > minDigits && fraction.endsWith("0")) fraction = fraction.slice(0, -1);
  const number = groupThousands(whole.toString()) + (fraction ? `.${fraction}` : "");
  return `${negative ? "-" : ""}${number} ${currency}`;
}

/** A signed amount for ledgers: "+1.50 USD" / "-0.25 USD". */
export function formatSignedMicros(value: Micros, currency = "USD"): string {
  const micros = toBigInt(value);
  return micros > 0n ? `+${formatMicros(micros, currency)}` : formatMicros(micros, currency);
}

/**
 * A decimal amount typed by a person ("12", "0.5", "1,000.25") to micro-units; `undefined`
 * when it is not a plain decimal with at most six fraction digits.
 */
export function parseAmount(text: string): bigint | undefined {
  const cleaned = text.trim().replace(/,/g, "");
  const match = /^(-)?(\d*)(?:\.(\d{0,6}))?$/.exec(cleaned);
  if (!match || (match[2] === "" && (match[3] ?? "") === "")) return undefined;
  const whole = BigInt(match[2] || "0");
  const fraction = BigInt((match[3] ?? "").padEnd(6, "0"));
  const micros = whole * MICROS_PER_UNIT + fraction;
  return match[1] ? -micros : micros;
}

/** Compact counts for charts and tables: 1234567 → "1,234,567". */
export function formatCount(value: number | bigint): string {
  return groupThousands(BigInt(typeof value === "number" ? Math.trunc(value) : value).toString());
}
