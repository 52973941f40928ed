/** The token of an `Authorization: Bearer <token>` header, or undefined (any other scheme included). */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}
