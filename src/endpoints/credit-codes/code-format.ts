/**
 * @module endpoints/credit-codes/code-format
 * The credit code format: `SWY-` and three groups of four characters from a 32-letter alphabet
 * without the look-alikes 0, 1, I and O (60 random bits), e.g. `SWY-7KQM-X4TB-9HRA`. What a
 * person types is read leniently — any case, dashes and spaces anywhere or missing, the `SWY`
 * part optional — and brought to the one canonical form whose SHA-256 hash is stored.
 */
import { randomInt } from "node:crypto";
import { hashSecret } from "../../auth/index.ts";

const ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ";
const LEAD = "SWY";
const GROUPS = 3;
const GROUP_LENGTH = 4;
const BODY_LENGTH = GROUPS * GROUP_LENGTH;
const BODY = new RegExp(`^[${ALPHABET}]{${BODY_LENGTH}}$`);

function formatBody(body: string): string {
  const groups: string[] = [];
  for (let at = 0; at < body.length; at += GROUP_LENGTH)
    groups.push(body.slice(at, at + GROUP_LENGTH));
  return [LEAD, ...groups].join("-");
}

export function generateCreditCode(): string {
  let body = "";
  for (let i = 0; i < BODY_LENGTH; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return formatBody(body);
}

/** The canonical form of a typed code, or undefined when it cannot be a code at all. */
export function canonicalCreditCode(input: string): string | undefined {
  if (input.length > 100) return undefined;
  let compact = input.toUpperCase().replace(/[\s-]+/g, "");
  if (compact.length === LEAD.length + BODY_LENGTH && compact.startsWith(LEAD))
    compact = compact.slice(LEAD.length);
  return BODY.test(compact) ? formatBody(compact) : undefined;
}

/** The part of a code shown after creation: `SWY-` and the first group. */
export function creditCodePrefix(code: string): string {
  return code.slice(0, LEAD.length + 1 + GROUP_LENGTH);
}

export function hashCreditCode(canonical: string): string {
  return hashSecret(canonical);
}
