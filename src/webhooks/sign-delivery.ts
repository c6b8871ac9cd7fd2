import { createHmac } from 'node:crypto';

/** The header each delivery is signed in (README, "Webhooks": how a receiver verifies it). */
export const signatureHeader = 'x-ingest-signature';

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with the receiver's secret.
 * The time is signed with the body, so a receiver that bounds its age refuses a replay.
 */
export function signDelivery(secret: string, body: string, unixSeconds: number): string {
  const signature = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${signature}`;
}
