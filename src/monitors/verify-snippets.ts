/**
 * How a receiver checks a webhook's `Newsmatch-Signature` (`t=<unix seconds>,v1=<hex>`: the
 * HMAC-SHA256, keyed by the monitor's whole `whsec_…` secret, of `<t>.<raw body>`), as the
 * README shows it. webhooks.test.ts runs these very strings against a real delivery, so what
 * the README shows is what works. Each takes the raw body's bytes, as received: a body parsed
 * and serialised again need not be the same bytes.
 */

/** Node (ESM): `verify(secret, header, rawBody)` with rawBody a Buffer (e.g. express.raw()). */
export const NODE_VERIFY = `import { createHmac, timingSafeEqual } from 'node:crypto';

export function verify(secret, header, rawBody, tolerance = 300, now = Date.now() / 1000) {
  const pairs = header.split(',').map((p) => p.trim().split('='));
  const t = pairs.filter(([k]) => k === 't').map(([, v]) => v);
  if (t.length !== 1 || !/^\\d+$/.test(t[0]) || Math.abs(now - Number(t[0])) > tolerance) return false;
  const expected = createHmac('sha256', secret).update(\`\${t[0]}.\`).update(rawBody).digest();
  return pairs.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}
`;

/** Python 3: `verify(secret, header, raw_body)` with raw_body bytes (e.g. Flask's request.get_data()). */
export const PYTHON_VERIFY = `import hashlib, hmac, re, time

def verify(secret, header, raw_body, tolerance=300, now=None):
    pairs = [p.strip().split("=", 1) for p in header.split(",") if "=" in p]
    t = [v for k, v in pairs if k == "t"]
    if len(t) != 1 or not re.fullmatch(r"[0-9]+", t[0]):
        return False
    if abs((time.time() if now is None else now) - int(t[0])) > tolerance:
        return False
    expected = hmac.new(secret.encode(), t[0].encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    return any(k == "v1" and hmac.compare_digest(expected.encode(), v.encode()) for k, v in pairs)
`;
