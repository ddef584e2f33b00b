/**
 * The locate mode: from a bug report (prose, a traceback, a commit message) to the files that
 * must change, each with the reasons it is there.
 *
 * Search ranks chunks, and for "where to change" that is the wrong unit: a dozen small files
 * that each mention two words of the report outvote the one file that holds the behaviour. So
 * locate scores files, from several kinds of evidence, each a channel that gives every file a
 * score and a reason:
 *
 *   text      BM25 over whole files (path + content), with a prior for longer files: the file
 *             that holds a behaviour is rarely a two-line stub (BugLocator's rVSM)
 *   chunks    the hybrid search's chunk hits, added up per file with diminishing returns
 *   symbols   definitions of the identifiers the report writes as code
 *   frames    the files of traceback frames, the nearest to the error first
 *   messages  error messages and quoted strings found verbatim in a file (a `raise`, a `panic`)
 *   tests     tests the report names, mapped to the files they import and the files named like them
 *   history   the files that past commits with similar messages changed (BugLocator's similar
 *             fixed reports), when the host gives the repository's history
 *   graph     the import neighbours of the files the strongest evidence points at (personalised
 *             PageRank from the same seeds over the repository map's reference graph did worse on
 *             the history set: Acc@5 0.845 → 0.830)
 *
 * Each channel is scaled to [0, 1] by its best file and the channels are summed with the
 * weights below; tests, docs, examples and vendored code are then ranked down unless the
 * report is about them.
 */
import type { Engine } from '../engine';
import { VltError } from '../errors';
import { isTestPath } from '../intel/repomap-rank';
import { FileBm25, topFiles, type FileScore } from '../search/file-bm25';
import { tokenize, tokenizePath } from '../search/tokenizer';
import { parseReport, type ParsedReport } from './report';

export type LocateChannel = 'text' | 'chunks' | 'symbols' | 'frames' | 'messages' | 'tests' | 'history' | 'graph';

/** The weight of each channel in the sum, for a channel scaled to [0, 1]. */
export const CHANNEL_WEIGHTS: Readonly<Record<LocateChannel, number>> = {
  text: 1,
  // Chunk hits mostly repeat what the whole-file text says, file by file; they break its ties.
  chunks: 0.5,
  symbols: 1,
  frames: 1.2,
  messages: 1,
  tests: 0.6,
  // On fix commits of ten repositories the largest single part of the gain (a run without it:
  // Acc@5 0.757 against 0.833); the weights were chosen on five of them and checked on the other five.
  history: 1.2,
  graph: 0.35,
};

/** Multiplier of a test file's score when the report is not about tests; the same for docs. */
export const TEST_PRIOR = 0.35;
export const DOC_PRIOR = 0.35;
/** A changelog, release notes or history file. */
export const CHANGELOG_PRIOR = 0.1;
/** Examples, vendored and generated-looking folders. */
export const PERIPHERAL_PRIOR = 0.5;
/** Each further chunk hit of a file counts this share of the one before it. */
const CHUNK_DECAY = 0.5;
/** A report longer than this many words is searched for chunks by its opening and its identifiers (see {@link chunkQuery}). */
const CHUNK_QUERY_WORDS = 80;
/** Chunk hits asked of the hybrid search. */
const CHUNK_HITS = 60;
/** Similar past changes whose files the history channel credits. */
const SIMILAR_CHANGES = 30;
/** A past change that touched more files than this is a sweep (a rename, a reformat): it says nothing of where a bug lives. */
const MAX_CHANGE_FILES = 20;
/** Reasons listed per file (the strongest), besides a ranking-down note. */
const MAX_REASONS = 4;
/** Files of the strongest evidence whose import neighbours the graph channel reaches. */
const GRAPH_SEEDS = 5;

export interface LocateOptions {
  /** Files to return (default 10). */
  k?: number;
  signal?: AbortSignal;
  /** Replaces channel weights (the eval's ablations); 0 turns a channel off. */
  weights?: Partial<Record<LocateChannel, number>>;
  /** The repository's past changes, for the history channel; absent, the channel is off. */
  history?: LocateHistory;
}

/** One past commit: its message and the workspace-relative files it changed. */
export interface PastChange {
  id: string;
  message: string;
  files: readonly string[];
}

/** Past changes, and which of them the report may see (the eval's: the ancestors of the commit under test). */
export interface LocateHistory {
  changes: readonly PastChange[];
  allowed?: ReadonlySet<string>;
}

export interface LocatedFile {
  path: string;
  score: number;
  /** Why the file is here, strongest first: "frame 3 of the traceback", "defines `Mod.eval` named in the text". */
  reasons: string[];
  /** Each channel's share of the score. */
  channels: Partial<Record<LocateChannel, number>>;
  /** The multiplier a test, doc or vendored file got (absent: 1). */
  prior?: number;
  /** The line of the strongest evidence that has one: where to start reading. */
  line?: number;
}

export interface LocateResult {
  files: LocatedFile[];
  notes: string[];
  ms: number;
  /** Milliseconds per channel (the whole-file index's catch-up counts in the total only). */
  timings: Partial<Record<LocateChannel, number>>;
}

interface Evidence {
  score: number;
  reason: string;
  /** The line the evidence points at (a frame, a definition, a message, a search hit). */
  line?: number;
}

type ChannelScores = Map<string, Evidence>;

const CHANGELOG = /(?:^|\/)(?:CHANGELOG|CHANGES|HISTORY|NEWS|RELEASES?|RELEASE[-_]NOTES)(?:\.[A-Za-z]+)?$/i;
const DOC_EXT = /\.(?:md|mdx|rst|txt|adoc)$/i;
const PERIPHERAL_DIR = /(?:^|\/)(?:examples?|samples?|demos?|vendor|third_party|node_modules|dist|build|benchmarks?|docs?)\//i;

function isDoc(p: string): boolean {
  return DOC_EXT.test(p);
}

/** The locator of an engine: one per engine, its whole-file index kept in step with the engine's state. */
const locators = new WeakMap<Engine, Locator>();

export function locatorFor(engine: Engine): Locator {
  let l = locators.get(engine);
  if (!l) locators.set(engine, (l = new Locator(engine)));
  return l;
}

export class Locator {
  private readonly files = new FileBm25();
  private syncedState: string | undefined;
  /** Mean and standard deviation of log(length) over the files, for the length prior. */
  private lengthStats = { mean: 0, sd: 1 };

  constructor(private readonly engine: Engine) {}

  /** Brings the whole-file index to the engine's state: re-reads only files whose hash changed. */
  sync(): void {
    const state = this.engine.stateVersion;
    if (state === this.syncedState) return;
    const store = this.engine.store;
    const rows = store.listFiles();
    const present = new Set<string>();
    const stale = new Map<number, { path: string; hash: string }>();
    for (const f of rows) {
      if (this.engine.isNavigationOnly(f)) continue;
      present.add(f.path);
      if (this.files.hashOf(f.path) !== f.hash) stale.set(f.id, { path: f.path, hash: f.hash });
    }
    for (const p of [...this.files.paths()]) if (!present.has(p)) this.files.delete(p);
    const texts = new Map<number, string[]>();
    if (stale.size > 64) {
      for (const c of store.allChunksForIndexing()) {
        if (!stale.has(c.fileId)) continue;
        let list = texts.get(c.fileId);
        if (!list) texts.set(c.fileId, (list = []));
        list.push(c.text);
      }
    } else {
      for (const id of stale.keys()) texts.set(id, store.chunksOfFile(id).map((c) => c.text));
    }
    for (const [id, f] of stale) {
      const parts = texts.get(id);
      // A file the index holds no text of (navigation-only, empty) is not a candidate.
      if (!parts || parts.length === 0) {
        this.files.delete(f.path);
        continue;
      }
      const tokens = tokenizePath(f.path);
      for (const t of parts) tokenize(t, tokens);
      this.files.set(f.path, f.hash, tokens);
    }
    let sum = 0;
    let sq = 0;
    let n = 0;
    for (const p of this.files.paths()) {
      const l = Math.log(1 + (this.files.lengthOf(p) ?? 0));
      sum += l;
      sq += l * l;
      n++;
    }
    const mean = n ? sum / n : 0;
    this.lengthStats = { mean, sd: n ? Math.sqrt(Math.max(sq / n - mean * mean, 1e-6)) : 1 };
    this.syncedState = state;
  }

  /** Plain BM25 over whole files (path + content): the baseline `vlt eval history` compares with. */
  baseline(query: string, k: number): FileScore[] {
    this.sync();
    return this.files.search(tokenize(query), k);
  }

  async locate(reportText: string, opts: LocateOptions = {}): Promise<LocateResult> {
    if (!reportText.trim()) throw new VltError('USAGE', 'the report is empty: pass the issue text or stack trace');
    const t0 = performance.now();
    this.sync();
    const report = parseReport(reportText);
    const weights = { ...CHANNEL_WEIGHTS, ...opts.weights };
    const channels = new Map<LocateChannel, ChannelScores>();
    const timings: Partial<Record<LocateChannel, number>> = {};
    const run = async (name: LocateChannel, fn: () => ChannelScores | Promise<ChannelScores>): Promise<void> => {
      if (!(weights[name] > 0)) return;
      const tc = performance.now();
      channels.set(name, await fn());
      timings[name] = Number((performance.now() - tc).toFixed(2));
    };
    await run('text', () => this.textChannel(report));
    await run('chunks', () => this.chunkChannel(chunkQuery(reportText, report), opts.signal));
    await run('symbols', () => this.symbolChannel(report));
    await run('frames', () => this.frameChannel(report));
    await run('messages', () => this.messageChannel(report));
    await run('tests', () => this.testChannel(report));
    if (opts.history) {
      const history = opts.history;
      await run('history', () => this.historyChannel(report, history));
    }
    // The graph spreads from what the other channels found, so it runs last.
    await run('graph', () => this.graphChannel(channels, weights));

    const total = new Map<string, { score: number; reasons: Array<{ w: number; reason: string; line?: number }>; channels: Partial<Record<LocateChannel, number>> }>();
    for (const [name, scores] of channels) {
      let max = 0;
      for (const e of scores.values()) max = Math.max(max, e.score);
      if (max <= 0) continue;
      for (const [path, e] of scores) {
        const share = (weights[name] * e.score) / max;
        if (share <= 0) continue;
        let t = total.get(path);
        if (!t) total.set(path, (t = { score: 0, reasons: [], channels: {} }));
        t.score += share;
        t.channels[name] = Number(share.toFixed(4));
        t.reasons.push({ w: share, reason: e.reason, ...(e.line !== undefined ? { line: e.line } : {}) });
      }
    }
    const notes: string[] = [];
    const demoted = new Map<string, string>();
    const priors = new Map<string, number>();
    for (const [path, t] of total) {
      const prior = this.pathPrior(path, report);
      if (prior !== 1) {
        t.score *= prior;
        priors.set(path, prior);
        demoted.set(path, CHANGELOG.test(path) ? 'ranked down: a changelog' : isTestPath(path) ? 'ranked down: a test file' : isDoc(path) ? 'ranked down: documentation' : 'ranked down: examples or vendored code');
      }
    }
    const k = opts.k ?? 10;
    const files = topFiles(new Map([...total].map(([p, t]) => [p, t.score])), k).map((f): LocatedFile => {
      const t = total.get(f.path)!;
      t.reasons.sort((a, b) => b.w - a.w);
      const line = t.reasons.find((r) => r.line !== undefined)?.line;
      return {
        path: f.path,
        score: Number(f.score.toFixed(4)),
        ...(line !== undefined ? { line } : {}),
        reasons: [...t.reasons.map((r) => r.reason).slice(0, MAX_REASONS), ...(demoted.has(f.path) ? [demoted.get(f.path)!] : [])],
        channels: t.channels,
        ...(priors.has(f.path) ? { prior: priors.get(f.path)! } : {}),
      };
    });
    if (files.length === 0) notes.push('nothing in the index matches the report: check that the workspace is indexed (vlt coderag status) and that the report names this project');
    return { files, notes, ms: Number((performance.now() - t0).toFixed(2)), timings };
  }

  private pathPrior(path: string, report: ParsedReport): number {
    // A changelog lists past fixes in the words fix reports use: it matches every report and is
    // never where a fix goes, unless the report is about the changelog itself.
    if (CHANGELOG.test(path)) return /\b(?:changelog|release notes|changes file)\b/i.test(report.analysis.raw) ? 1 : CHANGELOG_PRIOR;
    if (isTestPath(path)) return report.aboutTests ? 1 : TEST_PRIOR;
    if (isDoc(path)) return report.aboutDocs ? 1 : DOC_PRIOR;
    if (PERIPHERAL_DIR.test(path)) return PERIPHERAL_PRIOR;
    return 1;
  }

  private textChannel(report: ParsedReport): ChannelScores {
    const raw = this.files.scores(tokenize(report.analysis.raw));
    const out: ChannelScores = new Map();
    const { mean, sd } = this.lengthStats;
    for (const [path, s] of raw) {
      const z = (Math.log(1 + (this.files.lengthOf(path) ?? 0)) - mean) / sd;
      const lengthPrior = 0.5 + 0.5 / (1 + Math.exp(-z));
      out.set(path, { score: s * lengthPrior, reason: 'matches the report\'s words across the file' });
    }
    return out;
  }

  private async chunkChannel(text: string, signal: AbortSignal | undefined): Promise<ChannelScores> {
    const res = await this.engine.search(text, { k: CHUNK_HITS, ...(signal ? { signal } : {}) });
    const out: ChannelScores = new Map();
    const seen = new Map<string, number>();
    for (const h of res.hits) {
      const i = seen.get(h.path) ?? 0;
      seen.set(h.path, i + 1);
      const add = h.score * CHUNK_DECAY ** i;
      const prev = out.get(h.path);
      if (prev) prev.score += add;
      else out.set(h.path, { score: add, line: h.start_line, reason: h.symbol ? `search hit in \`${h.symbol}\` (line ${h.start_line})` : `search hit at line ${h.start_line}` });
    }
    return out;
  }

  private symbolChannel(report: ParsedReport): ChannelScores {
    const out: ChannelScores = new Map();
    const store = this.engine.store;
    for (const ident of report.codeIdentifiers) {
      const parts = ident.split(/\.|::|->|#/).filter(Boolean);
      const last = parts[parts.length - 1];
      if (!last || last.length < 3) continue;
      const rows = store.findSymbols(last, { limit: 200 }).filter((r) => r.kind !== 'heading' && this.files.hashOf(r.path) !== undefined);
      if (rows.length === 0) continue;
      // A qualified mention (`Model.save`) prefers definitions inside the named owner.
      const owner = parts.length > 1 ? parts[parts.length - 2]! : undefined;
      const owned = owner ? rows.filter((r) => r.container === owner || r.container?.endsWith(`.${owner}`) === true || r.path.includes(owner.toLowerCase())) : [];
      const chosen = owned.length > 0 ? owned : rows;
      const files = new Set(chosen.map((r) => r.path));
      // A name defined in many files says little about any one of them.
      const w = (owned.length > 0 ? 1.5 : 1) / Math.log2(1 + files.size);
      for (const r of chosen) {
        const prev = out.get(r.path);
        const reason = `defines \`${r.container ? `${r.container}.` : ''}${r.name}\` named in the report (line ${r.startLine})`;
        if (prev) {
          if (!prev.reason.includes(`\`${r.name}\``)) prev.score += w;
        } else out.set(r.path, { score: w, reason, line: r.startLine });
      }
    }
    return out;
  }

  private frameChannel(report: ParsedReport): ChannelScores {
    const out: ChannelScores = new Map();
    const known = [...this.files.paths()];
    const resolve = (p: string): string[] => {
      const clean = p.replace(/\\/g, '/');
      // The longest workspace path that is a suffix of the frame's (absolute, site-packages) path.
      const matches = known.filter((k) => clean === k || clean.endsWith(`/${k}`));
      if (matches.length > 0) return [matches.sort((a, b) => b.length - a.length)[0]!];
      const base = clean.split('/').pop() ?? clean;
      const tail = clean.split('/').slice(-2).join('/');
      return known.filter((k) => k.endsWith(`/${tail}`) || k === tail).slice(0, 2).concat(known.filter((k) => k === base).slice(0, 1));
    };
    for (const f of report.frames) {
      for (const path of resolve(f.path)) {
        const score = 1 / (1 + 0.35 * f.distance);
        const prev = out.get(path);
        if (prev && prev.score >= score) continue;
        out.set(path, { score, ...(f.line !== undefined ? { line: f.line } : {}), reason: `frame ${f.index} of the traceback${f.func ? ` (\`${f.func}\`${f.line ? `, line ${f.line}` : ''})` : f.line ? ` (line ${f.line})` : ''}` });
      }
    }
    // Paths written in the report outside a traceback.
    for (const m of report.analysis.paths) {
      for (const path of resolve(m.path)) {
        if (out.has(path)) continue;
        out.set(path, { score: 0.8, reason: `named in the report (${m.path})` });
      }
    }
    return out;
  }

  private messageChannel(report: ParsedReport): ChannelScores {
    const out: ChannelScores = new Map();
    for (const msg of report.messages) {
      const words = msg.split(/\s+/);
      // Messages are often formatted ("invalid value %r for %s"): look for the longest run of
      // the message's words, at least three, that a file holds verbatim.
      const probe = words.length <= 6 ? [msg] : windows(words, 5);
      const hits = this.engine.textHits(msg, 30);
      for (const h of hits) {
        const text = h.text.toLowerCase().replace(/\s+/g, ' ');
        const matched = probe.filter((p) => text.includes(p.toLowerCase()));
        const found = matched.length;
        if (found === 0) continue;
        // The line that holds the start of the first matched run.
        const head = matched[0]!.toLowerCase().split(' ').slice(0, 3).join(' ');
        const at = h.text.split('\n').findIndex((l) => l.toLowerCase().replace(/\s+/g, ' ').includes(head));
        const line = h.startLine + Math.max(0, at);
        const score = found / probe.length;
        const prev = out.get(h.path);
        if (prev && prev.score >= score) continue;
        out.set(h.path, { score, line, reason: `holds the message "${msg.length > 60 ? `${msg.slice(0, 57)}...` : msg}" (line ${line})` });
      }
    }
    return out;
  }

  private async testChannel(report: ParsedReport): Promise<ChannelScores> {
    const out: ChannelScores = new Map();
    if (report.testNames.length === 0) return out;
    const store = this.engine.store;
    const graph = await this.engine.graph();
    const byStem = new Map<string, string[]>();
    for (const p of this.files.paths()) {
      if (isTestPath(p)) continue;
      const stem = fileStem(p);
      const list = byStem.get(stem);
      if (list) list.push(p);
      else byStem.set(stem, [p]);
    }
    for (const name of report.testNames) {
      const rows = store.findSymbols(name, { limit: 20 }).filter((r) => isTestPath(r.path));
      for (const r of rows) {
        // What the test file imports that is source, then the source named like it.
        const targets = new Set<string>();
        const node = graph.file(r.path);
        for (const e of node ? graph.imports(node.id) : []) {
          for (const t of e.targets) {
            const p = graph.file(t)?.path;
            if (p && !isTestPath(p) && this.files.hashOf(p) !== undefined) targets.add(p);
          }
        }
        const stem = fileStem(r.path).replace(/^test_|_test$|\.(?:test|spec)$|^test|test$/gi, '');
        for (const p of byStem.get(stem) ?? []) targets.add(p);
        for (const p of targets) {
          if (!out.has(p)) out.set(p, { score: 1 / Math.log2(1 + targets.size), reason: `its tests are named in the report (\`${name}\` in ${r.path})` });
        }
      }
    }
    return out;
  }

  private historyChannel(report: ParsedReport, history: LocateHistory): ChannelScores {
    const out: ChannelScores = new Map();
    const index = this.historyIndex(history.changes);
    const byId = new Map(history.changes.map((c) => [c.id, c]));
    const scores = [...index.scores(tokenize(report.analysis.raw))].filter(([id]) => !history.allowed || history.allowed.has(id));
    scores.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    for (const [id, sim] of scores.slice(0, SIMILAR_CHANGES)) {
      const change = byId.get(id)!;
      const files = change.files.filter((f) => this.files.hashOf(f) !== undefined);
      if (files.length === 0) continue;
      const share = sim / Math.sqrt(files.length);
      const subject = change.message.split('\n')[0]!.trim();
      for (const f of files) {
        const prev = out.get(f);
        if (prev) prev.score += share;
        else out.set(f, { score: share, reason: `changed by a past commit with a similar message: "${subject.length > 60 ? `${subject.slice(0, 57)}...` : subject}" (${id.slice(0, 10)})` });
      }
    }
    return out;
  }

  private historyIndexes = new WeakMap<readonly PastChange[], FileBm25>();

  /** BM25 over the messages of past changes (sweeps left out), built once per list. */
  private historyIndex(changes: readonly PastChange[]): FileBm25 {
    let idx = this.historyIndexes.get(changes);
    if (!idx) {
      idx = new FileBm25();
      for (const c of changes) if (c.files.length > 0 && c.files.length <= MAX_CHANGE_FILES) idx.set(c.id, c.id, tokenize(c.message));
      this.historyIndexes.set(changes, idx);
    }
    return idx;
  }

  private async graphChannel(channels: Map<LocateChannel, ChannelScores>, weights: Record<LocateChannel, number>): Promise<ChannelScores> {
    const out: ChannelScores = new Map();
    const seedScore = new Map<string, number>();
    for (const [name, scores] of channels) {
      if (name === 'text' || name === 'chunks') continue;
      let max = 0;
      for (const e of scores.values()) max = Math.max(max, e.score);
      if (max <= 0) continue;
      for (const [p, e] of scores) seedScore.set(p, (seedScore.get(p) ?? 0) + (weights[name] * e.score) / max);
    }
    const seeds = [...seedScore].sort((a, b) => b[1] - a[1]).slice(0, GRAPH_SEEDS);
    if (seeds.length === 0) return out;
    const graph = await this.engine.graph();
    for (const [path, s] of seeds) {
      const node = graph.file(path);
      if (!node) continue;
      const neighbours = new Set<number>();
      for (const e of graph.imports(node.id)) for (const t of e.targets) neighbours.add(t);
      for (const id of graph.importers(node.id)) neighbours.add(id);
      const share = s / Math.sqrt(1 + neighbours.size);
      for (const id of neighbours) {
        const n = graph.file(id);
        if (!n || n.path === path || !this.files.hashOf(n.path)) continue;
        const prev = out.get(n.path);
        if (prev) prev.score += share;
        else out.set(n.path, { score: share, reason: `imports or is imported by ${path}` });
      }
    }
    return out;
  }
}

/**
 * What the chunk channel searches for: a short report whole; a long one as its opening words
 * (where a report says what is wrong) plus the identifiers and frame paths it carries. The whole
 * text is the text channel's; searching chunks with all of it costs hundreds of milliseconds on a
 * large repository and adds nothing the text channel has not counted.
 */
export function chunkQuery(text: string, report: ParsedReport): string {
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length <= CHUNK_QUERY_WORDS) return text;
  const extra = [...report.codeIdentifiers.slice(0, 24), ...report.frames.slice(0, 8).map((f) => f.path)];
  return [words.slice(0, CHUNK_QUERY_WORDS).join(' '), ...extra].join(' ');
}

function fileStem(p: string): string {
  return (p.split('/').pop() ?? p).replace(/\.[^.]+$/, '');
}

function windows(words: readonly string[], size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i + size <= words.length; i += 2) out.push(words.slice(i, i + size).join(' '));
  return out;
}
