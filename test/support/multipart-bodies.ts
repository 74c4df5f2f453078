/**
 * @module test/support/multipart-bodies
 * Hostile `multipart/form-data` bodies for `POST /v1/images/edits`: forms built from the
 * endpoint's schema (text fields and PNG files), then with a hostile field value, a hostile or
 * repeated field name (`__proto__`, `constructor`, a file where text is expected and the other way
 * round), bytes that are not an image, or a broken multipart structure.
 */
import fc from "fast-check";
import { NOT_UTF8, toBytes } from "./hostile-values.ts";
import { pngBytes } from "./image-fixtures.ts";

const BOUNDARY = "----switchyard-hostile";

interface Part {
  name: string;
  /** Text of a field, or the bytes of a file. */
  value: string | Buffer;
  filename?: string;
}

export interface MultipartBody {
  kind: string;
  bytes: Buffer;
  contentType: string;
}

function encode(parts: Part[], options: { closed?: boolean; boundary?: string } = {}): Buffer {
  const boundary = options.boundary ?? BOUNDARY;
  const chunks = parts.flatMap((part) => {
    const disposition =
      part.filename === undefined
        ? `form-data; name="${part.name}"`
        : `form-data; name="${part.name}"; filename="${part.filename}"`;
    const type = part.filename === undefined ? "" : "Content-Type: image/png\r\n";
    const value = typeof part.value === "string" ? toBytes(part.value) : part.value;
    return [
      toBytes(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`),
      value,
      Buffer.from("\r\n"),
    ];
  });
  if (options.closed !== false) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

const PNG = pngBytes(16, 16);
const PNG_ALPHA = pngBytes(16, 16, { alpha: true });

const hostileText = fc.oneof(
  fc.constantFrom(
    "",
    "0",
    "-1",
    "11",
    "1e400",
    "NaN",
    "9007199254740993",
    "99999999999999999999",
    "auto",
    "1024x1024",
    "0x0",
    "99999x99999",
    "\u0000",
    "\ud800",
    NOT_UTF8,
    '{"__proto__":{"x":1}}',
    "[".repeat(5000),
  ),
  fc.integer({ min: 1000, max: 300_000 }).map((length) => "x".repeat(length)),
  fc.string({ maxLength: 32 }),
);

const FIELDS = ["model", "prompt", "n", "size", "quality", "background", "output_format"];

const validForm = fc
  .record({
    model: fc.constantFrom("imgmodel-2", "imgmodel-1", "legacy-img-2", "pictor-image-2.0", "nope"),
    prompt: fc.string({ minLength: 1, maxLength: 40 }),
    n: fc.option(fc.constantFrom("1", "2"), { nil: undefined }),
    size: fc.option(fc.constantFrom("1024x1024", "256x256", "auto", "1536x1024"), {
      nil: undefined,
    }),
    quality: fc.option(fc.constantFrom("low", "auto", "hd"), { nil: undefined }),
    images: fc.integer({ min: 0, max: 3 }),
    mask: fc.boolean(),
  })
  .map((form): Part[] => [
    ...FIELDS.flatMap((name) => {
      const value = (form as Record<string, unknown>)[name];
      return typeof value === "string" ? [{ name, value }] : [];
    }),
    ...Array.from({ length: form.images }, (_, index) => ({
      name: form.images > 1 ? "image[]" : "image",
      value: form.mask ? PNG_ALPHA : PNG,
      filename: `image-${index}.png`,
    })),
    ...(form.mask ? [{ name: "mask", value: PNG_ALPHA, filename: "mask.png" }] : []),
  ]);

const hostileName = fc.constantFrom(
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "image",
  "image[]",
  "mask",
  "model",
  "n",
  "",
  "unknown_field",
  NOT_UTF8,
);

/** Edit forms: valid, with one hostile part added or one field's value replaced, or broken. */
export const multipartBodies: fc.Arbitrary<MultipartBody> = fc
  .oneof(
    validForm.map((parts) => ({ kind: "valid", parts, closed: true })),
    fc
      .tuple(validForm, hostileName, hostileText, fc.boolean())
      .map(([parts, name, value, asFile]) => ({
        kind: "extra part",
        parts: [
          ...parts,
          asFile
            ? { name, value: Buffer.from(value.slice(0, 1000)), filename: "x.png" }
            : { name, value },
        ],
        closed: true,
      })),
    fc.tuple(validForm, fc.constantFrom(...FIELDS), hostileText).map(([parts, name, value]) => ({
      kind: "replaced field",
      parts: [...parts.filter((part) => part.name !== name), { name, value }],
      closed: true,
    })),
    validForm.map((parts) => ({ kind: "unclosed", parts, closed: false })),
  )
  .map(({ kind, parts, closed }) => ({
    kind,
    bytes: encode(parts, { closed }),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  }));

/** Bodies whose framing is wrong: no boundary, another boundary, JSON, nothing at all. */
export const brokenMultipart: MultipartBody[] = [
  { kind: "no boundary", bytes: encode([]), contentType: "multipart/form-data" },
  {
    kind: "other boundary",
    bytes: encode([{ name: "model", value: "imgmodel-2" }], { boundary: "other" }),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  },
  {
    kind: "json",
    bytes: Buffer.from('{"model":"imgmodel-2","prompt":"x"}'),
    contentType: "application/json",
  },
  {
    kind: "empty",
    bytes: Buffer.alloc(0),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  },
  {
    kind: "garbage",
    bytes: Buffer.from([0xff, 0x00, 0x2d, 0x2d, 0x0d, 0x0a]),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  },
];
