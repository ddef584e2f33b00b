import { describe, expect, it } from 'vitest';
import { parseReport } from '../../../src/core/locate/report';

describe('parseReport', () => {
  it('reads a Python traceback: frames in order, the last one nearest the error, and the error line as a message', () => {
    const r = parseReport(
      [
        'Saving a form crashes:',
        'Traceback (most recent call last):',
        '  File "/usr/lib/python3/site-packages/app/views.py", line 40, in post',
        '    form.save()',
        '  File "/usr/lib/python3/site-packages/app/forms.py", line 12, in save',
        '    raise ValueError("cannot save an unbound form")',
        'ValueError: cannot save an unbound form',
      ].join('\n'),
    );
    expect(r.frames.map((f) => [f.path, f.line, f.func, f.index, f.distance])).toEqual([
      ['usr/lib/python3/site-packages/app/views.py', 40, 'post', 1, 1],
      ['usr/lib/python3/site-packages/app/forms.py', 12, 'save', 2, 0],
    ]);
    expect(r.messages).toContain('cannot save an unbound form');
    expect(r.aboutTests).toBe(false);
  });

  it('reads Node, Java and Go stacks nearest-first', () => {
    const node = parseReport('TypeError: Cannot read properties of undefined\n    at parseBody (/app/src/body.ts:10:5)\n    at handle (/app/src/router.ts:88:12)');
    expect(node.frames.map((f) => [f.path, f.line, f.func, f.distance])).toEqual([
      ['app/src/body.ts', 10, 'parseBody', 0],
      ['app/src/router.ts', 88, 'handle', 1],
    ]);
    expect(node.messages).toContain('Cannot read properties of undefined');
    const java = parseReport('java.lang.IllegalStateException: closed\n\tat com.acme.io.Pipe.write(Pipe.java:77)');
    expect(java.frames[0]).toMatchObject({ path: 'Pipe.java', line: 77, func: 'Pipe.write', distance: 0 });
    const go = parseReport('panic: runtime error: index out of range\n\ngoroutine 1 [running]:\nmain.parse(0x0)\n\t/src/app/parse.go:17 +0x1d\nmain.main()\n\t/src/app/main.go:9 +0x25');
    expect(go.frames.map((f) => [f.path, f.line, f.func])).toEqual([
      ['src/app/parse.go', 17, 'parse'],
      ['src/app/main.go', 9, 'main'],
    ]);
  });

  it('keeps code written as code, quoted messages and test names, and notices reports about tests or docs', () => {
    const r = parseReport('`Model.full_clean` ignores `exclude` and test_full_clean_exclude fails with "field is required but was given"; see TestFullClean too.');
    expect(r.codeIdentifiers).toEqual(expect.arrayContaining(['Model.full_clean', 'exclude', 'test_full_clean_exclude']));
    expect(r.messages).toContain('field is required but was given');
    expect(r.testNames).toEqual(expect.arrayContaining(['test_full_clean_exclude', 'TestFullClean']));
    expect(r.aboutTests).toBe(false);
    expect(parseReport('The flaky test in the suite times out').aboutTests).toBe(true);
    expect(parseReport('Fix typo in the documentation of send()').aboutDocs).toBe(true);
  });

  it('takes no single word or path for a message', () => {
    const r = parseReport('It reads "config.yaml" and "x" and "settings"');
    expect(r.messages).toEqual([]);
  });
});
