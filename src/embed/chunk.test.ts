import { describe, expect, it } from 'vitest';
import { chunkRevision, splitSentences, type ChunkOptions } from './chunk.js';

/**
 * Stand-in tokenizer: a run of letters or digits, each punctuation mark, and each Han, Hiragana or Katakana
 * character counts one token. The service passes the real bge-m3 tokenizer's count instead.
 */
const TOKEN =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|(?:(?![\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])[\p{L}\p{N}])+|[^\s\p{L}\p{N}]/gu;
const countTokens = (t: string) => (t.match(TOKEN) ?? []).length;

const opts = (minTokens: number, maxTokens: number, locale?: string): ChunkOptions => ({ countTokens, minTokens, maxTokens, locale });
const visible = (s: string) => s.replace(/\s+/g, '');

// Each case: language, paragraph, its exact sentences. Every abbreviation below is one ICU splits after.
const CASES: [string, string, string[]][] = [
  [
    'en',
    'Dr. Smith told reporters on Tuesday that the clinic would reopen on Jan. 5 next year. U.S. officials, who asked not ' +
      'to be named, said the decision followed a review by the state health board. The review, led by Prof. Alan Reyes ' +
      "of St. Mary's Hospital, found no lasting damage. J. K. Rowling, a longtime donor, pledged $2 million to the " +
      'rebuilding fund, and Acme Corp. matched the gift. "It is a turning point," said Mr. Okafor, the clinic\'s ' +
      'director. The clinic was founded in 1990. Its shop still sells soap, towels, books, etc. Staff will return in stages.',
    [
      'Dr. Smith told reporters on Tuesday that the clinic would reopen on Jan. 5 next year.',
      'U.S. officials, who asked not to be named, said the decision followed a review by the state health board.',
      "The review, led by Prof. Alan Reyes of St. Mary's Hospital, found no lasting damage.",
      'J. K. Rowling, a longtime donor, pledged $2 million to the rebuilding fund, and Acme Corp. matched the gift.',
      '"It is a turning point," said Mr. Okafor, the clinic\'s director.',
      // A number before a capital and "etc." before a capital are real sentence ends.
      'The clinic was founded in 1990.',
      'Its shop still sells soap, towels, books, etc.',
      'Staff will return in stages.',
    ],
  ],
  [
    'de',
    'Die Stadtverwaltung hat am 3. Oktober neue Regeln für den Nahverkehr vorgestellt. Dr. Petra Weber, die Leiterin ' +
      'des Verkehrsamts, sprach von einem „überfälligen Schritt“. Betroffen sind z. B. Busse, Straßenbahnen bzw. ' +
      'Regionalzüge. Nach Angaben der Stadt nutzen ca. 250.000 Menschen täglich den Nahverkehr. Die Linie Nr. 7 soll ab ' +
      'dem 1. Januar alle zehn Minuten fahren. Im Jahr 2019 waren es noch 12. Prof. Hans Becker begrüßte die Pläne.',
    [
      'Die Stadtverwaltung hat am 3. Oktober neue Regeln für den Nahverkehr vorgestellt.',
      'Dr. Petra Weber, die Leiterin des Verkehrsamts, sprach von einem „überfälligen Schritt“.',
      'Betroffen sind z. B. Busse, Straßenbahnen bzw. Regionalzüge.',
      'Nach Angaben der Stadt nutzen ca. 250.000 Menschen täglich den Nahverkehr.',
      'Die Linie Nr. 7 soll ab dem 1. Januar alle zehn Minuten fahren.',
      'Im Jahr 2019 waren es noch 12.',
      'Prof. Hans Becker begrüßte die Pläne.',
    ],
  ],
  [
    'fr',
    'M. Dupont, le maire de la ville, a annoncé lundi la fermeture du pont. Mme Martin, son adjointe, a précisé que les ' +
      "travaux dureraient six mois. « Nous n'avons pas le choix. » Les habitants devront emprunter l'av. Jean-Jaurès " +
      "pendant toute la durée du chantier. Selon la préfecture, environ 12 000 véhicules passent chaque jour sur l'ouvrage. " +
      "« Est-ce vraiment nécessaire ? » a demandé un commerçant. Mme. Leroy, présidente de l'association des riverains, " +
      "s'est dite inquiète.",
    [
      'M. Dupont, le maire de la ville, a annoncé lundi la fermeture du pont.',
      'Mme Martin, son adjointe, a précisé que les travaux dureraient six mois.',
      // ICU leaves the closing » (after its French space) at the start of the next sentence.
      "« Nous n'avons pas le choix. »",
      "Les habitants devront emprunter l'av. Jean-Jaurès pendant toute la durée du chantier.",
      "Selon la préfecture, environ 12 000 véhicules passent chaque jour sur l'ouvrage.",
      '« Est-ce vraiment nécessaire ? » a demandé un commerçant.',
      "Mme. Leroy, présidente de l'association des riverains, s'est dite inquiète.",
    ],
  ],
  [
    'es',
    'La Sra. García, alcaldesa de Valencia, inauguró ayer el nuevo hospital. El edificio, situado en la Avda. del Puerto ' +
      'núm. 45, costó 80 millones de euros. Según el Dr. Martínez, director del centro, atenderá a unos 300.000 pacientes ' +
      'al año. ¿Llegará a tiempo para el invierno? ¡Eso esperamos! Los trabajos comenzaron en 2021 y sufrieron varios ' +
      'retrasos. Dña. Carmen Ruiz, vecina del barrio, agradeció la paciencia de todos.',
    [
      'La Sra. García, alcaldesa de Valencia, inauguró ayer el nuevo hospital.',
      'El edificio, situado en la Avda. del Puerto núm. 45, costó 80 millones de euros.',
      'Según el Dr. Martínez, director del centro, atenderá a unos 300.000 pacientes al año.',
      '¿Llegará a tiempo para el invierno?',
      '¡Eso esperamos!',
      'Los trabajos comenzaron en 2021 y sufrieron varios retrasos.',
      'Dña. Carmen Ruiz, vecina del barrio, agradeció la paciencia de todos.',
    ],
  ],
  [
    'ja',
    '東京都は３日、新しい防災計画を発表した。計画では、首都直下地震に備えて避難所を２割増やす。小池知事は「都民の命を守る' +
      'ことが最優先だ。」と述べた。専門家からは評価する声が上がっている！一方で、費用はどうなるのか？「必ず確保する」と担当者は話した。',
    [
      '東京都は３日、新しい防災計画を発表した。',
      '計画では、首都直下地震に備えて避難所を２割増やす。',
      // ICU splits after 。」 although と continues the sentence.
      '小池知事は「都民の命を守ることが最優先だ。」と述べた。',
      '専門家からは評価する声が上がっている！',
      // ICU returns "…のか？「" + "必ず…": the opening bracket goes with the sentence it opens.
      '一方で、費用はどうなるのか？',
      '「必ず確保する」と担当者は話した。',
    ],
  ],
  [
    'zh',
    '北京市政府周三公布了新的空气治理方案。方案提出，到2030年细颗粒物浓度要下降三成。市民王先生说：“这是好消息！”不过，' +
      '也有人担心执行难度。这些目标真的能实现吗？专家表示，关键在于监督。',
    [
      '北京市政府周三公布了新的空气治理方案。',
      '方案提出，到2030年细颗粒物浓度要下降三成。',
      '市民王先生说：“这是好消息！”',
      '不过，也有人担心执行难度。',
      '这些目标真的能实现吗？',
      '专家表示，关键在于监督。',
    ],
  ],
];

/** Checks every property chunkRevision promises for one input. */
function expectWellFormed(title: string, text: string, o: ChunkOptions): string[] {
  const chunks = chunkRevision(title, text, o);
  expect(chunks[0]).toBe(title.replace(/\s+/g, ' ').trim());
  const body = chunks.slice(1);
  for (const c of chunks) {
    expect(c.trim()).toBe(c);
    expect(c).not.toBe('');
  }
  for (const c of body) expect(countTokens(c)).toBeLessThanOrEqual(o.maxTokens);
  expect(visible(body.join(''))).toBe(visible(text));
  // A chunk under minTokens only where joining either neighbour would pass maxTokens.
  body.forEach((c, i) => {
    if (countTokens(c) >= o.minTokens) return;
    if (i > 0) expect(countTokens(`${body[i - 1]} ${c}`)).toBeGreaterThan(o.maxTokens);
    if (i + 1 < body.length) expect(countTokens(`${c} ${body[i + 1]}`)).toBeGreaterThan(o.maxTokens);
  });
  expect(chunkRevision(title, text, o)).toEqual(chunks);
  return chunks;
}

describe('splitSentences', () => {
  it.each(CASES)('splits %s news prose into whole sentences', (locale, text, sentences) => {
    expect(splitSentences(text, locale)).toEqual(sentences);
  });

  it('gives the same sentences without a locale hint', () => {
    for (const [, text, sentences] of CASES) expect(splitSentences(text)).toEqual(sentences);
  });

  it('collapses whitespace, drops empty lines and treats every line break as a hard boundary', () => {
    expect(splitSentences('  The  port\treopened.   Ships\u00a0queued. \n\n \r\nDr.\nSmith arrived.\n')).toEqual([
      'The port reopened.',
      'Ships queued.',
      'Dr.',
      'Smith arrived.',
    ]);
    expect(splitSentences(' \n\t ')).toEqual([]);
  });

  it('keeps initials, lowercase continuations and German ordinals inside the sentence', () => {
    expect(splitSentences('Yahoo! said George R. R. Martin would speak. Er kam zum 3. Mal, im 21. Jahrhundert, am 2. März. Ende.')).toEqual([
      'Yahoo! said George R. R. Martin would speak.',
      'Er kam zum 3. Mal, im 21. Jahrhundert, am 2. März.',
      'Ende.',
    ]);
  });

  it('keeps sentence ends before a capital after lowercase words that are also abbreviations elsewhere', () => {
    // "No." matches only capitalised; "no." is the word.
    expect(splitSentences('She said no. No. 10 Downing Street declined to comment.')).toEqual(['She said no.', 'No. 10 Downing Street declined to comment.']);
  });
});

describe('chunkRevision', () => {
  const title = ' Port  strike\nends ';
  const text =
    'The port of Rotterdam reopened on Monday. Dock workers ended a strike that had lasted eight days. Ships queued ' +
    'outside the harbour overnight.\n\nUnion leaders said the deal raises wages by 6 percent. Employers called it fair.\n' +
    'Talks will resume in June.';

  it('puts the collapsed headline first and closes groups at a paragraph break once they have minTokens', () => {
    expect(expectWellFormed(title, text, opts(8, 40))).toEqual([
      'Port strike ends',
      'The port of Rotterdam reopened on Monday. Dock workers ended a strike that had lasted eight days. Ships queued outside the harbour overnight.',
      'Union leaders said the deal raises wages by 6 percent. Employers called it fair. Talks will resume in June.',
    ]);
  });

  it('joins across a paragraph break while the group is under minTokens and keeps an unmergeable short tail', () => {
    // Sentence counts 8, 11, 7 | 11, 5 | 6: the first paragraph (26) is short of 30; the tail (11) cannot join 37.
    expect(expectWellFormed(title, text, opts(30, 40))).toEqual([
      'Port strike ends',
      'The port of Rotterdam reopened on Monday. Dock workers ended a strike that had lasted eight days. Ships queued outside the harbour overnight. Union leaders said the deal raises wages by 6 percent.',
      'Employers called it fair. Talks will resume in June.',
    ]);
  });

  it('closes a group before the sentence that would overflow maxTokens', () => {
    expect(expectWellFormed(title, text, opts(12, 20)).slice(1)).toEqual([
      'The port of Rotterdam reopened on Monday. Dock workers ended a strike that had lasted eight days.',
      'Ships queued outside the harbour overnight. Union leaders said the deal raises wages by 6 percent.',
      'Employers called it fair. Talks will resume in June.',
    ]);
  });

  it('merges a short trailing group into the previous one when it fits', () => {
    const t = 'Dock workers ended a strike that had lasted eight days. Talks resume soon.';
    expect(chunkRevision('Strike', t, opts(8, 40))).toEqual(['Strike', t]);
    expect(chunkRevision('Strike', t, opts(8, 14))).toEqual(['Strike', 'Dock workers ended a strike that had lasted eight days.', 'Talks resume soon.']);
  });

  it('counts every group exactly, for a tokenizer that is not additive over joined sentences', () => {
    // Two extra tokens at each sentence join: sums of sentence counts underestimate every group.
    const joinCost = (t: string) => countTokens(t) + 2 * (t.match(/[.!?] /g) ?? []).length;
    const o = { ...opts(8, 20), countTokens: joinCost };
    const body = chunkRevision(title, text, o).slice(1);
    expect(body.map(joinCost)).toEqual([8, 20, 18, 6]); // the first group, 8 + 11 by the sums, is 21 exactly
    expect(visible(body.join(''))).toBe(visible(text));
  });

  it('sums sentence counts for a tokenizer additive at spaces, and counts joins without a space', () => {
    // The stand-in is additive at spaces: the same chunks either way, with fewer counts.
    const counted = (additiveAtSpaces: boolean, locale?: string) => {
      const seen: string[] = [];
      const o = {
        ...opts(8, 40, locale),
        additiveAtSpaces,
        countTokens: (t: string) => {
          seen.push(t);
          return countTokens(t);
        },
      };
      return {
        chunks: chunkRevision(title, text, o),
        seen,
        ja: chunkRevision('見出し', CASES[4][1], { ...o, ...opts(8, 50, 'ja'), countTokens: o.countTokens }),
      };
    };
    const exact = counted(false);
    const summed = counted(true);
    expect(summed.chunks).toEqual(exact.chunks);
    expect(summed.ja).toEqual(exact.ja);
    // Spaced groups are never counted as a whole; Japanese sentences join without a space, so their groups are.
    const sentences = splitSentences(text);
    expect(summed.seen.filter((t) => !sentences.includes(t) && t !== title && /[a-z]/.test(t))).toEqual([]);
    expect(summed.seen.filter((t) => t.startsWith('東京都は３日') && t.length > 20).length).toBeGreaterThan(0);
    expect(summed.seen.length).toBeLessThan(exact.seen.length);
  });

  it('keeps an over-long headline whole, omits an empty one and never returns empty strings', () => {
    const long = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    expect(chunkRevision(long, 'Ships queued.', opts(2, 10))).toEqual([long, 'Ships queued.']);
    expect(chunkRevision(' \n ', 'Ships queued.', opts(2, 10))).toEqual(['Ships queued.']);
    expect(chunkRevision('Strike', ' \n\n ', opts(2, 10))).toEqual(['Strike']);
    expect(chunkRevision('', '', opts(2, 10))).toEqual([]);
  });

  it.each(CASES)('chunks %s prose within the limits, in order, deterministically', (locale, text) => {
    for (const [min, max] of [
      [8, 24],
      [16, 48],
      [40, 128],
    ]) {
      const paragraphs = `${text}\n\n${text.slice(0, text.length >> 1)}\n${text}`;
      expectWellFormed('Headline', paragraphs, opts(min, max, locale));
    }
  });

  it('joins CJK sentences without a space and spaced sentences with one', () => {
    const [, ja] = CASES[4];
    const [, zh] = CASES[5];
    // Sentence counts 20, 25, 27, 19, 14, 16.
    expect(chunkRevision('見出し', ja, opts(8, 50, 'ja'))).toEqual([
      '見出し',
      '東京都は３日、新しい防災計画を発表した。計画では、首都直下地震に備えて避難所を２割増やす。',
      '小池知事は「都民の命を守ることが最優先だ。」と述べた。専門家からは評価する声が上がっている！',
      '一方で、費用はどうなるのか？「必ず確保する」と担当者は話した。',
    ]);
    // A line break between paragraphs becomes one space (19 tokens is under minTokens, so the group goes on).
    expect(chunkRevision('', `${zh.slice(0, 19)}\n${zh.slice(19, 42)}`, opts(30, 100, 'zh'))).toEqual([
      '北京市政府周三公布了新的空气治理方案。 方案提出，到2030年细颗粒物浓度要下降三成。',
    ]);
  });

  it('splits an over-long spaced sentence only at spaces', () => {
    const words = Array.from({ length: 120 }, (_, i) => ['harbour', 'cranes', 'idle', 'since', 'the', 'ninth', 'of', 'May'][i % 8]);
    const sentence = `${words.join(' ')}.`;
    const chunks = expectWellFormed('Strike', sentence, opts(4, 16));
    expect(chunks.slice(1).join(' ')).toBe(sentence);
    expect(chunks.slice(1).map(countTokens)).toEqual([16, 16, 16, 16, 16, 16, 16, 9]);
  });

  it('splits an over-long CJK sentence at word boundaries, and a run of symbols at characters', () => {
    expect(chunkRevision('', '東京都は３日、新しい防災計画を発表した。計画では、首都直下地震に備えて避難所を２割増やす。', opts(4, 10, 'ja'))).toEqual([
      '東京都は３日、新しい',
      '防災計画を発表した。',
      '計画では、首都直下',
      '地震に備えて避難所を',
      '２割増やす。',
    ]);
    expect(chunkRevision('', `word-word-word- ${'-'.repeat(50)}`, opts(4, 20))).toEqual(['word-word-word-', '-'.repeat(20), '-'.repeat(20), '-'.repeat(10)]);
  });
});
