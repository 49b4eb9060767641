// Thumbnails of uploaded images, in Zulip's formats (zerver/lib/thumbnail.py): clients are told
// the formats at register, messages show the first one that suits the image, and a format is
// named like `840x560-anim.webp`.

export interface ThumbnailFormat {
  extension: string;
  maxWidth: number;
  maxHeight: number;
  animated: boolean;
}

/** A thumbnail as made and recorded on the image's row (Zulip's StoredThumbnailFormat). */
export interface StoredThumbnail {
  extension: string;
  max_width: number;
  max_height: number;
  animated: boolean;
  content_type: string;
  width: number;
  height: number;
  byte_size: number;
}

/** What every image gets; messages name the first one whose animation matches the image's. */
export const THUMBNAIL_OUTPUT_FORMATS: readonly ThumbnailFormat[] = [
  { extension: 'webp', maxWidth: 840, maxHeight: 560, animated: true },
  { extension: 'webp', maxWidth: 840, maxHeight: 560, animated: false },
];

/** Also made for image types browsers cannot show, to stand in for the original. */
export const TRANSCODED_IMAGE_FORMAT: ThumbnailFormat = { extension: 'webp', maxWidth: 4032, maxHeight: 3024, animated: false };

/** The image types we read and thumbnail. */
export const THUMBNAIL_ACCEPT_IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/avif',
  'image/gif',
  'image/heic',
  'image/jpeg',
  'image/png',
  'image/tiff',
  'image/webp',
]);

export function formatName(f: ThumbnailFormat): string {
  return `${f.maxWidth}x${f.maxHeight}${f.animated ? '-anim' : ''}.${f.extension}`;
}

export function storedFormat(t: StoredThumbnail): ThumbnailFormat {
  return { extension: t.extension, maxWidth: t.max_width, maxHeight: t.max_height, animated: t.animated };
}

/** Where a thumbnail lies among the uploads, and its URL after `/user_uploads/`. */
export function thumbnailPath(pathId: string, format: ThumbnailFormat): string {
  return `thumbnail/${pathId}/${formatName(format)}`;
}

/** The formats an image gets: still images no animated ones. */
export function formatsFor(frames: number, inlineType: boolean): ThumbnailFormat[] {
  const out = THUMBNAIL_OUTPUT_FORMATS.filter((f) => frames > 1 || !f.animated);
  return inlineType ? out : [...out, TRANSCODED_IMAGE_FORMAT];
}

/** The thumbnail a message shows (Zulip's get_default_thumbnail_url). */
export function defaultFormat(frames: number): ThumbnailFormat {
  return THUMBNAIL_OUTPUT_FORMATS.find((f) => f.animated === frames > 1) ?? THUMBNAIL_OUTPUT_FORMATS[0]!;
}

/** `server_thumbnail_formats` of the register state. */
export function serverThumbnailFormats(): Array<Record<string, unknown>> {
  return THUMBNAIL_OUTPUT_FORMATS.map((f) => ({
    name: formatName(f),
    max_width: f.maxWidth,
    max_height: f.maxHeight,
    format: f.extension,
    animated: f.animated,
  }));
}
