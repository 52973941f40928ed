import { GatewayError } from '../errors.js';

/** An error express itself raised while reading a request (the app's last-resort handler). */
export function bodyError(err: unknown, maxBodyBytes: number): GatewayError {
  switch ((err as { type?: string }).type) {
    case 'entity.too.large':
      return new GatewayError('payload_too_large', `The request body is larger than ${maxBodyBytes} bytes.`, {
        details: { max_bytes: maxBodyBytes },
      });
    case 'entity.parse.failed':
      return new GatewayError('invalid_json', 'The request body is not valid JSON.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new GatewayError('unsupported_media_type', 'Send the body as UTF-8 JSON.');
    case 'request.size.invalid':
    case 'request.aborted':
      return new GatewayError('invalid_json', 'The request body was incomplete.');
    default:
      return new GatewayError('invalid_json', 'The request body could not be read.', { cause: err });
  }
}
