export function verifySwitchyardSignature(
  secret: string,
  rawBody: string | Uint8Array,
  header: string | string[] | undefined,
  toleranceSeconds?: number,
): boolean;
