// The dashboard: a single page with hash routes
//   #/overview  #/models  #/evaluations[/<id>[?vs=<id>]]  #/users[/<id>]  #/items[/<id>]  #/online  #/rules
// Each route renders into <main id="view"> with an AbortSignal that is
// aborted on the next navigation, stopping its polls and requests.

import {getKey, setKey, isAbort} from './api.js';
import {h, clear, errorBox} from './dom.js';
import * as overview from './overview.js';
import * as models from './models.js';
import * as evaluations from './evaluations.js';
import * as users from './users.js';
import * as items from './items.js';
import * as online from './online.js';
import * as rules from './rules.js';

const pages = {overview, models, evaluations, users, items, online, rules};

let current = null; // AbortController of the page on screen

// parseHash splits "#/users/a%2Fb?model=x" into page, decoded path
// segments and query.
function parseHash(hash) {
  const raw = hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const parts = path.split('/').filter((p) => p !== '').map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  return {page: parts[0] || 'overview', args: parts.slice(1), query};
}

function navigate(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

function render() {
  if (current) current.abort();
  current = new AbortController();
  const route = parseHash(location.hash);
  const view = clear(document.getElementById('view'));
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.page === route.page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const page = pages[route.page];
  if (!page) {
    view.append(h('h1', {}, 'Not found'), h('p', {}, 'No page here. ', h('a', {href: '#/overview'}, 'Go to the overview.')));
    return;
  }
  document.title = `${route.page[0].toUpperCase()}${route.page.slice(1)} · recsys`;
  const signal = current.signal;
  Promise.resolve()
    .then(() => page.render(view, {args: route.args, query: route.query, signal, navigate}))
    .catch((err) => {
      if (!isAbort(err) && !signal.aborted) view.append(errorBox(err));
    });
}

function showKeyState() {
  const set = getKey() !== '';
  const summary = document.getElementById('key-summary');
  summary.textContent = set ? 'Key ✓' : 'Key';
  summary.title = set ? 'An API key is set for this tab' : 'No API key set';
  summary.classList.toggle('key-set', set);
}

function setupKey() {
  const form = document.getElementById('key-form');
  const input = document.getElementById('key-input');
  const box = document.getElementById('keybox');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    setKey(input.value.trim());
    input.value = '';
    box.open = false;
    showKeyState();
    render();
  });
  document.getElementById('key-clear').addEventListener('click', () => {
    setKey('');
    input.value = '';
    box.open = false;
    showKeyState();
    render();
  });
  box.addEventListener('toggle', () => {
    if (box.open) input.focus();
  });
  showKeyState();
}

setupKey();
window.addEventListener('hashchange', render);
if (!location.hash) history.replaceState(null, '', '#/overview');
render();
