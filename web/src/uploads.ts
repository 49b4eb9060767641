// Files in messages: uploading one (POST /user_uploads) for the compose box, Zulip's link to it,
// and showing the images and thumbnails messages link, which need this client's credentials:
// fetched once each and shown from memory (blob: URLs).
import type { Api } from './api.ts';

/** Zulip's Markdown for an uploaded file: `[name](/user_uploads/...)`, brackets in the name escaped. */
export const uploadLink = (filename: string, url: string) => `[${filename.replace(/([[\]\\])/g, '\\$1')}](${url})`;

/** Uploads a file; `onProgress` hears how much has gone (0 to 1). Answers its Markdown link. */
export async function uploadFile(api: Api, file: File, onProgress: (sent: number) => void): Promise<string> {
  const form = new FormData();
  form.append('file', file);
  const { url, filename } = await api.upload<{ url: string; filename: string }>('/user_uploads', form, onProgress);
  return uploadLink(filename, url);
}

const images = new Map<string, Promise<string>>();

/** Gives the images under `root` that prepareContent put aside (`data-upload-src`) their file. */
export function showUploadedImages(root: Element | null, api: Api): void {
  for (const img of root?.querySelectorAll<HTMLImageElement>('img[data-upload-src]') ?? []) {
    const path = img.dataset.uploadSrc!;
    img.removeAttribute('data-upload-src');
    let url = images.get(path);
    if (!url) {
      url = api.file(path).then((blob) => URL.createObjectURL(blob));
      images.set(path, url);
      // A failure is not kept: the next showing asks again.
      url.catch(() => images.delete(path));
    }
    url.then(
      (src) => (img.src = src),
      () => img.classList.add('upload-missing'),
    );
  }
}
