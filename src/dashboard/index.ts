export { type DayCell, type DailyUsage, dailyUsage, ledgerCsv, CSV_HEADER, totals, utcDay, windowStart } from './usage.js';
export { Form } from './form.js';
export { escapeHtml, html, Html, raw } from './html.js';
export {
  errorPage,
  keysPage,
  overviewPage,
  revokePage,
  signInPage,
  ICON_PATH,
  STYLE_PATH,
  usagePage,
  type Frame,
  type KeyRow,
  type LedgerPage,
} from './pages.js';
export { LOGIN_LINK_TTL_MS, SessionStore, type Session } from './sessions.js';
export { ICON_SVG, STYLE_CSS } from './style.js';
export { AccountEmails, normaliseEmail } from './emails.js';
export { type Mailer, signInMail, smtpMailer } from './mailer.js';
