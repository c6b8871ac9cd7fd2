import type { FromHeaderResult } from '../sender/parse-from-header.ts';

/**
 * A mailbox provider that asks the new destination to confirm automatic forwarding by mail
 * (README, "Forwarding confirmations"). Such a message must reach a person: until someone
 * follows its link or types its code, the provider forwards nothing.
 */
export interface ForwardingProvider {
  readonly name: string;
  /** Header From addresses its confirmations come from, lower case. */
  readonly senders: readonly string[];
  /** The confirmation code, in the subject or the text (first group). */
  readonly code: RegExp;
  /** The confirmation link in the text. */
  readonly link: RegExp;
}

/**
 * Gmail sends "(#123456789) Gmail Forwarding Confirmation - Receive Mail from …" from
 * forwarding-noreply@google.com, with the code and a mail-settings.google.com link; the subject
 * and text follow the account's language, the sender, the `(#code)` and the link do not.
 * Outlook.com and Microsoft 365 forward without asking the destination, so they send none.
 */
export const FORWARDING_PROVIDERS: readonly ForwardingProvider[] = [
  {
    name: 'Gmail',
    senders: ['forwarding-noreply@google.com'],
    code: /\(#(\d{4,20})\)|\b(?:code|Code)\b\D{0,40}?(\d{6,20})\b/,
    link: /https:\/\/mail-settings\.google\.com\/mail\/[^\s<>"')\]]+/,
  },
];

/** Characters of the text kept in the record: a confirmation is a few hundred. */
export const MAX_CONFIRMATION_TEXT = 8000;

export interface ForwardingConfirmation {
  provider: string;
  /** The confirmation code; null when neither subject nor text shows one. */
  code: string | null;
  /** The confirmation link; null when the text shows none (or was not read). */
  link: string | null;
  /** The message's text, at most MAX_CONFIRMATION_TEXT characters; null when it has none. */
  text: string | null;
}

/** The provider whose forwarding confirmation the header From says this is, or null. Pure. */
export function forwardingProviderOf(sender: FromHeaderResult): ForwardingProvider | null {
  if (!sender.ok) return null;
  const address = sender.address.address.toLowerCase();
  return FORWARDING_PROVIDERS.find((provider) => provider.senders.includes(address)) ?? null;
}

/** What a person needs of the confirmation: its code, its link and its text. Pure. */
export function readConfirmation(
  provider: ForwardingProvider,
  subject: string | null,
  text: string | null,
): ForwardingConfirmation {
  const kept = text === null ? null : text.slice(0, MAX_CONFIRMATION_TEXT);
  const codeMatch = provider.code.exec(subject ?? '') ?? (kept === null ? null : provider.code.exec(kept));
  const code = codeMatch?.slice(1).find((group) => group !== undefined) ?? null;
  const link = kept === null ? null : (provider.link.exec(kept)?.[0] ?? null);
  return { provider: provider.name, code, link, text: kept };
}
