/**
 * The front's watch for an editor's LSP `exit` (src/daemon/client.ts): it follows the client's
 * Content-Length framed messages across chunk boundaries, passes over large bodies without
 * parsing them, and fires only on `exit`.
 */
import { describe, expect, it } from 'vitest';
import { exitWatch } from '../../src/daemon/client';

const frame = (body: object | string) => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return Buffer.from(`Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
};

describe('exitWatch', () => {
  it('fires on an exit notification, not on shutdown or other methods', () => {
    let exits = 0;
    const feed = exitWatch(() => exits++);
    feed(Buffer.concat([frame({ jsonrpc: '2.0', id: 1, method: 'shutdown' }), frame({ jsonrpc: '2.0', method: 'initialized', params: {} })]));
    expect(exits).toBe(0);
    feed(frame({ jsonrpc: '2.0', method: 'exit' }));
    expect(exits).toBe(1);
  });

  it('follows messages split anywhere, and skips large bodies split over many chunks', () => {
    let exits = 0;
    const feed = exitWatch(() => exits++);
    // A large message that merely contains the word: never parsed, never an exit.
    const big = frame({ jsonrpc: '2.0', method: 'textDocument/didSave', params: { text: `"method":"exit" ${'x'.repeat(5000)}` } });
    const all = Buffer.concat([big, frame({ jsonrpc: '2.0', id: 2, method: 'vlt/status' }), frame({ jsonrpc: '2.0', method: 'exit' })]);
    for (let i = 0; i < all.length; i += 7) feed(all.subarray(i, i + 7));
    expect(exits).toBe(1);
  });

  it('stops following a stream that is not framed as LSP, without throwing', () => {
    let exits = 0;
    const feed = exitWatch(() => exits++);
    expect(() => feed(Buffer.from('garbage\r\n\r\n{"method":"exit"}'))).not.toThrow();
    expect(exits).toBe(0);
  });
});
