/**
 * Debian's chromium for the browser tests, driven by playwright-core (never a downloaded
 * browser). A browser test is skipped only where /usr/bin/chromium is missing and CI is not set:
 * CI installs chromium, so there it always runs (and fails if it cannot start).
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_BROWSER = existsSync(CHROMIUM) || Boolean(process.env.CI);

/** Headless, no sandbox (containers), and nothing that reaches the network by itself. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
