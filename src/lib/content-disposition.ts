// The Content-Disposition a stored file is served with: inline, its name in RFC 5987 form (UTF-8,
// percent-encoded), so any name is safe in a header.

export function inlineDisposition(filename: string): string {
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `inline; filename*=UTF-8''${encoded}`;
}
