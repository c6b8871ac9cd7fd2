import { z } from 'zod/mini';

/**
 * zod's English messages ("Invalid input: expected string, received undefined"), for the
 * issues whose schema words none itself. zod/mini loads no locale of its own (the classic API
 * set English on its first schema, for the whole process), so every parse whose messages reach
 * a user passes this: they read the same whatever else the process has loaded.
 */
export const englishIssueMessages = z.locales.en().localeError;
