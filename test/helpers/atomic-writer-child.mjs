// Child process for the kill -9 test of writeFileAtomic. It loads the real implementation from a
// CommonJS bundle that the test builds with esbuild (argv[2]), then rewrites the target file
// (argv[3]) forever, alternating between two contents of argv[4] bytes filled with 'A' and 'B',
// until the parent kills it with SIGKILL at a random moment.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const [bundle, target, sizeArg] = process.argv.slice(2);
const { writeFileAtomic } = require(bundle);
const size = Number(sizeArg);
const contents = [Buffer.alloc(size, 'A'), Buffer.alloc(size, 'B')];

process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  await writeFileAtomic(target, contents[i % 2]);
}
