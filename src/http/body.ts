// Request bodies: read once with a size limit, then decoded into parameters and files the way Zulip
// clients send them (urlencoded, multipart, or a JSON object).
import uWS from './uws.ts';
import { ApiError } from '../errors.ts';
import type { Exchange } from './exchange.ts';
import { parseJsonBody, parseUrlEncoded, type RawParams } from './params.ts';
import type { UploadedFile } from '../domain/uploaded-file.ts';

export function readBody(ex: Exchange, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    ex.res.onData((chunk, isLast) => {
      if (size < 0) return;
      size += chunk.byteLength;
      if (size > limit) {
        size = -1;
        reject(new ApiError(`Request body too large (limit: ${limit} bytes)`, 'BAD_REQUEST', 413));
        return;
      }
      // uWS reuses the chunk's memory after this callback returns, so copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(Buffer.concat(chunks));
    });
  });
}

export function decodeBody(body: Buffer, contentType: string, into: RawParams, files: UploadedFile[]): void {
  if (body.length === 0) return;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') {
    const parts = uWS.getParts(body, contentType);
    if (!parts) throw new ApiError('Malformed multipart body', 'BAD_REQUEST');
    for (const part of parts) {
      const data = Buffer.from(part.data);
      if (part.filename !== undefined) files.push({ field: part.name, filename: part.filename, contentType: part.type ?? '', data });
      else into.set(part.name, data.toString('utf8'));
    }
  } else if (type === 'application/json') {
    parseJsonBody(body.toString('utf8'), into);
  } else {
    parseUrlEncoded(body.toString('utf8'), into);
  }
}
