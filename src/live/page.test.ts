import { describe, expect, it } from 'vitest';
import { assertNotRobotCheck, loadPage } from './page.js';

const titled = (title: string, body = '<p>content</p>') => loadPage(`<html><head><title>${title}</title></head><body>${body}</body></html>`);
const refused = (doc: Document) => {
  try {
    assertNotRobotCheck(doc);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
};

describe('assertNotRobotCheck', () => {
  it('knows the robot checks and bot challenges by their whole title or their markers', () => {
    for (const t of ['Robot Check', 'Just a moment...', 'Attention Required! | Cloudflare', 'Additional Verification Required', 'Verify you are human']) {
      expect([t, refused(titled(t))]).toEqual([t, expect.stringMatching(/robot check|bot challenge/)]);
    }
    expect(refused(titled('Shop', '<form action="/errors/validateCaptcha"></form>'))).toMatch(/robot check/);
    expect(refused(titled('Shop', '<div id="challenge-form"></div>'))).toMatch(/bot challenge/);
  });

  it('lets through a page whose title only mentions those words (a query carries anything)', () => {
    for (const t of [
      'robot check at DuckDuckGo',
      'Amazon.com : robot check',
      'attention required at DuckDuckGo',
      'Just a moment of silence - Google Search',
      'how to verify you are human - News',
    ]) {
      expect([t, refused(titled(t))]).toEqual([t, null]);
    }
  });
});
