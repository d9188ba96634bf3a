// Calls to Paddock's public API, with the token kept in sessionStorage.

const tokenKey = 'paddock.token';

export function getToken() {
  return sessionStorage.getItem(tokenKey) || '';
}

export function setToken(token) {
  if (token) sessionStorage.setItem(tokenKey, token);
  else sessionStorage.removeItem(tokenKey);
}

// ApiError is an answer that was not a success: status, and the API's
// {code, message} body when it sent one.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
  // text is how the console shows it: the server's words, verbatim.
  get text() {
    return this.status ? `HTTP ${this.status} ${this.code}: ${this.message}` : this.message;
  }
}

// Listeners told of every 401, and of every success after one.
const authListeners = [];
export function onAuth(fn) { authListeners.push(fn); }
function tellAuth(err) { for (const fn of authListeners) fn(err); }

// call sends one request and returns the decoded JSON answer (null for
// 204), or throws ApiError.
export async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let resp;
  try {
    resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, 'network', `the server did not answer: ${e.message}`);
  }
  const raw = await resp.text();
  let data = null;
  if (raw) {
    try { data = JSON.parse(raw); } catch { data = null; }
  }
  if (resp.status === 401) {
    const err = new ApiError(401, data?.code || 'unauthorized', data?.message || raw);
    tellAuth(err);
    throw err;
  }
  tellAuth(null);
  if (!resp.ok) {
    if (data && typeof data.code === 'string') throw new ApiError(resp.status, data.code, data.message ?? '');
    throw new ApiError(resp.status, 'http_error', raw || resp.statusText);
  }
  return data;
}

// GraphQLError is a GraphQL answer's first error.
export class GraphQLError extends Error {
  constructor(err) {
    super(err.message);
    this.code = err.extensions?.code || '';
  }
  get text() { return this.code ? `${this.code}: ${this.message}` : this.message; }
}

// gql runs a query at /v1/graphql and returns {data, errors}; a refusal
// of the request itself (not a GraphQL answer) throws ApiError.
export async function gql(query, variables) {
  const answer = await call('POST', '/v1/graphql', { query, variables: variables || {} });
  return { data: answer?.data ?? null, errors: (answer?.errors || []).map((e) => new GraphQLError(e)) };
}
