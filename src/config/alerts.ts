import { z } from 'zod';
import type { Env } from './index.js';

// Alerts (docs/operator.md "Alerts"): each account chooses its own webhook and e-mail addresses on the dashboard;
// the operator only says how e-mail leaves this gateway. Webhooks need no setting (they go through the SSRF guard,
// TOLLGATE_FETCH_ALLOW); without TOLLGATE_SMTP_URL alerts are webhooks only and the dashboard says so.

/** The variables of this section, spread into the one schema (./index.ts). */
export const alertsEnvShape = {
  /**
   * The SMTP server alert e-mail is sent through: smtp://user:password@host:587 (STARTTLS when offered) or
   * smtps://…:465. A secret (it carries the password). Unset: no e-mail alerts.
   */
  TOLLGATE_SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^/\s]+/, 'an smtp:// or smtps:// URL, e.g. smtps://user:password@mail.example.com')
    .optional(),
  /** The From of alert e-mail: an address, optionally with a name ("tollgate <alerts@example.com>"). */
  TOLLGATE_SMTP_FROM: z
    .string()
    .regex(/^(?:[^<>\r\n]{0,80}<)?[^\s@<>]+@[^\s@<>]+>?$/, 'an e-mail address, e.g. alerts@example.com')
    .optional(),
} as const;

export interface AlertsConfig {
  /** Alert e-mail; undefined when TOLLGATE_SMTP_URL is unset (webhooks only). */
  smtp: { url: string; from: string | undefined } | undefined;
}

export function alertsConfig(env: Env, problems: string[]): AlertsConfig {
  const url = env.TOLLGATE_SMTP_URL;
  if (!url) {
    if (env.TOLLGATE_SMTP_FROM) problems.push('TOLLGATE_SMTP_FROM: only used with TOLLGATE_SMTP_URL');
    return { smtp: undefined };
  }
  return { smtp: { url, from: env.TOLLGATE_SMTP_FROM } };
}
