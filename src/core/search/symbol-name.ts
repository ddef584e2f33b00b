/**
 * The lookup key of a symbol name: lower case without underscores, so that `parse_duration`,
 * `ParseDuration` and the query words "parse duration" all meet at `parseduration`.
 */
export function normalizeSymbolName(name: string): string {
  return name.toLowerCase().replace(/_/g, '');
}
