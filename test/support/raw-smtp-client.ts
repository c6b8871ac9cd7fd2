/**
 * The former name of the one test SMTP client, kept only for hostile-mime.test.ts, which is
 * being changed on another branch; it goes once that file imports smtp-session.ts.
 */
export { SmtpSession as RawSmtpClient } from './smtp-session.ts';
