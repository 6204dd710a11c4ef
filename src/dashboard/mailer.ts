/**
 * Sign-in links by mail, through the operator's SMTP server (SMTP_URL) with nodemailer. A mail
 * is sent off the request: the page says the same whether or not an account has the address,
 * and takes as long either way.
 */
import type { Transporter } from 'nodemailer';
import { LOGIN_LINK_TTL_MS } from './sessions.js';

export interface Mailer {
  /** Sends one plain-text mail; rejects when the server refused it or could not be reached. */
  send(to: string, subject: string, text: string): Promise<void>;
}

/** A mailer over SMTP: `url` is smtp:// or smtps:// (nodemailer's connection URL), `from` the sender. */
export function smtpMailer(url: string, from: string): Mailer {
  // nodemailer is imported with the first mail, not at start-up.
  let transport: Promise<Transporter> | undefined;
  return {
    async send(to, subject, text) {
      transport ??= import('nodemailer').then((m) => m.default.createTransport(url));
      await (await transport).sendMail({ from, to, subject, text });
    },
  };
}

/** The mail that carries a sign-in link. */
export function signInMail(url: string): { subject: string; text: string } {
  return {
    subject: 'Your newsmatch sign-in link',
    text: [
      'Open this link to sign in to your newsmatch account:',
      '',
      url,
      '',
      `It works once, within ${LOGIN_LINK_TTL_MS / 60_000} minutes. If you did not ask for it, ignore this mail: nothing happens without the link.`,
      '',
    ].join('\n'),
  };
}
