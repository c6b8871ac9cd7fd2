/**
 * Whether an error from a Redis command means Redis could not be reached or could not take
 * the command for now (it restarts, loads its data, fails over), as opposed to a command
 * Redis refused on its merits. A write that failed for the first reason is worth repeating
 * once Redis is back; one that failed for the second would fail again.
 */

/** ioredis's own messages for a command that never reached a connected Redis (ioredis 6). */
const UNREACHABLE_MESSAGES = [
  "Stream isn't writeable", // enableOfflineQueue: false and no connection
  'Connection is closed.',
  'Command timed out',
  'Reached the max retries per request limit',
  'connect ETIMEDOUT',
  'Socket closed unexpectedly',
];

/** Socket errors of a connection that dropped or was refused. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Replies of a Redis that will take the command shortly: loading its data after a restart,
 * a replica until a failover completes, a cluster slot in migration.
 */
const PASSING_REPLIES = /^(LOADING|READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|BUSY) /;

export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return true;
  if (err.name === 'ReplyError') return PASSING_REPLIES.test(err.message);
  return UNREACHABLE_MESSAGES.some((message) => err.message.startsWith(message));
}
