// The HTTP client of the dashboard: same-origin fetches with the key from
// sessionStorage, and the API's error envelope turned into ApiError.

const KEY = 'recsys.key';
let memoryKey = ''; // when sessionStorage is unavailable

export function getKey() {
  try {
    return sessionStorage.getItem(KEY) || '';
  } catch {
    return memoryKey;
  }
}

export function setKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY, key);
    else sessionStorage.removeItem(KEY);
  } catch {
    // storage disabled: the key lives for this page only
    memoryKey = key;
  }
}

// ApiError carries the envelope {"error":{"code","message","details","request_id"}}
// with the HTTP status, or a network failure (status 0).
export class ApiError extends Error {
  constructor(status, code, message, details, requestID, method, path) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = Array.isArray(details) ? details : [];
    this.requestID = requestID || '';
    this.method = method;
    this.path = path;
  }
}

// isAbort tells a request cancelled by navigation from a real failure.
export function isAbort(err) {
  return err && (err.name === 'AbortError' || err.code === 'aborted');
}

// request sends one API call. body (if any) is sent as JSON. It resolves
// with the decoded JSON (null for 204) and rejects with ApiError.
export async function request(method, path, {body, signal, query} = {}) {
  let url = path;
  if (query) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
    }
    const s = qs.toString();
    if (s) url += (url.includes('?') ? '&' : '?') + s;
  }
  const headers = {Accept: 'application/json'};
  const key = getKey();
  if (key) headers.Authorization = 'Bearer ' + key;
  const init = {method, headers, signal, cache: 'no-store'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(url, init);
  } catch (err) {
    if (isAbort(err)) throw err;
    throw new ApiError(0, 'network', 'The server could not be reached: ' + err.message, [], '', method, url);
  }
  const text = await resp.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!resp.ok) {
    const e = data && data.error;
    if (e && typeof e === 'object') {
      throw new ApiError(resp.status, String(e.code || 'error'), String(e.message || resp.statusText),
        e.details, e.request_id, method, url);
    }
    throw new ApiError(resp.status, 'http_' + resp.status, text.slice(0, 300) || resp.statusText, [], '', method, url);
  }
  return data;
}

export const get = (path, opts) => request('GET', path, opts);
export const post = (path, body, opts) => request('POST', path, {...opts, body});
export const put = (path, body, opts) => request('PUT', path, {...opts, body});
export const del = (path, opts) => request('DELETE', path, opts);

// seg escapes one path segment; ids may hold "/" (sent as %2F).
export const seg = (id) => encodeURIComponent(id);

// Item titles for display, cached for the page's life: one GET /items/{id}
// per item, at most six at a time. A title that cannot be read is ''.
const titles = new Map(); // id → Promise<string>
let running = 0;
const waiting = [];

async function limited(fn) {
  if (running >= 6) await new Promise((resolve) => waiting.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    const next = waiting.shift();
    if (next) next();
  }
}

export function itemTitle(item) {
  const l = (item && item.labels) || {};
  return l.title || l.name || '';
}

export function titleOf(id) {
  if (!titles.has(id)) {
    const p = limited(() => get('/items/' + seg(id))).then(itemTitle, () => {
      titles.delete(id);
      return '';
    });
    titles.set(id, p);
  }
  return titles.get(id);
}

export async function titlesFor(ids) {
  const uniq = [...new Set(ids)];
  const got = await Promise.all(uniq.map(titleOf));
  return new Map(uniq.map((id, k) => [id, got[k]]));
}

export function rememberTitle(id, title) {
  titles.set(id, Promise.resolve(title || ''));
}
