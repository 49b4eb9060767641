// Zulip's emoji images, as Zulip ships them: Google's set from the emoji-datasource-google package
// (64 px PNGs), one file per emoji at /static/emoji/<set>/<code>.png, read from the package when
// asked for, so only the emoji a page shows are sent. The set's name carries the package's
// version, so browsers may keep each image for good. Codes are Zulip's (no U+FE0F).
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type uWS from 'uWebSockets.js';
import { statusLine } from './exchange.ts';

const PACKAGE_JSON = createRequire(import.meta.url).resolve('emoji-datasource-google/package.json');
const IMAGES_DIR = path.join(path.dirname(PACKAGE_JSON), 'img', 'google', '64');

/** The name of the set in image URLs (the web client's build names it the same way). */
export const EMOJI_SET = `google-${(JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version}`;

let files: Map<string, string> | null = null;

/** The package's image of an emoji code (its files are named with U+FE0F where Unicode qualifies them). */
function imageOf(code: string): string | undefined {
  files ??= new Map(
    readdirSync(IMAGES_DIR)
      .filter((name) => name.endsWith('.png'))
      .map((name) => [
        name
          .slice(0, -'.png'.length)
          .split('-')
          .filter((hex) => hex !== 'fe0f')
          .join('-'),
        name,
      ]),
  );
  const file = files.get(code);
  return file && path.join(IMAGES_DIR, file);
}

export function attachEmojiImages(uws: uWS.TemplatedApp): void {
  uws.get(`/static/emoji/${EMOJI_SET}/:file`, (res, req) => {
    const code = /^([0-9a-f]{2,6}(?:-[0-9a-f]{2,6})*)\.png$/.exec(req.getParameter(0) ?? '')?.[1];
    const file = code && imageOf(code);
    // Not an emoji of the set: the router's 404.
    if (!file) {
      req.setYield(true);
      return;
    }
    let aborted = false;
    res.onAborted(() => (aborted = true));
    readFile(file).then(
      (body) => {
        if (aborted) return;
        res.cork(() => {
          res.writeHeader('Content-Type', 'image/png');
          res.writeHeader('Cache-Control', 'public, max-age=31536000, immutable');
          res.writeHeader('X-Content-Type-Options', 'nosniff');
          res.end(body);
        });
      },
      () => {
        if (!aborted) res.cork(() => res.writeStatus(statusLine(500)).end());
      },
    );
  });
}
