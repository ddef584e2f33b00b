/**
 * Seeded generators of MCP tool calls for the fuzz and concurrency tests: hostile strings,
 * wrong types, unknown arguments and tool names, mixed with ordinary searches of the language
 * fixture (plus `go/big.go`).
 */

/** mulberry32: a small seeded generator, so that a failing run can be replayed by its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface GeneratedCall {
  name: string;
  args: Record<string, unknown>;
}

/** Mostly invalid, sometimes valid calls: what a confused or hostile client might send. */
export function fuzzer(seed: number): () => GeneratedCall {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const nasty = [
    '\ud800',
    '\udfff',
    'a\ud83dz',
    '\u202e\u200fgnirts\u202c',
    '\u0000\u0001\u001f',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🦀 日本語 עברית مرحبا',
    '../../etc/**',
    '../../../../etc/passwd',
    '/etc/**',
    'C:\\Windows\\**',
    '..\\..\\secret',
    '**/{a,b,{c,d}}/[!x]*(y)',
    '+(a|+(b|*(c|?(d))))',
    '(a+)+$',
    '*'.repeat(300),
    `${'*a'.repeat(12)}b`,
    `${'?*'.repeat(8)}b`,
    '*a*a*ab',
    '{'.repeat(200),
    '[[[[[[',
    'go/**',
    '**/*.go',
    'Circle',
    'VerifyPacket',
    'func (c *Circle) Area() float64',
    'Traceback (most recent call last):\n  File "x.py", line 3, in total',
    '__proto__',
    'constructor',
    '',
    ' ',
  ];
  const str = (): string => {
    switch (int(6)) {
      case 0:
        return pick(nasty);
      case 1:
        return Array.from({ length: int(40) }, () => String.fromCharCode(int(0x10000))).join('');
      case 2:
        return pick(nasty).repeat(1 + int(50));
      case 3:
        return 'x'.repeat(19_000 + int(12_000));
      case 4:
        return Array.from({ length: 1 + int(6) }, () => pick(['area', 'total', 'Ledger', 'Token', 'Shape', 'render', 'Invoice'])).join(' ');
      default:
        return pick(nasty) + Array.from({ length: int(20) }, () => String.fromCharCode(32 + int(95))).join('');
    }
  };
  const num = (): number => pick([0, -1, 1, 2, 5, 10, 49, 50, 51, 99, 100, 101, 4000, 20_000, 20_001, 1.5, -0, 1e308, Number.MAX_SAFE_INTEGER, NaN, Infinity]);
  const any = (depth = 0): unknown => {
    switch (int(depth > 2 ? 5 : 7)) {
      case 0:
        return str();
      case 1:
        return num();
      case 2:
        return r() < 0.5;
      case 3:
        return null;
      case 4:
        return undefined;
      case 5:
        return Array.from({ length: int(5) }, () => any(depth + 1));
      default:
        return Object.fromEntries(Array.from({ length: int(4) }, () => [str().slice(0, 30), any(depth + 1)]));
    }
  };
  const valid: Record<string, () => unknown> = {
    query: () => (r() < 0.7 ? str() : any()),
    limit: () => (r() < 0.6 ? 1 + int(60) - 5 : any()),
    language: () => (r() < 0.6 ? pick(['go', 'python', 'rust', 'markdown', 'cobol', 'GO', '']) : any()),
    path: () => (r() < 0.7 ? pick(nasty) : any()),
    signatures_only: () => (r() < 0.7 ? r() < 0.5 : any()),
    max_tokens: () => (r() < 0.7 ? pick([50, 99, 100, 150, 400, 1000, 4000, 20_000, 20_001]) : any()),
    cursor: () => (r() < 0.5 ? str().slice(0, 250) : any()),
  };
  return (): GeneratedCall => {
    const roll = r();
    if (roll < 0.1) {
      const args: Record<string, unknown> = r() < 0.7 ? {} : { [pick(['x', 'query', '__proto__', 'verbose'])]: any() };
      return { name: 'index_status', args: JSON.parse(JSON.stringify(args) ?? '{}') as Record<string, unknown> };
    }
    if (roll < 0.12) return { name: pick(['search', 'SEARCH_CODE', 'search_code ', '', 'index_status\u0000']), args: {} };
    const args: Record<string, unknown> = {};
    for (const [k, gen] of Object.entries(valid)) if (r() < (k === 'query' ? 0.9 : 0.35)) args[k] = gen();
    if (r() < 0.15) args[pick(['lang', 'q', '__proto__', 'constructor', 'x'.repeat(100), '\ud800'])] = any();
    // Through JSON, as the wire does: undefined members vanish, NaN becomes null, and a
    // "__proto__" key stays a plain member.
    return { name: 'search_code', args: JSON.parse(JSON.stringify(args)) as Record<string, unknown> };
  };
}

/**
 * Calls an agent plausibly makes, most of them valid: searches by identifier, words and paths
 * with the options mixed, status, and a few mistakes. Deterministic for a seed, so that each
 * call can be replayed alone and its answer compared.
 */
export function mixedCalls(seed: number, n: number): GeneratedCall[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const queries = ['VerifyPacket', 'Ledger', 'Circle area', 'total', 'Shape render', 'Invoice Token', 'parse header', 'EncodeLedger', 'Describe', 'greet', 'func Area', 'big.go'];
  const calls: GeneratedCall[] = [];
  for (let i = 0; i < n; i++) {
    const roll = r();
    if (roll < 0.12) calls.push({ name: 'index_status', args: {} });
    else if (roll < 0.2) calls.push(pick([{ name: 'search_code', args: { query: 'x', limit: 0 } }, { name: 'search_code', args: { query: '   ' } }, { name: 'search_code', args: { query: 'x', lang: 'go' } }, { name: 'index_status', args: { verbose: true } }]));
    else {
      const args: Record<string, unknown> = { query: pick(queries) };
      if (r() < 0.4) args.limit = 1 + Math.floor(r() * 20);
      if (r() < 0.25) args.language = pick(['go', 'python', 'rust', 'typescript']);
      if (r() < 0.2) args.path = pick(['go/**', '**/*.py', 'src/**', '**/sample.*']);
      if (r() < 0.3) args.signatures_only = r() < 0.5;
      if (r() < 0.3) args.max_tokens = pick([150, 400, 1000, 4000]);
      calls.push({ name: 'search_code', args });
    }
  }
  return calls;
}
