/**
 * Job postings end to end: `newsmatch import-jobs` (idempotence, bad lines, skill
 * normalisation, unknown skills), GET /v1/jobs (every parameter, paging, errors), the
 * taxonomies and the market endpoints, `reindex --keyword`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillVocabulary } from '../src/jobs/index.js';
import { cli } from './helpers/cli.js';
import { startHarness, type Harness } from './helpers/service.js';

let h: Harness;
let file: string;

const DAY = 86_400;
const T0 = Date.parse('2026-03-02T09:00:00Z') / 1000; // a Monday
const iso = (t: number) => new Date(t * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface Posting {
  url: string;
  title: string;
  company: string;
  location?: string;
  remote?: boolean;
  employment_type?: string;
  salary_min?: number;
  salary_max?: number;
  salary_currency?: string;
  skills?: string[];
  description?: string;
  posted_at: string;
  source: string;
}

/** 60 generated postings plus a few hand-written ones. */
function postings(): Posting[] {
  const out: Posting[] = [];
  const cities = ['Berlin, Germany', 'San Francisco, CA', 'London, UK', 'Tokyo, Japan'];
  const stacks = [
    ['js', 'React'],
    ['golang', 'k8s', 'postgres'],
    ['Python', 'Machine Learning'],
    ['TypeScript', 'Node.js', 'postgres'],
  ];
  for (let i = 0; i < 60; i++) {
    out.push({
      url: `https://jobs.example/${i}`,
      title: `${['Backend', 'Frontend', 'Data', 'Platform'][i % 4]} Engineer ${i}`,
      company: `Company ${i % 7}`,
      location: cities[i % 4],
      remote: i % 3 === 0,
      employment_type: i % 5 === 0 ? 'Full-time' : 'contract',
      salary_min: 50_000 + i * 1000,
      salary_max: 90_000 + i * 1000,
      salary_currency: 'eur',
      skills: stacks[i % 4],
      description: `We build things. Role number ${i} works on ${['payments', 'search', 'analytics', 'infrastructure'][i % 4]} every day.`,
      // Two postings per day, some in the same second.
      posted_at: iso(T0 + Math.floor(i / 2) * DAY),
      source: 'Example Jobs',
    });
  }
  out.push({
    url: 'https://jobs.example/welder',
    title: 'Pipe Welder',
    company: 'Harbour Works',
    location: 'Hamburg, Germany',
    skills: ['Welding', 'Blockchain Wizardry', 'blockchain wizardry'],
    description: 'Schweißer gesucht für die Werft in Hamburg.',
    posted_at: iso(T0 + 40 * DAY),
    source: 'Trades Board',
  });
  return out;
}

beforeAll(async () => {
  h = await startHarness({ corpus: null });
  file = path.join(h.dir, 'jobs.jsonl');
  const lines = postings().map((p) => JSON.stringify(p));
  lines.splice(3, 0, '{not json');
  lines.splice(7, 0, JSON.stringify({ url: 'https://jobs.example/bad', title: 'x', company: 'y', posted_at: 'yesterday', source: 's' }));
  lines.splice(9, 0, JSON.stringify({ url: 'https://jobs.example/bad2', title: 'x', company: 'y', posted_at: iso(T0), source: 's', salary_min: 5 }));
  lines.splice(11, 0, JSON.stringify({ url: 'https://jobs.example/bad3', title: 'x', company: 'y', posted_at: iso(T0), source: 's', colour: 'red' }));
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

const get = async (url: string) => h.inject({ url });

describe('import-jobs', () => {
  it('imports good lines, reports bad ones by number, and is idempotent', async () => {
    await h.reopen(() => {
      const first = cli(['import-jobs', file], h.env);
      expect(first.stdout).toContain('61 new postings, 0 updated, 0 unchanged, 4 rejected');
      expect(first.stdout).toContain('1 skill names outside the vocabulary');
      expect(first.status).toBe(1);
      expect(first.stderr).toMatch(/line 4: invalid JSON/);
      expect(first.stderr).toMatch(/line 8: posted_at: required RFC 3339/);
      expect(first.stderr).toMatch(/line 10: salary_currency: required with a salary/);
      expect(first.stderr).toMatch(/line 12: unknown field "colour"/);
      const again = cli(['import-jobs', file], h.env);
      expect(again.stdout).toContain('0 new postings, 0 updated, 61 unchanged, 4 rejected');
      const unknown = cli(['jobs', 'unknown-skills'], h.env);
      expect(unknown.status).toBe(0);
      // Counted once per posting version, not per import run or per duplicate spelling.
      expect(unknown.stdout.trim()).toMatch(/^1\s+Blockchain Wizardry$/);
    });
  }, 120_000);

  it('files skills under the vocabulary names and normalises the other fields', async () => {
    const res = await get('/v1/jobs?q=%22Frontend%20Engineer%205%22');
    expect(res.status, res.raw).toBe(200);
    expect(res.body.results.map((r: any) => r.url)).toEqual(['https://jobs.example/5']);
    expect(res.body.results[0]).toMatchObject({
      title: 'Frontend Engineer 5',
      company: 'Company 5',
      location: 'San Francisco, CA',
      remote: false,
      employment_type: 'full_time',
      salary_min: 55_000,
      salary_max: 95_000,
      salary_currency: 'EUR',
      skills: ['Go', 'Kubernetes', 'PostgreSQL'],
      posted_at: iso(T0 + 2 * DAY),
      source: 'Example Jobs',
    });
    const welder = (await get('/v1/jobs?q=welder')).body.results[0];
    expect(welder.skills).toEqual(['Welding']);
    expect(welder.remote).toBeNull();
  });

  it('a changed posting replaces the old one under the same id', async () => {
    const before = (await get('/v1/jobs?q=welder')).body.results[0];
    const changed = path.join(h.dir, 'changed.jsonl');
    fs.writeFileSync(changed, `${JSON.stringify({ ...postings().at(-1), title: 'Senior Pipe Welder', skills: ['Welding', 'Forklift Operation'] })}\n`);
    await h.reopen(() => {
      const r = cli(['import-jobs', changed], h.env);
      expect(r.stdout).toContain('0 new postings, 1 updated');
    });
    const after = (await get('/v1/jobs?q=welder')).body.results;
    expect(after).toHaveLength(1);
    expect(after[0].id).toBe(before.id);
    expect(after[0].title).toBe('Senior Pipe Welder');
    expect((await get('/v1/jobs?skills=forklift%20operation')).body.results.map((r: any) => r.id)).toEqual([before.id]);
  }, 120_000);
});

describe('GET /v1/jobs', () => {
  it('pages newest first to the end with no duplicate', async () => {
    const seen: any[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 30; page++) {
      const res = await get(`/v1/jobs?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, res.raw).toBe(200);
      seen.push(...res.body.results);
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    expect(cursor).toBeNull();
    expect(seen).toHaveLength(61);
    expect(new Set(seen.map((r) => r.id)).size).toBe(61);
    const times = seen.map((r) => Date.parse(r.posted_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('filters by skills (aliases accepted, all required), location, remote and since', async () => {
    const ids = async (qs: string) => (await get(`/v1/jobs?limit=100&${qs}`)).body.results.map((r: any) => r.url).sort();
    const goK8s = await ids('skills=golang,k8s');
    expect(goK8s).toHaveLength(15);
    expect(await ids('skills=Go,Kubernetes,PostgreSQL')).toEqual(goK8s);
    expect(await ids('skills=postgres')).toHaveLength(30);
    expect(await ids('skills=Go,React')).toEqual([]);
    expect(await ids('location=san%20francisco')).toHaveLength(15);
    expect(await ids('location=francisco%20san')).toEqual([]);
    expect(await ids('location=germany&skills=js')).toHaveLength(15);
    expect(await ids('remote=true')).toHaveLength(20);
    expect(await ids('remote=false')).toHaveLength(40);
    expect(await ids(`since=${iso(T0 + 25 * DAY)}`)).toHaveLength(11);
    expect(await ids('q=analytics&skills=python')).toHaveLength(15);
    expect(await ids('q=analytics&skills=js')).toEqual([]);
  });

  it('searches the description with the /v1/news language, folding German, and highlights', async () => {
    const res = await get('/v1/jobs?q=schweisser%20werft');
    expect(res.body.results.map((r: any) => r.url)).toEqual(['https://jobs.example/welder']);
    expect(res.body.results[0].highlight).toContain('<mark>Schweißer</mark>');
    expect((await get('/v1/jobs?q=payments%20-search&limit=100')).body.count).toBe(15);
    expect((await get('/v1/jobs?q=payments%20OR%20search&limit=100')).body.count).toBe(30);
    expect((await get('/v1/jobs?q=infra*&limit=100')).body.count).toBe(15);
  });

  it('refuses bad parameters with catalogue codes', async () => {
    const cases: [string, number, string][] = [
      ['skills=Go,Cobol%20Wizardry', 400, 'unknown_skill'],
      ['skills=', 400, 'bad_request'],
      ['remote=yes', 400, 'bad_request'],
      ['limit=101', 400, 'bad_request'],
      ['since=last%20week', 400, 'bad_request'],
      ['colour=red', 400, 'bad_request'],
      ['q=%21%21', 400, 'empty_query'],
      ['location=%2C%2C', 400, 'bad_request'],
      ['cursor=abc', 400, 'bad_cursor'],
    ];
    for (const [qs, status, code] of cases) {
      const res = await get(`/v1/jobs?${qs}`);
      expect([qs, res.status, res.body.error]).toEqual([qs, status, code]);
    }
    const unknown = await get('/v1/jobs?skills=Go,Cobol%20Wizardry');
    expect(unknown.body.message).toContain('"Cobol Wizardry"');
    expect(unknown.body.message).not.toContain('"Go"');
  });

  it('binds a cursor to its filters', async () => {
    const first = await get('/v1/jobs?limit=5&skills=postgres');
    const cursor = encodeURIComponent(first.body.next_cursor);
    expect((await get(`/v1/jobs?limit=9&skills=postgres&cursor=${cursor}`)).status).toBe(200);
    expect((await get(`/v1/jobs?limit=5&skills=PostgreSQL&cursor=${cursor}`)).status).toBe(200); // the same skill
    for (const changed of [
      'skills=postgres,Go',
      'skills=postgres&remote=true',
      'skills=postgres&q=role',
      'skills=postgres&location=berlin',
      `skills=postgres&since=${iso(T0)}`,
    ]) {
      const res = await get(`/v1/jobs?limit=5&${changed}&cursor=${cursor}`);
      expect([changed, res.body.error]).toEqual([changed, 'bad_cursor']);
    }
  });

  it('never answers a 5xx to random parameters', async () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = ['a', 'é', '東', '"', '-', '*', ' ', 'OR', ',', '%', '&', '=', '\u0000', 'go', 'k8s', '😀'];
    const word = () => Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
    for (let i = 0; i < 150; i++) {
      const params = ['q', 'skills', 'location', 'remote', 'since', 'limit', 'cursor'].filter(() => rnd() < 0.4);
      const qs = params.map((p) => `${p}=${encodeURIComponent(word())}`).join('&');
      const res = await get(`/v1/jobs?${qs}`);
      expect(res.status, `${qs}: ${res.raw}`).toBeLessThan(500);
      if (res.status !== 200) expect(['bad_request', 'empty_query', 'unknown_skill', 'bad_cursor']).toContain(res.body.error);
    }
  });
});

describe('taxonomies', () => {
  it('lists the vocabulary: at least 400 skills over the required categories, filterable', async () => {
    const all = await get('/v1/taxonomies/skills');
    expect(all.status).toBe(200);
    expect(all.body.count).toBeGreaterThanOrEqual(400);
    for (const c of ['software', 'data', 'design', 'sales', 'finance', 'health', 'trades']) expect(all.body.categories).toContain(c);
    const trades = await get('/v1/taxonomies/skills?category=trades');
    expect(trades.body.skills.every((s: any) => s.category === 'trades')).toBe(true);
    expect(trades.body.skills.map((s: any) => s.name)).toContain('Welding');
    const astrology = await get('/v1/taxonomies/skills?category=astrology');
    expect([astrology.status, astrology.body.error]).toEqual([400, 'bad_request']);
    // The message lists the categories there are.
    expect(astrology.body.message).toMatch(/^category: one of ([a-z]+, )+[a-z]+, got "astrology"$/);
    expect(astrology.body.message).toContain('trades');
    const js = all.body.skills.find((s: any) => s.name === 'JavaScript');
    expect(js.aliases).toContain('js');
  });

  it('keeps the vocabulary unambiguous: every name and alias names one skill', () => {
    const v = skillVocabulary();
    expect(v.resolve('K8S')?.name).toBe('Kubernetes');
    expect(v.resolve('  javascript ')?.name).toBe('JavaScript');
    for (const s of v.skills) {
      expect(s.name).not.toContain(',');
      for (const a of s.aliases) expect(v.resolve(a), a).toBe(s);
    }
  });

  it('lists sources with language and country where known', async () => {
    await h.reopen(() => {
      const add = cli(
        [
          'sources',
          'add',
          '--name',
          'Hamburger Blatt',
          '--homepage',
          'https://blatt.example',
          '--feed',
          'https://blatt.example/rss',
          '--language',
          'de',
          '--country',
          'de',
        ],
        h.env,
      );
      expect(add.status, add.stderr).toBe(0);
      const bad = cli(['sources', 'add', '--name', 'X', '--homepage', 'https://x.example', '--feed', 'https://x.example/rss', '--country', 'Germany'], h.env);
      expect(bad.status).toBe(2);
    });
    h.service.store.writeRevisions([
      {
        url: 'https://times.co.uk/a',
        source: 'UK Times',
        sourceHomepage: 'https://times.co.uk/',
        title: 't',
        body: 'b',
        text: '',
        publishedAt: T0,
        chunks: [],
      },
    ]);
    const res = await get('/v1/taxonomies/sources');
    expect(res.status, res.raw).toBe(200);
    const by = new Map(res.body.sources.map((s: any) => [s.name, s]));
    expect(by.get('Hamburger Blatt')).toMatchObject({ language: 'de', country: 'DE', article_count: 0 });
    expect(by.get('UK Times')).toMatchObject({ language: null, country: 'GB', article_count: 1 });
  }, 120_000);
});

describe('market intelligence', () => {
  it('counts postings per skill per week with zeros, and co-occurring skills', async () => {
    const res = await get(`/v1/market/skills?skills=golang,postgres&interval=week&since=${iso(T0)}&until=${iso(T0 + 29 * DAY)}`);
    expect(res.status, res.raw).toBe(200);
    const [go, pg] = res.body.skills;
    expect(go.name).toBe('Go');
    expect(go.category).toBe('software');
    expect(go.total).toBe(15);
    expect(pg.total).toBe(30);
    expect(go.series[0]).toEqual({ period_start: '2026-03-02', postings: 4 });
    expect(go.series.map((x: any) => x.period_start)).toEqual(pg.series.map((x: any) => x.period_start));
    expect(go.series).toHaveLength(5);
    expect(go.series.reduce((a: number, x: any) => a + x.postings, 0)).toBe(15);
    expect(go.co_occurring.slice(0, 2).sort((a: any, b: any) => a.name.localeCompare(b.name))).toEqual([
      { name: 'Kubernetes', postings: 15 },
      { name: 'PostgreSQL', postings: 15 },
    ]);
    const monthly = await get('/v1/market/skills?skills=Go&interval=month');
    expect(monthly.body.skills[0].series).toEqual([{ period_start: '2026-03-01', postings: 15 }]);
    expect((await get('/v1/market/skills?skills=Cobol%20Wizardry')).body.error).toBe('unknown_skill');
    expect((await get('/v1/market/skills')).body.error).toBe('bad_request');
    expect((await get('/v1/market/skills?skills=Go&interval=day')).body.error).toBe('bad_request');
    expect((await get('/v1/market/skills?skills=Go&interval=week&since=1990-01-01T00:00:00Z&until=2026-01-01T00:00:00Z')).body.error).toBe('bad_request');
  });

  it('counts articles per day and source for a keyword query, GET and a vector POST', async () => {
    const rev = (i: number, source: string, day: number, title: string) => ({
      url: `https://news.example/${source}/${i}`,
      source,
      title,
      body: title,
      text: '',
      publishedAt: T0 + day * DAY + i,
      chunks: [{ text: title, vector: unit(i % 2) }],
    });
    h.service.store.writeRevisions([
      rev(1, 'Wire', 0, 'Port strike spreads'),
      rev(2, 'Wire', 0, 'Port strike talks'),
      rev(3, 'Daily', 0, 'Port strike ends'),
      rev(4, 'Daily', 2, 'Port strike returns'),
      rev(5, 'Daily', 2, 'Harvest festival'),
    ]);
    const res = await get('/v1/market/news-volume?q=strike');
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual({
      total: 4,
      days: [
        { date: '2026-03-02', count: 3, by_source: { Wire: 2, Daily: 1 } },
        { date: '2026-03-04', count: 1, by_source: { Daily: 1 } },
      ],
      sources: [
        { name: 'Daily', count: 2 },
        { name: 'Wire', count: 2 },
      ],
    });
    expect((await get('/v1/market/news-volume?q=strike&sources=Wire')).body.total).toBe(2);
    expect((await get('/v1/market/news-volume?q=strike&sources=Nope')).body.error).toBe('unknown_source');
    expect((await get('/v1/market/news-volume?q=--')).body.error).toBe('empty_query');
    const post = await h.inject({ method: 'POST', url: '/v1/market/news-volume', payload: { vector: Array.from(unit(1)), min_score: 0.9 } });
    expect(post.status, post.raw).toBe(200);
    expect(post.body.total).toBe(3); // revisions 1, 3, 5
    const bad = await h.inject({ method: 'POST', url: '/v1/market/news-volume', payload: { vector: [1, 2] } });
    expect([bad.status, bad.body.error]).toEqual([400, 'bad_request']);
  });

  it('takes a date-only since/until as /v1/news does (a whole UTC day), GET and POST alike', async () => {
    const volume = async (bounds: Record<string, string>) => {
      const post = await h.inject({ method: 'POST', url: '/v1/market/news-volume', payload: { vector: Array.from(unit(1)), min_score: 0.9, ...bounds } });
      expect(post.status, post.raw).toBe(200);
      const get_ = await get(`/v1/market/news-volume?q=strike&${new URLSearchParams(bounds)}`);
      expect(get_.status, get_.raw).toBe(200);
      return [post.body.total, get_.body.total];
    };
    // Day 0 (2026-03-02) holds revisions 1-3, day 2 revisions 4 and 5 (the test above).
    expect(await volume({ since: '2026-03-03' })).toEqual(await volume({ since: '2026-03-03T00:00:00Z' }));
    expect(await volume({ since: '2026-03-03' })).toEqual([1, 1]);
    expect(await volume({ until: '2026-03-03' })).toEqual([2, 3]);
    expect(await volume({ until: '2026-03-03' })).toEqual(await volume({ until: '2026-03-03T23:59:59Z' }));
    expect(await volume({ since: '2026-03-02', until: '2026-03-02' })).toEqual([2, 3]);
    expect(await volume({ since: '2026-03-03', until: '2026-03-03' })).toEqual([0, 0]);
    const bad = await h.inject({ method: 'POST', url: '/v1/market/news-volume', payload: { vector: Array.from(unit(1)), since: '03/03/2026' } });
    expect([bad.status, bad.body.message]).toEqual([
      400,
      'since: an RFC 3339 date-time (2026-05-01T00:00:00Z) or a date (2026-05-01, a whole UTC day), got "03/03/2026"',
    ]);
  });
});

describe('reindex --keyword', () => {
  it('rebuilds news and jobs from LMDB and answers the same', async () => {
    const jobsBefore = (await get('/v1/jobs?limit=100&skills=postgres')).body.results.map((r: any) => r.id);
    const newsBefore = (await get('/v1/news?q=strike&limit=100')).body.results.map((r: any) => r.id);
    expect(newsBefore.length).toBe(4);
    await h.reopen(() => {
      const r = cli(['reindex', '--keyword'], h.env);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/keyword index rebuilt: \d+ revisions, 62 job posting versions/);
      expect(cli(['reindex'], h.env).status).toBe(2);
    });
    expect((await get('/v1/jobs?limit=100&skills=postgres')).body.results.map((r: any) => r.id)).toEqual(jobsBefore);
    expect((await get('/v1/news?q=strike&limit=100')).body.results.map((r: any) => r.id)).toEqual(newsBefore);
  }, 120_000);
});

/** A unit vector along axis `k`. */
function unit(k: number): Float32Array {
  const v = new Float32Array(1024);
  v[k] = 1;
  return v;
}
