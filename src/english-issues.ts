import en from 'zod/v4/locales/en.js';

/**
 * zod's English messages ("Invalid input: expected string, received undefined"), for the
 * issues whose schema words none itself. zod/mini loads no locale of its own (the classic API
 * set English on its first schema, for the whole process), so every parse whose messages reach
 * a user passes this: they read the same whatever else the process has loaded. The English
 * locale alone is imported: `z.locales` would bundle every language zod has (about 300 KB of
 * code an idle daemon would hold).
 */
export const englishIssueMessages = en().localeError;
