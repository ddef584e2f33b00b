/** Parsers of command-line option values: each throws commander's InvalidArgumentError (a usage error, exit 2). */
import { InvalidArgumentError } from 'commander';
import { SOURCE_FAMILIES, type SourceFamily } from '../core/oracle/oracle';
import { CHUNK_KINDS, type ChunkKindFilter } from '../core/search/rank';

export function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

export function nonNegativeInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

/** An integer from `min` to `max`. */
export function intIn(min: number, max: number): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return n;
  };
}

/** A comma-separated list of values from `allowed`. */
export function listOf<T extends string>(allowed: readonly T[]): (v: string) => T[] {
  return (v) => {
    const list = v.split(',').map((x) => x.trim()).filter(Boolean);
    const bad = list.filter((x) => !(allowed as readonly string[]).includes(x));
    if (bad.length || list.length === 0) throw new InvalidArgumentError(`expected a comma-separated list of ${allowed.join(', ')}; got ${bad.join(', ') || 'nothing'}`);
    return list as T[];
  };
}

export const chunkKinds: (v: string) => ChunkKindFilter[] = listOf(CHUNK_KINDS);
export const sourceFamilies: (v: string) => SourceFamily[] = listOf(SOURCE_FAMILIES);

export function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('expected a port number, 0-65535');
  return n;
}
