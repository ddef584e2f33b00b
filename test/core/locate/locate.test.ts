import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/core/engine';
import { locatorFor } from '../../../src/core/locate/locate';
import { nodeWorkspaceFs } from '../../../src/node/fs';
import { tempDir } from '../../helpers/cli';

const FILES: Record<string, string> = {
  'app/__init__.py': '',
  'app/forms.py': [
    'class Form:',
    '    """A form bound to submitted data."""',
    '',
    '    def __init__(self, data=None):',
    '        self.data = data',
    '',
    '    def save(self):',
    '        if self.data is None:',
    '            raise ValueError("cannot save an unbound form")',
    '        return dict(self.data)',
    '',
  ].join('\n'),
  'app/views.py': ['from app.forms import Form', '', '', 'def post(request):', '    form = Form(request.get("data"))', '    return form.save()', ''].join('\n'),
  'app/render.py': ['def render_page(title, body):', '    """Render a page: the title and the body of the form view."""', '    return f"<h1>{title}</h1>{body}"', ''].join('\n'),
  'tests/test_forms.py': ['from app.forms import Form', '', '', 'def test_save_unbound():', '    form = Form()', '    form.save()', ''].join('\n'),
  'docs/forms.md': '# Forms\n\nA form is saved with save(). An unbound form cannot be saved.\n',
  'CHANGELOG.md': '# Changes\n\n## 1.2\n\n- Fixed: saving an unbound form crashed the server with ValueError; it now raises a validation error.\n',
};

describe('the locate mode', () => {
  let dir: string;
  let engine: Engine;
  beforeAll(async () => {
    dir = tempDir();
    for (const [rel, text] of Object.entries(FILES)) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), text);
    }
    engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 }, 'write');
    await engine.index();
  }, 60_000);
  afterAll(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ranks the frame nearest the error first and says which frame it is', async () => {
    const res = await locatorFor(engine).locate(
      [
        'Posting the form crashes',
        'Traceback (most recent call last):',
        '  File "/srv/site/app/views.py", line 6, in post',
        '    return form.save()',
        '  File "/srv/site/app/forms.py", line 9, in save',
        '    raise ValueError("cannot save an unbound form")',
        'ValueError: cannot save an unbound form',
      ].join('\n'),
    );
    expect(res.files[0]?.path).toBe('app/forms.py');
    expect(res.files[0]?.reasons.join('\n')).toMatch(/frame 2 of the traceback \(`save`, line 9\)/);
    expect(res.files.map((f) => f.path).slice(0, 2)).toContain('app/views.py');
  });

  it('finds the file that holds an error message quoted in prose', async () => {
    const res = await locatorFor(engine).locate('When I submit an empty request the server answers 500 and the log says "cannot save an unbound form". It should be a validation error.');
    expect(res.files[0]?.path).toBe('app/forms.py');
    expect(res.files[0]?.reasons.join('\n')).toContain('holds the message "cannot save an unbound form"');
  });

  it('maps a named test to the source it imports, and ranks the test itself and the docs below source', async () => {
    const res = await locatorFor(engine).locate('test_save_unbound fails on the new release: saving an unbound form should raise');
    const paths = res.files.map((f) => f.path);
    expect(paths[0]).toBe('app/forms.py');
    expect(res.files[0]?.reasons.join('\n')).toContain('its tests are named in the report (`test_save_unbound` in tests/test_forms.py)');
    expect(paths.indexOf('tests/test_forms.py')).toBeGreaterThan(0);
    const test = res.files.find((f) => f.path === 'tests/test_forms.py');
    expect(test?.reasons).toContain('ranked down: a test file');
    // A report about the test suite keeps tests where their evidence puts them.
    const about = await locatorFor(engine).locate('the test test_save_unbound is flaky in the test suite');
    expect(about.files.find((f) => f.path === 'tests/test_forms.py')?.reasons).not.toContain('ranked down: a test file');
  });

  it('ranks a changelog, whose entries repeat every fix report, far down unless the report is about it', async () => {
    const res = await locatorFor(engine).locate('Saving an unbound form crashes the server with ValueError instead of a validation error');
    expect(res.files[0]?.path).toBe('app/forms.py');
    const log = res.files.find((f) => f.path === 'CHANGELOG.md');
    expect(log === undefined || log.reasons.includes('ranked down: a changelog')).toBe(true);
    const about = await locatorFor(engine).locate('The changelog entry for the unbound form fix is wrong');
    expect(about.files.find((f) => f.path === 'CHANGELOG.md')?.reasons).not.toContain('ranked down: a changelog');
  });

  it('defines a code identifier named in the report', async () => {
    const res = await locatorFor(engine).locate('`render_page` escapes nothing');
    expect(res.files[0]?.path).toBe('app/render.py');
    expect(res.files[0]?.reasons.join('\n')).toMatch(/defines `render_page` named in the report/);
  });

  it('follows the index as files change', async () => {
    writeFileSync(path.join(dir, 'app/render.py'), 'def render_page(title, body):\n    raise RuntimeError("the template cache is cold")\n');
    await engine.index({ paths: ['app/render.py'] });
    const res = await locatorFor(engine).locate('startup fails: "the template cache is cold"');
    expect(res.files[0]?.path).toBe('app/render.py');
  });

  it('refuses an empty report with a usage error', async () => {
    await expect(locatorFor(engine).locate('   ')).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('ranks files by plain whole-file BM25 for the baseline', () => {
    expect(locatorFor(engine).baseline('bound to submitted data', 3)[0]?.path).toBe('app/forms.py');
  });
});
