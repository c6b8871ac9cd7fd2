import type { ParsingApiClient } from './parsing-api-client.ts';

/**
 * The parsing-API client the workers hold, whose underlying client a configuration reload
 * (SIGHUP) replaces: a corrected API key or base URL takes effect for the next request,
 * without restarting the workers. The old client is closed once its requests in flight end.
 */
export interface SwitchableClient extends ParsingApiClient {
  replace(next: ParsingApiClient): Promise<void>;
  /** How many times the client was replaced: a request's answer belongs to the key of its generation. */
  readonly generation: number;
}

export function createSwitchableClient(initial: ParsingApiClient): SwitchableClient {
  let current = initial;
  let generation = 0;
  let closing: Promise<void> | undefined;
  return {
    get generation() {
      return generation;
    },
    uploadDocument: (input) => current.uploadDocument(input),
    getDocument: (identifier, options) => current.getDocument(identifier, options),
    findDocuments: (customIdentifier, options) => current.findDocuments(customIdentifier, options),
    async replace(next) {
      const previous = current;
      current = next;
      generation++;
      await previous.close();
    },
    close() {
      closing ??= current.close();
      return closing;
    },
    destroy() {
      closing ??= current.destroy();
      return closing;
    },
  };
}
