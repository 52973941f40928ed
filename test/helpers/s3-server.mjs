// An S3-compatible server for tests (@20minutes/s3rver: the S3 REST API with SigV4 verification, objects on
// disk), run in its own process so that the gateway's memory can be measured apart from it. Started by
// test/helpers/s3.ts: argv = [directory, bucket, port?]; prints {"port"} once listening; exits when stdin closes.
import S3rver from '@20minutes/s3rver';

const [directory, bucket, port] = process.argv.slice(2);

// SigV4 percent-encodes every character but A-Z a-z 0-9 - _ . ~ in the canonical query; s3rver builds it with
// encodeURIComponent, which leaves !'()* bare, so a presigned URL whose query holds one (an RFC 5987
// Content-Disposition override does) fails its check. This process runs nothing else: make the encoding strict.
const encode = globalThis.encodeURIComponent;
globalThis.encodeURIComponent = (value) =>
  encode(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port ?? 0),
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});

// A private bucket, as S3 buckets are by default: a request with no signature at all is AccessDenied (s3rver
// would serve it anonymously).
server.middleware.unshift(async (ctx, next) => {
  const signed = ctx.get('authorization') || 'X-Amz-Signature' in ctx.query || 'Signature' in ctx.query;
  if (!signed) {
    ctx.status = 403;
    ctx.type = 'application/xml';
    ctx.body =
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';
    return;
  }
  await next();
});

const { port: bound } = await server.run();
process.stdout.write(`${JSON.stringify({ port: bound })}\n`);
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
