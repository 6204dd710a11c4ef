/**
 * Corpus import: the summary, idempotent re-import (results unchanged), persistence across a
 * restart, canonical URLs and times, malformed lines rejected by line number while the rest
 * lands, and the same through the `newsmatch` CLI.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openService } from '../src/service.js';
import { buildApp } from '../src/http/app.js';
import { DIM, randUnit, vectorB64, writeLines, type Corpus } from './helpers/corpus.js';
import { itemKey, makeQuery, oracleByScore, pickMinScore, recallOf, vec } from './helpers/oracle.js';
import { Rng } from './helpers/rng.js';
import { GATEWAY_HOST, MEDIUM, makeTempDir, startHarness, type Harness } from './helpers/service.js';
import { cli } from './helpers/cli.js';

// ---- small hand-made import files ----

const rng = new Rng(9090);

interface LineOpts {
  url: string;
  source?: string;
  title?: string | null;
  published_at?: string | null;
  revised_at?: string;
  chunks?: unknown[];
  tag?: string;
}

/** A valid import line object (vector_b64 and vector mixed); fields set to null are left out. */
function line(o: LineOpts): Record<string, unknown> {
  const tag = o.tag ?? o.url;
  const title = o.title === undefined ? `Harbour authority approves night shipping for ${tag}` : o.title;
  const l: Record<string, unknown> = {
    url: o.url,
    source: o.source ?? 'Test Wire',
    source_homepage: o.source === 'Other Desk' ? 'https://otherdesk.example/' : 'https://testwire.example/',
    title,
    snippet: `The harbour authority approved night shipping on a trial basis, officials said, after months of talks with residents (${tag}).`,
    text: `The harbour authority approved night shipping. Residents had objected for months. (${tag})`,
    published_at: o.published_at === undefined ? '2025-02-10T08:00:00Z' : o.published_at,
    chunks: o.chunks ?? [
      { text: String(title), vector_b64: vectorB64(randUnit(rng)) },
      { text: `The harbour authority approved night shipping (${tag}).`, vector: Array.from(randUnit(rng)) },
      { text: `Residents had objected for months (${tag}).`, vector_b64: vectorB64(randUnit(rng)) },
    ],
  };
  for (const k of Object.keys(l)) if (l[k] === null) delete l[k];
  if (o.revised_at) l.revised_at = o.revised_at;
  return l;
}

/** Lines 1..17 of a file with good and bad lines interleaved; `bad` lists the rejected ones. */
function mixedFile(): { lines: (string | object)[]; bad: Record<number, RegExp>; goodKeys: string[]; goodArticles: number } {
  const nan = new Float32Array(DIM).fill(0.03);
  nan[5] = NaN;
  const inf = Array.from(randUnit(rng));
  const lines: (string | object)[] = [
    /* 1 */ line({ url: 'https://testwire.example/a' }),
    /* 2 */ '{"url": "https://testwire.example/broken", "title": ',
    /* 3 */ line({ url: 'https://testwire.example/b', published_at: '2025-02-11T09:30:00Z' }),
    /* 4 */ line({ url: 'https://testwire.example/no-title', title: null }),
    /* 5 */ line({ url: 'https://testwire.example/a', revised_at: '2025-02-10T12:00:00Z', tag: 'a, corrected' }),
    /* 6 */ line({ url: 'https://testwire.example/short', chunks: [{ text: 'short vector', vector: Array.from(randUnit(rng)).slice(0, 1023) }] }),
    /* 7 */ line({ url: 'https://testwire.example/zero', chunks: [{ text: 'zero vector', vector: new Array(DIM).fill(0) }] }),
    /* 8 */ line({ url: 'https://testwire.example/f', source: 'Other Desk', published_at: '2025-02-12T10:00:00Z' }),
    /* 9 */ line({ url: 'https://testwire.example/b64-short', chunks: [{ text: 'short b64', vector_b64: vectorB64(new Float32Array(1000).fill(0.03)) }] }),
    /* 10 */ line({ url: 'https://testwire.example/nan', chunks: [{ text: 'NaN b64', vector_b64: vectorB64(nan) }] }),
    /* 11 */ line({ url: 'https://testwire.example/b', tag: 'b, edit without revised_at' }),
    /* 12 */ line({ url: 'https://testwire.example/bad-date', published_at: 'last Tuesday' }),
    /* 13 */ '[1, 2, 3]',
    /* 14 */ (() => {
      const l = line({ url: 'https://testwire.example/no-url' });
      delete l.url;
      return l;
    })(),
    /* 15 */ line({
      url: 'https://testwire.example/string-item',
      chunks: [{ text: 'a string in the vector', vector: [...inf.slice(0, 1023).map(String), '0.1'] }],
    }),
    /* 16 */ line({ url: 'https://testwire.example/b', revised_at: '2025-02-11T18:45:00Z', tag: 'b, updated' }),
    /* 17 */ line({ url: 'https://testwire.example/g', source: 'Other Desk', published_at: '2025-02-13T07:15:00Z' }),
  ];
  return {
    lines,
    bad: {
      2: /./,
      4: /title/i,
      6: /vector|1024|length/i,
      7: /zero|norm|vector/i,
      9: /vector|1024|length/i,
      10: /finite|nan|vector/i,
      11: /revised_at/i,
      12: /published_at|date|time/i,
      13: /./,
      14: /url/i,
      15: /vector|number/i,
    },
    goodKeys: [
      'https://testwire.example/a|2025-02-10T08:00:00Z',
      'https://testwire.example/a|2025-02-10T12:00:00Z',
      'https://testwire.example/b|2025-02-11T09:30:00Z',
      'https://testwire.example/b|2025-02-11T18:45:00Z',
      'https://testwire.example/f|2025-02-12T10:00:00Z',
      'https://testwire.example/g|2025-02-13T07:15:00Z',
    ].sort(),
    goodArticles: 4,
  };
}

/** Reads `N label` or `label: N` / `label=N` for a label of the summary line. */
function summaryNumber(out: string, label: string): number | undefined {
  const lineText = out.split('\n').find((l) => /articles/i.test(l) && /rejected/i.test(l) && /unchanged/i.test(l) && /new revisions/i.test(l));
  if (!lineText) return undefined;
  const labelFirst = /articles\s*[:=]/i.test(lineText);
  const m = labelFirst ? lineText.match(new RegExp(`${label}\\s*[:=]\\s*(\\d+)`, 'i')) : lineText.match(new RegExp(`(\\d+)\\s+${label}`, 'i'));
  return m ? Number(m[1]) : undefined;
}

// ---- the generated corpus: summary, idempotency, persistence ----

describe('importing the generated corpus', () => {
  let h: Harness;
  let corpus: Corpus;
  let snapshot: { chrono: any[]; time: any[]; relevance: any; sources: any };
  let q: Float64Array;
  let min: number;

  async function takeSnapshot() {
    const chrono = (await h.pageAll({ include_edits: true }, 100)).items;
    const time = (await h.pageAll({ vector: vec(q), min_score: min }, 100)).items;
    const rel = await h.match({ vector: vec(q), order: 'relevance', limit: 100, include_edits: true, min_score: -1 });
    expect(rel.status, rel.raw).toBe(200);
    const src = await h.inject({ url: '/v1/sources' });
    expect(src.status, src.raw).toBe(200);
    return { chrono, time, relevance: rel.body, sources: src.body };
  }

  beforeAll(async () => {
    h = await startHarness({ corpus: MEDIUM, env: { EXACT_SCAN_MAX_CHUNKS: '0', INDEX_MIN_CHUNKS: '256' } });
    corpus = h.corpus!;
    q = makeQuery(corpus, new Rng(77), 'story');
    min = pickMinScore(corpus, q, {}, 150);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('the first import summary counts every line, article and revision', () => {
    expect(h.importSummary).toEqual({
      lines: corpus.revisions.length,
      articles: corpus.articles.length,
      newRevisions: corpus.revisions.length,
      unchanged: 0,
      rejected: 0,
      rejections: [],
    });
  });

  it('importing the same file again changes nothing: 0 new revisions, identical results', async () => {
    snapshot = await takeSnapshot();
    expect(snapshot.chrono.length).toBe(corpus.revisions.length);
    const again = await h.service.importFile(h.corpusFile!);
    expect(again).toEqual({
      lines: corpus.revisions.length,
      articles: corpus.articles.length,
      newRevisions: 0,
      unchanged: corpus.revisions.length,
      rejected: 0,
      rejections: [],
    });
    const after = await takeSnapshot();
    expect(after.chrono).toEqual(snapshot.chrono);
    expect(after.time).toEqual(snapshot.time);
    expect(after.relevance).toEqual(snapshot.relevance);
    expect(after.sources).toEqual(snapshot.sources);
  });

  it('a restart on the same data directory keeps records, index, ids and keys', async () => {
    await h.reopen();
    const after = await takeSnapshot();
    expect(after.chrono).toEqual(snapshot.chrono);
    expect(after.time.map(itemKey)).toEqual(snapshot.time.map(itemKey));
    expect(after.time.map((i) => i.id)).toEqual(snapshot.time.map((i) => i.id));
    after.time.forEach((it, i) => expect(Math.abs(it.score - snapshot.time[i].score)).toBeLessThanOrEqual(1e-6));
    expect(after.relevance.items.map((i: any) => i.id)).toEqual(snapshot.relevance.items.map((i: any) => i.id));
    expect(after.sources).toEqual(snapshot.sources);
    const bearer = await h.match({ limit: 1 }, { ...Object.fromEntries(Object.keys(h.gatewayHeaders).map((k) => [k, undefined])), ...h.bearerHeaders });
    expect(bearer.status, bearer.raw).toBe(200);
  });

  it('a missing vector index is rebuilt from the records on start, with the same results', async () => {
    await h.reopen(() => {
      // The search engine (segments + the relevance index) is derived data: only LMDB is kept.
      const engineDir = join(h.env.DATA_DIR, 'engine');
      const files = readdirSync(engineDir);
      expect(files.includes('index.nmi') && files.some((f) => /^seg-/.test(f)), `engine files: ${files.join(', ')}`).toBe(true);
      rmSync(engineDir, { recursive: true, force: true });
    });
    const after = await takeSnapshot();
    expect(after.chrono).toEqual(snapshot.chrono);
    // A retrained index is another approximation: judge it by the oracle, not by the old answers.
    const rec = recallOf(corpus, q, { min_score: min }, after.time.map(itemKey));
    expect(rec.extraneous).toEqual([]);
    expect(rec.recall).toBe(1);
    const top = oracleByScore(corpus, q, { min_score: -1, include_edits: true }).slice(0, 100);
    after.relevance.items.forEach((it: any, i: number) => expect(Math.abs(it.score - (top[i].score as number))).toBeLessThanOrEqual(1e-3));
  });

  it('a cursor issued before the restart still works after it', async () => {
    const page = await h.match({ limit: 10 });
    await h.reopen();
    const next = await h.match({ limit: 10, cursor: page.body.next_cursor });
    expect(next.status, next.raw).toBe(200);
    expect(next.body.items.map((i: any) => i.id)).toEqual(
      snapshot.chrono
        .filter((i: any) => corpus.revisions.find((r) => `${r.url}|${r.eventTime}` === itemKey(i))!.isFirst)
        .slice(10, 20)
        .map((i: any) => i.id),
    );
  });
});

// ---- hand-made files ----

describe('malformed lines', () => {
  let h: Harness;
  let file: string;
  const mixed = mixedFile();

  beforeAll(async () => {
    h = await startHarness({ corpus: null });
    file = join(h.dir, 'mixed.jsonl');
    writeLines(file, mixed.lines);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('each bad line is rejected with its line number and a reason while the rest lands', async () => {
    const s = await h.service.importFile(file);
    const badLines = Object.keys(mixed.bad).map(Number);
    expect(s.lines).toBe(17);
    expect(s.rejected).toBe(badLines.length);
    expect(s.rejections.map((r) => r.line)).toEqual(badLines);
    for (const r of s.rejections) {
      expect(typeof r.reason).toBe('string');
      expect(r.reason, `line ${r.line}`).toMatch(mixed.bad[r.line]);
    }
    expect(s.articles).toBe(mixed.goodArticles);
    expect(s.newRevisions).toBe(mixed.goodKeys.length);
    expect(s.unchanged).toBe(0);

    const { items } = await h.pageAll({ include_edits: true }, 100);
    expect(items.map(itemKey).sort()).toEqual(mixed.goodKeys);
    const firsts = await h.pageAll({}, 100);
    expect(firsts.items.map((i) => i.source_url).sort()).toEqual(['a', 'b', 'f', 'g'].map((x) => `https://testwire.example/${x}`));
    // The rejected edit (line 11) did not become a revision of b; line 16 did.
    const b = items.filter((i) => i.source_url === 'https://testwire.example/b');
    expect(b.map((i) => i.event_time).sort()).toEqual(['2025-02-11T09:30:00Z', '2025-02-11T18:45:00Z']);
    expect(b.find((i) => i.event_time === '2025-02-11T18:45:00Z').body).toContain('b, updated');
  });

  it('the accepted lines are searchable by their vectors and listed in sources', async () => {
    const l = mixed.lines[16] as any; // line 17
    const v = Buffer.from(l.chunks[0].vector_b64, 'base64');
    const q = Array.from({ length: DIM }, (_, i) => v.readFloatLE(i * 4));
    const res = await h.match({ vector: q, order: 'relevance', limit: 1, min_score: -1 });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.items[0].source_url).toBe('https://testwire.example/g');
    expect(res.body.items[0].score).toBeGreaterThan(0.999);
    const src = await h.inject({ url: '/v1/sources' });
    expect(src.status, src.raw).toBe(200);
    expect(src.body.sources.map((s: any) => s.name)).toEqual(['Other Desk', 'Test Wire']);
    expect(src.body.sources.map((s: any) => s.article_count)).toEqual([2, 2]);
  });

  it('a second import of the file adds nothing and rejects the same lines', async () => {
    const s = await h.service.importFile(file);
    expect(s.newRevisions).toBe(0);
    expect(s.unchanged).toBe(mixed.goodKeys.length);
    expect(s.rejections.map((r) => r.line)).toEqual(Object.keys(mixed.bad).map(Number));
  });
});

describe('canonical URLs and times', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ corpus: null });
  });

  afterAll(async () => {
    await h?.close();
  });

  it('URL variants are one article; times are normalised to whole-second UTC', async () => {
    const file = join(h.dir, 'canon.jsonl');
    writeLines(file, [
      line({
        url: 'HTTPS://News.Example.COM/World/Story-7?id=7&utm_source=feed&utm_medium=rss#comments',
        published_at: '2025-03-01T14:00:00+02:00',
        tag: 'v1',
      }),
      line({ url: 'https://news.example.com/World/Story-7?id=7', revised_at: '2025-03-01T13:30:00Z', tag: 'v2' }),
      line({ url: 'https://news.example.com/World/Story-7?id=7#top', revised_at: '2025-03-02T08:00:00.000Z', tag: 'v3' }),
    ]);
    const s = await h.service.importFile(file);
    expect(s).toEqual({ lines: 3, articles: 1, newRevisions: 3, unchanged: 0, rejected: 0, rejections: [] });
    const all = await h.pageAll({ include_edits: true });
    expect(all.items.map((i) => [i.source_url, i.event_time])).toEqual([
      ['https://news.example.com/World/Story-7?id=7', '2025-03-02T08:00:00Z'],
      ['https://news.example.com/World/Story-7?id=7', '2025-03-01T13:30:00Z'],
      ['https://news.example.com/World/Story-7?id=7', '2025-03-01T12:00:00Z'],
    ]);
    const firsts = await h.pageAll({});
    expect(firsts.items.map((i) => [i.source_url, i.event_time])).toEqual([['https://news.example.com/World/Story-7?id=7', '2025-03-01T12:00:00Z']]);
  });

  it('the same line twice in one file is one revision; a first line with revised_at is dated by published_at', async () => {
    const file = join(h.dir, 'dup.jsonl');
    const l = line({ url: 'https://news.example.com/dup', published_at: '2025-03-05T10:00:00Z', tag: 'dup' });
    writeLines(file, [
      l,
      l,
      line({ url: 'https://news.example.com/first-with-revised', published_at: '2025-03-06T10:00:00Z', revised_at: '2025-03-06T11:00:00Z', tag: 'fr' }),
    ]);
    const s = await h.service.importFile(file);
    expect(s).toEqual({ lines: 3, articles: 2, newRevisions: 2, unchanged: 1, rejected: 0, rejections: [] });
    const rows = await h.pageAll({ include_edits: true, since: '2025-03-05T00:00:00Z', until: '2025-03-07T00:00:00Z' });
    expect(rows.items.map((i) => [i.source_url, i.event_time])).toEqual([
      ['https://news.example.com/first-with-revised', '2025-03-06T10:00:00Z'],
      ['https://news.example.com/dup', '2025-03-05T10:00:00Z'],
    ]);
  });

  it('a later file with a known version and a new edit adds only the edit', async () => {
    const file = join(h.dir, 'incremental.jsonl');
    writeLines(file, [
      line({ url: 'https://news.example.com/World/Story-7?id=7&utm_campaign=x', published_at: '2025-03-01T12:00:00Z', tag: 'v1' }),
      line({ url: 'https://news.example.com/World/Story-7?id=7', revised_at: '2025-03-03T09:00:00Z', tag: 'v4' }),
    ]);
    const s = await h.service.importFile(file);
    expect(s).toEqual({ lines: 2, articles: 1, newRevisions: 1, unchanged: 1, rejected: 0, rejections: [] });
    const all = await h.pageAll({ include_edits: true });
    const story = all.items.filter((i) => i.source_url === 'https://news.example.com/World/Story-7?id=7');
    expect(story.map((i) => i.event_time)).toEqual(['2025-03-03T09:00:00Z', '2025-03-02T08:00:00Z', '2025-03-01T13:30:00Z', '2025-03-01T12:00:00Z']);
  });
});

describe('the newsmatch CLI', () => {
  let dir = '';
  let env: Record<string, string> = {};
  let mixedPath = '';
  let goodPath = '';
  const mixed = mixedFile();

  beforeAll(() => {
    dir = makeTempDir('newsmatch-cli-');
    env = { DATA_DIR: join(dir, 'data'), GATEWAY_HOST, LOG_LEVEL: 'silent' };
    mixedPath = join(dir, 'mixed.jsonl');
    goodPath = join(dir, 'good.jsonl');
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('import exits non-zero when a line is rejected, names each line on stderr and prints the summary', () => {
    writeLines(mixedPath, mixed.lines);
    const r = cli(['import', mixedPath], env);
    expect(r.status, r.stderr).not.toBe(0);
    expect(r.status).not.toBeNull();
    for (const n of Object.keys(mixed.bad)) expect(r.stderr).toMatch(new RegExp(`\\bline ${n}:`));
    expect(r.stderr).not.toMatch(/\bline (1|3|5|8|16|17):/);
    // In line order: line 11 is refused by the store at its batch's write, after the parser
    // has refused lines 12 to 15.
    expect([...r.stderr.matchAll(/\bline (\d+):/g)].map((m) => Number(m[1]))).toEqual(Object.keys(mixed.bad).map(Number));
    expect(summaryNumber(r.stdout, 'articles'), r.stdout).toBe(mixed.goodArticles);
    expect(summaryNumber(r.stdout, 'new revisions'), r.stdout).toBe(mixed.goodKeys.length);
    expect(summaryNumber(r.stdout, 'unchanged'), r.stdout).toBe(0);
    expect(summaryNumber(r.stdout, 'rejected'), r.stdout).toBe(Object.keys(mixed.bad).length);
  });

  it('import of a clean file exits 0, and again reports everything unchanged', () => {
    writeLines(goodPath, [
      line({ url: 'https://testwire.example/c1', published_at: '2025-02-20T10:00:00Z' }),
      line({ url: 'https://testwire.example/c2', published_at: '2025-02-20T11:00:00Z' }),
      line({ url: 'https://testwire.example/c1', revised_at: '2025-02-20T15:00:00Z', tag: 'c1 edit' }),
    ]);
    const r = cli(['import', goodPath], env);
    expect(r.status, r.stderr).toBe(0);
    expect(summaryNumber(r.stdout, 'articles'), r.stdout).toBe(2);
    expect(summaryNumber(r.stdout, 'new revisions'), r.stdout).toBe(3);
    expect(summaryNumber(r.stdout, 'rejected'), r.stdout).toBe(0);
    const again = cli(['import', goodPath], env);
    expect(again.status, again.stderr).toBe(0);
    expect(summaryNumber(again.stdout, 'new revisions'), again.stdout).toBe(0);
    expect(summaryNumber(again.stdout, 'unchanged'), again.stdout).toBe(3);
  });

  it('keys create prints a secret (last line) that the service accepts; data imported by the CLI is served, even while it runs', async () => {
    const gw = cli(['keys', 'create', '--scheme', 'gateway', '--name', 'cli test'], env);
    expect(gw.status, gw.stderr).toBe(0);
    const gwSecret = gw.stdout.trim().split('\n').pop()!.trim();
    expect(gwSecret.length).toBeGreaterThanOrEqual(16);
    const br = cli(['keys', 'create'], env);
    expect(br.status, br.stderr).toBe(0);
    const brSecret = br.stdout.trim().split('\n').pop()!.trim();
    expect(brSecret).not.toBe(gwSecret);

    // EXACT_SCAN_MAX_CHUNKS=0: vector queries go through the index, which must catch up.
    const service = await openService(loadConfig({ ...env, EXACT_SCAN_MAX_CHUNKS: '0' }));
    const app = await buildApp(service);
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/match',
        headers: { 'x-gateway-key': gwSecret, 'x-gateway-host': GATEWAY_HOST, 'content-type': 'application/json' },
        payload: JSON.stringify({ include_edits: true, limit: 100 }),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().count).toBe(mixed.goodKeys.length + 3);
      const res2 = await app.inject({ method: 'GET', url: '/v1/sources', headers: { authorization: `Bearer ${brSecret}` } });
      expect(res2.statusCode, res2.body).toBe(200);
      // A gateway secret is not a bearer key, and the other way round.
      const cross = await app.inject({ method: 'GET', url: '/v1/sources', headers: { authorization: `Bearer ${gwSecret}` } });
      expect(cross.statusCode).toBe(401);

      // An import by the CLI while the service runs is served without a restart, vectors included.
      const livePath = join(dir, 'live.jsonl');
      const live = line({ url: 'https://testwire.example/live', published_at: '2025-02-25T10:00:00Z', tag: 'live' });
      writeLines(livePath, [live]);
      const r = cli(['import', livePath], env);
      expect(r.status, r.stderr).toBe(0);
      const after = await app.inject({
        method: 'POST',
        url: '/v1/match',
        headers: { authorization: `Bearer ${brSecret}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ include_edits: true, limit: 100 }),
      });
      expect(after.statusCode, after.body).toBe(200);
      expect(after.json().count).toBe(mixed.goodKeys.length + 4);
      const chunk = (live.chunks as any[])[0];
      const buf = Buffer.from(chunk.vector_b64, 'base64');
      const v = Array.from({ length: DIM }, (_, i) => buf.readFloatLE(i * 4));
      for (const order of ['relevance', 'time']) {
        const hit = await app.inject({
          method: 'POST',
          url: '/v1/match',
          headers: { authorization: `Bearer ${brSecret}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ vector: v, order, min_score: 0.99, limit: 5 }),
        });
        expect(hit.statusCode, hit.body).toBe(200);
        expect(
          hit.json().items.map((i: any) => i.source_url),
          order,
        ).toEqual(['https://testwire.example/live']);
      }
    } finally {
      await app.close();
      await service.close();
    }
  });
});
