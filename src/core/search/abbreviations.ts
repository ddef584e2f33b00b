/**
 * The abbreviations code names things with, by the word a question uses: "buffer" is `buf` in
 * most C and Go code, "context" `ctx`, "message" `msg`. The no-context decision's names test
 * (relevance.ts) asks whether the code names things with a question's words; without these, a
 * question asked in whole words of a codebase that abbreviates them would read as asked in
 * words only its comments use.
 *
 * Only abbreviations common across languages and projects are listed, each for the word it
 * almost always stands for in code; a question's own abbreviations need none.
 */
const ABBREVIATIONS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    address: ['addr'],
    allocate: ['alloc'],
    allocation: ['alloc'],
    allocator: ['alloc'],
    argument: ['arg', 'args'],
    attribute: ['attr', 'attrs'],
    authentication: ['auth', 'authn'],
    authorization: ['auth', 'authz'],
    average: ['avg'],
    buffer: ['buf', 'buff'],
    certificate: ['cert'],
    character: ['char', 'chr'],
    column: ['col'],
    command: ['cmd'],
    compare: ['cmp'],
    configuration: ['config', 'cfg', 'conf'],
    config: ['cfg', 'conf'],
    connection: ['conn'],
    context: ['ctx'],
    count: ['cnt'],
    current: ['cur', 'curr'],
    database: ['db'],
    decrement: ['dec'],
    definition: ['def'],
    delete: ['del'],
    description: ['desc'],
    descriptor: ['desc'],
    destination: ['dst', 'dest'],
    dictionary: ['dict'],
    directory: ['dir'],
    document: ['doc'],
    element: ['elem'],
    environment: ['env'],
    error: ['err'],
    expression: ['expr'],
    extension: ['ext'],
    frequency: ['freq'],
    function: ['fn', 'func'],
    generate: ['gen'],
    generator: ['gen'],
    header: ['hdr'],
    identifier: ['id', 'ident'],
    image: ['img'],
    implementation: ['impl'],
    increment: ['inc', 'incr'],
    index: ['idx'],
    information: ['info'],
    initialize: ['init'],
    initialise: ['init'],
    iterator: ['iter'],
    length: ['len'],
    library: ['lib'],
    manager: ['mgr'],
    maximum: ['max'],
    message: ['msg'],
    minimum: ['min'],
    number: ['num'],
    object: ['obj'],
    operation: ['op'],
    option: ['opt', 'opts'],
    package: ['pkg'],
    parameter: ['param', 'params'],
    pointer: ['ptr'],
    position: ['pos'],
    previous: ['prev'],
    process: ['proc'],
    reference: ['ref'],
    register: ['reg'],
    repository: ['repo'],
    request: ['req'],
    response: ['resp'],
    sequence: ['seq'],
    server: ['srv'],
    service: ['svc'],
    signal: ['sig'],
    signature: ['sig'],
    socket: ['sock'],
    source: ['src'],
    specification: ['spec'],
    statement: ['stmt'],
    statistics: ['stats'],
    string: ['str'],
    synchronize: ['sync'],
    system: ['sys'],
    table: ['tbl'],
    temporary: ['tmp', 'temp'],
    token: ['tok'],
    transaction: ['tx', 'txn'],
    utility: ['util'],
    value: ['val'],
    variable: ['var'],
    window: ['win'],
  }),
);

/** The abbreviations code uses for `word` (lower case, singular or plural), none when it has none. */
export function abbreviationsOf(word: string): readonly string[] {
  const w = word.toLowerCase();
  const singulars = [w, w.replace(/ies$/, 'y'), w.replace(/es$/, ''), w.replace(/s$/, '')];
  for (const s of singulars) {
    const found = ABBREVIATIONS.get(s);
    if (found) return found;
  }
  return [];
}
