/**
 * Every upload the mock accepted, in order, for tests to inspect and await. `waitForUploads`
 * resolves on the upload event itself, so tests never poll or sleep.
 */

export interface ReceivedFile {
  /** The `filename` of the `file` part (the `fileName` field is in `fields`). */
  fileName: string;
  /** The part's Content-Type as sent. */
  contentType: string;
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
  /** The bytes themselves; absent when the mock was created with `retainFileBytes: false`. */
  bytes?: Buffer;
}

export interface ReceivedUpload {
  documentIdentifier: string;
  /** The Authorization header exactly as received. */
  authorization: string | undefined;
  /** Every text field by name, values in arrival order. */
  fields: Record<string, string[]>;
  /** null for an upload by `url`. */
  file: ReceivedFile | null;
  /** The query parameters of the request (e.g. `snake_case`), so a test sees what was asked. */
  query: Record<string, string>;
  /** ISO 8601. */
  receivedAt: string;
}

export type UploadListener = (upload: ReceivedUpload) => void;

export interface UploadLog {
  readonly uploads: readonly ReceivedUpload[];
  record(upload: ReceivedUpload): void;
  /** Calls `listener` for each later upload; returns the function that unsubscribes. */
  onUpload(listener: UploadListener): () => void;
  /** Resolves with all uploads once there are at least `count`; rejects if closed first. */
  waitForUploads(count: number): Promise<ReceivedUpload[]>;
  /** Rejects every pending wait with `reason`. */
  close(reason: Error): void;
}

export function createUploadLog(): UploadLog {
  const uploads: ReceivedUpload[] = [];
  const listeners = new Set<UploadListener>();
  const waits = new Set<{
    count: number;
    resolve: (uploads: ReceivedUpload[]) => void;
    reject: (e: Error) => void;
  }>();
  let closedWith: Error | undefined;

  return {
    uploads,
    record(upload) {
      uploads.push(upload);
      for (const listener of [...listeners]) listener(upload);
      for (const wait of [...waits]) {
        if (uploads.length < wait.count) continue;
        waits.delete(wait);
        wait.resolve([...uploads]);
      }
    },
    onUpload(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    waitForUploads(count) {
      if (uploads.length >= count) return Promise.resolve([...uploads]);
      if (closedWith) return Promise.reject(closedWith);
      return new Promise((resolve, reject) => waits.add({ count, resolve, reject }));
    },
    close(reason) {
      closedWith = reason;
      for (const wait of waits) wait.reject(reason);
      waits.clear();
      listeners.clear();
    },
  };
}

/** An upload as `GET /_mock/uploads` shows it: no bytes, and no credential. */
export type PublicUpload = Omit<ReceivedUpload, 'file'> & { file: Omit<ReceivedFile, 'bytes'> | null };

export function publicView(upload: ReceivedUpload): PublicUpload {
  const { file } = upload;
  return {
    ...upload,
    // The mock's /_mock routes have no authentication, and a developer may have put a real
    // key in PARSER_API_KEY while running in mock mode: only the scheme is shown.
    authorization: upload.authorization === undefined ? undefined : redact(upload.authorization),
    file:
      file === null
        ? null
        : { fileName: file.fileName, contentType: file.contentType, size: file.size, sha256: file.sha256 },
  };
}

function redact(header: string): string {
  const scheme = header.trim().split(/\s+/)[0] ?? '';
  return `${scheme} [redacted]`;
}
