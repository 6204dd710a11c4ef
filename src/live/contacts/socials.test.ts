import { describe, expect, it } from 'vitest';
import { canonicalSocial } from './socials.js';

describe('canonicalSocial', () => {
  // input → [network, canonical url]
  const PROFILES: [string, string, string][] = [
    ['https://www.facebook.com/AcmeGmbH/', 'facebook', 'https://facebook.com/AcmeGmbH'],
    ['http://m.facebook.com/AcmeGmbH?ref=footer#top', 'facebook', 'https://facebook.com/AcmeGmbH'],
    ['https://de-de.facebook.com/acme.gmbh/posts/123', 'facebook', 'https://facebook.com/acme.gmbh'],
    ['https://www.facebook.com/profile.php?id=100064&sk=about', 'facebook', 'https://facebook.com/profile.php?id=100064'],
    ['https://www.facebook.com/pages/Acme-GmbH/123456789', 'facebook', 'https://facebook.com/pages/Acme-GmbH/123456789'],
    ['https://fb.com/pg/AcmeGmbH/about/', 'facebook', 'https://facebook.com/AcmeGmbH'],
    ['https://www.instagram.com/Acme.DE/', 'instagram', 'https://instagram.com/acme.de'],
    ['https://twitter.com/AcmeHQ', 'x', 'https://x.com/acmehq'],
    ['http://mobile.twitter.com/AcmeHQ/status/1?lang=de', 'x', 'https://x.com/acmehq'],
    ['https://x.com/acme_hq/', 'x', 'https://x.com/acme_hq'],
    ['https://www.linkedin.com/company/acme-gmbh/about/', 'linkedin', 'https://linkedin.com/company/acme-gmbh'],
    ['https://de.linkedin.com/in/Jane-Doe-123', 'linkedin', 'https://linkedin.com/in/Jane-Doe-123'],
    ['https://www.linkedin.com/school/tu-berlin', 'linkedin', 'https://linkedin.com/school/tu-berlin'],
    ['https://www.youtube.com/@AcmeTV/videos', 'youtube', 'https://youtube.com/@AcmeTV'],
    ['https://m.youtube.com/channel/UCabcdefghijklmnopqrstuv', 'youtube', 'https://youtube.com/channel/UCabcdefghijklmnopqrstuv'],
    ['https://youtube.com/c/AcmeTV', 'youtube', 'https://youtube.com/c/AcmeTV'],
    ['https://www.youtube.com/user/acmetv?sub_confirmation=1', 'youtube', 'https://youtube.com/user/acmetv'],
    ['https://www.tiktok.com/@acme.de?lang=de', 'tiktok', 'https://tiktok.com/@acme.de'],
    ['https://github.com/AcmeCorp/widgets', 'github', 'https://github.com/acmecorp'],
    ['https://github.com/orgs/AcmeCorp/people', 'github', 'https://github.com/acmecorp'],
    ['https://de.pinterest.com/AcmeDesign/', 'pinterest', 'https://pinterest.com/AcmeDesign'],
    ['https://www.pinterest.co.uk/AcmeDesign/boards', 'pinterest', 'https://pinterest.com/AcmeDesign'],
    ['https://www.threads.net/@Acme', 'threads', 'https://threads.com/@Acme'],
    ['https://bsky.app/profile/acme.bsky.social', 'bluesky', 'https://bsky.app/profile/acme.bsky.social'],
    ['https://mastodon.social/@acme', 'mastodon', 'https://mastodon.social/@acme'],
    ['twitter.com/AcmeHQ', 'x', 'https://x.com/acmehq'],
    ['//www.instagram.com/acme', 'instagram', 'https://instagram.com/acme'],
  ];
  it('canonicalises profile links', () => {
    expect(PROFILES.map(([href]) => canonicalSocial(href))).toEqual(PROFILES.map(([, network, url]) => ({ network, url })));
  });

  const REJECTS = [
    'https://www.facebook.com/sharer/sharer.php?u=https%3A%2F%2Facme.de',
    'https://www.facebook.com/sharer.php?u=x',
    'https://www.facebook.com/dialog/share?app_id=1',
    'https://www.facebook.com/privacy/policy',
    'https://www.facebook.com/help/123',
    'https://www.facebook.com/profile.php',
    'https://www.facebook.com/',
    'https://l.facebook.com/l.php?u=https%3A%2F%2Facme.de',
    'https://business.facebook.com/AcmeGmbH',
    'https://twitter.com/intent/tweet?text=hi',
    'https://twitter.com/share?url=x',
    'https://twitter.com/home',
    'https://x.com/i/flow/login',
    'https://twitter.com/en/privacy',
    'https://help.twitter.com/en',
    'https://www.linkedin.com/shareArticle?mini=true&url=x',
    'https://www.linkedin.com/legal/privacy-policy',
    'https://www.linkedin.com/company/',
    'https://www.instagram.com/p/Cabc123/',
    'https://www.instagram.com/accounts/login/',
    'https://instagram.com',
    'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
    'https://youtu.be/dQw4w9WgXcQ',
    'https://www.youtube.com/',
    'https://www.tiktok.com/legal/privacy-policy',
    'https://github.com/features/actions',
    'https://gist.github.com/acme/123',
    'https://www.pinterest.com/pin/create/button/?url=x',
    'https://bsky.app/intent/compose?text=x',
    'https://acme.de/facebook.com/acme',
    'mailto:info@acme.de',
    'javascript:void(0)',
    'not a url at all',
  ];
  it('rejects share, intent, login, policy, help, post and home links and other sites', () => {
    expect(REJECTS.map((href) => [href, canonicalSocial(href)])).toEqual(REJECTS.map((href) => [href, null]));
  });

  it('resolves relative links against a base, where they are not social', () => {
    expect(canonicalSocial('/about', 'https://acme.de/')).toBeNull();
    expect(canonicalSocial('//twitter.com/AcmeHQ', 'https://acme.de/')).toEqual({ network: 'x', url: 'https://x.com/acmehq' });
  });
});
