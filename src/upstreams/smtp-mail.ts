import type { Transporter } from 'nodemailer';

// Alert e-mail over SMTP (TOLLGATE_SMTP_URL), through nodemailer, loaded only when the gateway is configured to
// send mail (docs/decisions.md "Modules loaded when used"). smtp:// upgrades with STARTTLS when the server offers
// it; smtps:// is TLS from the start. One pooled connection, every send bounded in time.

export interface MailMessage {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface MailSender {
  /** Resolves when the server accepted the message; rejects with its reason (the SMTP code in `responseCode`). */
  send(m: MailMessage): Promise<void>;
  close(): void;
}

const TIMEOUT_MS = 20_000;

export async function createMailSender(url: string): Promise<MailSender> {
  const { createTransport } = await import('nodemailer');
  const transport: Transporter = createTransport({
    url,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  });
  return {
    async send(m) {
      await transport.sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text });
    },
    close: () => transport.close(),
  };
}
