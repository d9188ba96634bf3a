// Drives Paddock's GraphQL door with graphql-request and graphql-js (its
// introspection query, buildClientSchema and validate), and prints what
// it saw as one JSON object; cmd/paddock/graphql_e2e_test.go asserts on
// it.
//
//   node graphql_client.mjs URL TOKEN
import { GraphQLClient, ClientError } from 'graphql-request';
import { getIntrospectionQuery, buildClientSchema, validate, parse, printSchema } from 'graphql';

const [url, token] = process.argv.slice(2);
const client = new GraphQLClient(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

// ask runs one document and reports data or the refusal as the client saw it.
async function ask(query, variables) {
  try {
    return { data: await client.request(query, variables) };
  } catch (e) {
    if (e instanceof ClientError) {
      return { status: e.response.status, data: e.response.data ?? null,
        codes: (e.response.errors ?? []).map((x) => x.extensions?.code), messages: (e.response.errors ?? []).map((x) => x.message) };
    }
    throw e;
  }
}

const out = {};

// Introspection: the whole query graphql-js sends, and a client schema
// built from the answer, against which the queries below are validated.
const intro = await client.request(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true,
  directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }));
const schema = buildClientSchema(intro);
out.introspection = {
  queryFields: Object.keys(schema.getQueryType().getFields()).sort(),
  runFields: Object.keys(schema.getType('Run').getFields()).sort(),
  sdlBytes: printSchema(schema).length,
};

const queries = {
  viewer: '{ viewer { tenant scopes historyEnabled } }',
  templates: '{ templates { name language runtime limits { memoryMB timeoutMS } pool { ready target hitRate } versions { name version } } }',
  pools: 'query Pools { pools { template ready target floor ceiling inUse hits misses hitRate snapshot healthy __typename } }',
  runs: `query Runs($first: Int, $filter: RunFilter) { runs(first: $first, filter: $filter) {
    items { id kind at tenant door template runtime startKind totalMS execMS reason error exitCode stdoutBytes codeSHA256 code sessionId }
    next } }`,
  sessions: '{ sessions { id tenant template state executionCount cells(first: 5) { items { kind reason sessionId } } } }',
  events: '{ sessionEvents(first: 20) { items { event sessionId tenant door template } next } }',
  aggregates: '{ aggregates { startKind template count totalP50 totalP99 } }',
  fragments: `query F($skip: Boolean!) { ...V t: templates @skip(if: $skip) { name } p: pools @include(if: $skip) { template } }
    fragment V on Query { viewer { ... on Viewer { tenant } } }`,
};
const variables = { runs: { first: 2 }, fragments: { skip: true } };
out.valid = {};
for (const [name, q] of Object.entries(queries)) {
  const errs = validate(schema, parse(q));
  out.valid[name] = errs.map((e) => e.message);
  out[name] = await ask(q, variables[name]);
}
// The next page of runs, by the cursor the first handed out.
out.runsPage2 = null;
const pageQuery = 'query Runs($first: Int, $after: String) { runs(first: $first, after: $after) { items { id } next } }';
if (out.runs.data?.runs?.next) {
  out.runsPage2 = await ask(pageQuery, { first: 2, after: out.runs.data.runs.next });
}

// Refusals: nested too deep (introspection's graph has cycles), too
// costly (ten pages of 500 runs), bad input.
let deep = 'name';
for (let i = 0; i < 12; i++) deep = `fields { type { ${deep} } }`;
out.deep = await ask(`{ __schema { types { ${deep} } } }`);
let chain = 'name';
for (let i = 0; i < 20; i++) chain = `ofType { ${chain} }`;
out.deepChain = await ask(`{ __type(name: "Run") { fields { type { ${chain} } } } }`);
const page = 'runs(first: 500) { items { id kind at tenant door template runtime startKind totalMS reason } }';
out.costly = await ask(`{ ${Array.from({ length: 10 }, (_, i) => `r${i}: ${page}`).join(' ')} }`);
out.badFirst = await ask('{ runs(first: 501) { items { id } } }');
out.badTime = await ask('{ runs(filter: {since: "yesterday"}) { items { id } } }');
out.otherTenant = await ask('{ runs(filter: {tenant: "someone-else"}) { items { id } } }');
out.invalid = await ask('{ nosuchfield }');
console.log(JSON.stringify(out));
