/**
 * Launch listings (8 credits each): the listing site's daily
 * leaderboard (today is the site's Pacific-time day, or `date=YYYY-MM-DD` for a past one),
 * filtered by `q` on name, tagline, slug or topic; and one launch's page by slug, 404
 * not_found when the site has none. The launched product's own site is never read.
 */
import { AppError } from '../../errors.js';
import { bad, pageParam, patternParam, stringParam } from '../declare.js';
import type { LiveEndpoint } from '../scraper.js';
import { leaderboardPath, pacificDay } from './day.js';
import type { Launch, LaunchDetail } from './parse.js';

export const FAMILY = 'launches';
/** The first day the listing site's leaderboard has. */
const FIRST_DAY = '2013-11-24';

const matches = (l: Launch, needle: string) => [l.name, l.tagline ?? '', l.slug, ...l.topics].some((field) => field.toLowerCase().includes(needle));

export function launchEndpoints(baseUrl: string, clock: () => number) {
  const base = baseUrl.replace(/\/+$/, '');

  const list: LiveEndpoint<{ date: string; q: string | null; page: number }, Launch> = {
    engine: 'launches',
    family: FAMILY,
    params: {
      // Unsent: today on the site's Pacific-time calendar (check).
      date: patternParam(/^\d{4}-\d{2}-\d{2}$/, 'a day as YYYY-MM-DD', '2026-05-01'),
      q: stringParam(200, { description: 'Keeps launches whose name, tagline, slug or topic contains it.' }),
      page: pageParam('single'),
    },
    check(q) {
      const today = pacificDay(new Date(clock()));
      if (q.date === null) {
        (q as { date: string }).date = today;
        return;
      }
      const d = new Date(`${q.date}T00:00:00Z`);
      if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== q.date) throw bad(`date: not a calendar day, got ${JSON.stringify(q.date)}`);
      if (q.date > today) throw bad(`date: ${q.date} is after today on the listing site (${today}, Pacific time)`);
      if (q.date < FIRST_DAY) throw bad(`date: the leaderboard starts on ${FIRST_DAY}`);
    },
    async run(q, call) {
      const page = await call.get(`${base}${leaderboardPath(q.date)}`);
      const all = await call.parse('parseLeaderboard', page.html, new URL(base).origin);
      const needle = q.q?.toLowerCase();
      return { results: needle ? all.filter((l) => matches(l, needle)) : all, extra: { date: q.date } };
    },
  };

  const product: LiveEndpoint<{ slug: string }, LaunchDetail> = {
    engine: 'launches',
    family: FAMILY,
    params: {
      slug: patternParam(/^[a-z0-9][a-z0-9-]{0,119}$/, 'a launch slug (lower-case letters, digits and dashes) from /v1/launches', 'example-app', {
        required: true,
      }),
    },
    async run(q, call) {
      const page = await call.get(`${base}/posts/${q.slug}`, { accept404: true });
      const detail = page.status === 404 ? null : await call.parse('parseLaunch', page.html, new URL(base).origin);
      if (detail === null) throw new AppError('not_found', `no launch with slug ${JSON.stringify(q.slug)} on the listing site`);
      return [detail];
    },
  };

  return { list, product };
}
