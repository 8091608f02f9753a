// DOM helpers. Every string from the API reaches the page as a text node
// or an attribute value, never as HTML.

import {isAbort} from './api.js';

const SVGNS = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'on') {
      for (const [type, fn] of Object.entries(v)) el.addEventListener(type, fn);
    } else if (k === 'value' || k === 'checked' || k === 'selected' || k === 'disabled') {
      el[k] = v;
    } else if (k === 'text') {
      el.textContent = String(v);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false || c === '') continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// h builds an HTML element: h('a', {href: '#/x', class: 'y'}, 'text', child).
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s builds an SVG element.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVGNS, tag), attrs, children);
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

// put replaces el's children (nodes, strings, nested lists).
export function put(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// errorBox shows an API error: status and code, the message, the failing
// fields and the request id to look for in the server log.
export function errorBox(err, hint) {
  const box = h('div', {class: 'error', role: 'alert'});
  if (err && err.name === 'ApiError') {
    const head = err.status ? `${err.status} ${err.code}` : err.code;
    box.append(h('div', {class: 'error-head'}, h('strong', {}, head), ' ', h('span', {class: 'error-msg'}, err.message)));
    if (err.details.length) {
      box.append(h('ul', {class: 'error-details'},
        err.details.map((d) => h('li', {}, h('code', {}, String(d.field ?? '')), ': ', String(d.problem ?? '')))));
    }
    const help = hint || defaultHint(err);
    if (help) box.append(h('div', {class: 'error-hint'}, help));
    const where = [err.method && err.path ? `${err.method} ${err.path}` : '', err.requestID ? `request id ${err.requestID}` : '']
      .filter(Boolean).join(' · ');
    if (where) box.append(h('div', {class: 'error-where'}, where));
  } else {
    box.append(h('strong', {}, 'Error'), ' ', String((err && err.message) || err));
  }
  return box;
}

function defaultHint(err) {
  switch (err.code) {
    case 'unauthorized':
      return 'Enter the admin key with the “Key” button at the top of the page.';
    case 'forbidden':
      return 'The key in use is not accepted here; admin routes need the admin key.';
    case 'admin_disabled':
      return 'This server has no admin key, so retraining, evaluations, activation and deletes are off: restart it with --admin-key.';
    case 'network':
      return 'Check that the service is running.';
    case 'model_not_ready':
      return 'The model this needs is not trained yet; the Models page starts a retraining.';
  }
  return '';
}

// fill runs an async render into el: a loading line, then the content
// (a node or a list of nodes) or the error box. A request cancelled by
// navigation leaves el as it is.
export async function fill(el, render, loadingText = 'Loading…') {
  put(el, h('p', {class: 'muted loading'}, loadingText));
  try {
    const out = await render();
    clear(el);
    append(el, [out]);
  } catch (err) {
    if (isAbort(err)) return;
    put(el, errorBox(err));
  }
}

// table builds a scrollable table; cells are strings, numbers or nodes.
export function table(head, rows, attrs = {}) {
  return h('div', {class: 'table-wrap'},
    h('table', attrs,
      h('thead', {}, h('tr', {}, head.map((c) => (c instanceof Node ? c : h('th', {}, c))))),
      h('tbody', {}, rows)));
}

export function td(content, attrs = {}) {
  return h('td', attrs, content);
}

export function badge(text, kind) {
  return h('span', {class: 'badge badge-' + (kind || text)}, text);
}

export function section(title, ...children) {
  return h('section', {class: 'card'}, h('h2', {}, title), ...children);
}

export const fmtInt = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '–');

export function fmtNum(x, digits = 4) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '–';
  return x.toFixed(digits);
}

export function fmtDate(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function fmtSeconds(sec) {
  if (typeof sec !== 'number' || !Number.isFinite(sec)) return '–';
  if (sec < 1) return `${Math.round(sec * 1000)} ms`;
  if (sec < 60) return `${sec.toFixed(1)} s`;
  const m = Math.floor(sec / 60);
  return `${m} min ${Math.round(sec - 60 * m)} s`;
}

export function fmtBytes(n) {
  if (typeof n !== 'number') return '–';
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1 << 20)).toFixed(1)} MiB`;
}

export function fmtParams(p) {
  const keys = Object.keys(p || {}).sort();
  return keys.length ? keys.map((k) => `${k}=${p[k]}`).join(' ') : '–';
}

// Hash links: ids are escaped so that any id makes a valid route.
export const userHref = (id) => '#/users/' + encodeURIComponent(id);
export const itemHref = (id) => '#/items/' + encodeURIComponent(id);
export const reportHref = (id) => '#/evaluations/' + encodeURIComponent(id);

// itemLabel is an item link with its title when known.
export function itemLabel(id, title) {
  return h('a', {href: itemHref(id), class: 'item-link'},
    title ? [h('span', {class: 'item-title'}, title), ' ', h('span', {class: 'muted id'}, id)] : h('span', {class: 'id'}, id));
}

// every calls fn now and then every ms until signal aborts or fn returns
// false; a slow fn is never overlapped.
export function every(ms, fn, signal) {
  let timer = 0;
  const tick = async () => {
    if (signal.aborted) return;
    let again = true;
    try {
      again = (await fn()) !== false;
    } catch (err) {
      if (!isAbort(err)) console.warn(err);
    }
    if (again && !signal.aborted) timer = setTimeout(tick, ms);
  };
  signal.addEventListener('abort', () => clearTimeout(timer));
  tick();
}
