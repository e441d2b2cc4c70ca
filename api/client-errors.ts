/**
 * Requests Node's HTTP parser refuses before fastify sees a request (a header line without a colon, an
 * empty Content-Length, headers past Node's limit, a request not finished in time). Fastify's default
 * answer is its own `{error, message, statusCode}`; this one is the API's error envelope, so every
 * answer a client can get has the shape the OpenAPI document gives it.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from './errors';

function refusalOf(err: NodeJS.ErrnoException): ApiError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new ApiError(408, 'request_timeout', 'the request was not sent in time', true);
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return new ApiError(431, 'headers_too_large', 'the request headers are too large');
  return new ApiError(400, 'invalid_request', 'the request is not valid HTTP');
}

/** fastify's `clientErrorHandler`: `this` is the server instance (for its logger). */
export function clientErrorHandler(
  this: { log: FastifyBaseLogger },
  err: NodeJS.ErrnoException,
  socket: Socket,
): void {
  // A reset socket is gone: nothing to answer (as Node and fastify do).
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const api = refusalOf(err);
  // Never the parser's message or the raw bytes: they may quote what the client sent.
  this.log.debug({ code: err.code, status: api.statusCode }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify(api.toEnvelope());
    socket.write(
      `HTTP/1.1 ${api.statusCode} ${STATUS_CODES[api.statusCode]}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy(err);
}
