// A file part of a multipart request, as the transport hands it to the actions that store it.
export interface UploadedFile {
  field: string;
  filename: string;
  /** As the client sent it; empty when the part had no Content-Type. */
  contentType: string;
  data: Buffer;
}
