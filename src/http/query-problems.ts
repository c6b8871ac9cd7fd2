import type { z } from 'zod/mini';

/**
 * A query's issues as the 400 answer lists them: `name: what is wrong`, and the unknown
 * parameters together.
 */
export function queryProblems(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) =>
    issue.code === 'unrecognized_keys'
      ? `unknown parameter(s): ${issue.keys.join(', ')}`
      : `${issue.path.join('.')}: ${issue.message}`,
  );
}
