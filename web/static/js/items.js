// Item explorer: the catalogue, an item's details and features, its
// collaborative and content neighbours, and query by example
// (POST /search/similar with a feature vector).

import {get, post, seg, isAbort, titlesFor, itemTitle, rememberTitle} from './api.js';
import {h, errorBox, fill, section, table, td, badge, fmtInt, fmtDate, fmtNum, itemLabel, itemHref, put} from './dom.js';

export function render(view, ctx) {
  if (!ctx.args.length) return renderCatalogue(view, ctx);
  return renderItem(view, ctx, ctx.args[0]);
}

function renderCatalogue(view, {signal, navigate}) {
  const input = h('input', {type: 'text', id: 'item-id', name: 'id', required: true, placeholder: 'item id', autocomplete: 'off', spellcheck: 'false'});
  const open = h('form', {class: 'row id-form'}, h('label', {for: 'item-id', class: 'sr-only'}, 'item id'), input, h('button', {type: 'submit'}, 'Open'));
  open.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (input.value.trim()) navigate(itemHref(input.value.trim()));
  });
  const list = h('div', {id: 'catalogue'});
  view.append(h('h1', {}, 'Items'),
    section('Open an item', open),
    section('Catalogue', h('p', {class: 'small muted'}, 'In natural id order (2 before 10).'), list),
    section('Query by example', searchForm({}, signal)));
  catalogue(list, signal);
}

function catalogue(el, signal) {
  const body = h('tbody');
  const more = h('button', {type: 'button', class: 'secondary', id: 'catalogue-more'}, 'Load more');
  const msg = h('div');
  let cursor = '';
  const load = async () => {
    more.disabled = true;
    try {
      const page = await get('/items', {signal, query: {limit: 25, cursor}});
      for (const it of page.items) {
        rememberTitle(it.id, itemTitle(it));
        body.append(h('tr', {class: 'catalogue-row', 'data-id': it.id},
          td(itemLabel(it.id, itemTitle(it))),
          td((it.categories || []).join(', '), {class: 'wrap'}),
          td(fmtInt(it.positives), {class: 'num'}),
          td(Object.keys(it.features || {}).length, {class: 'num'}),
          td(it.hidden ? badge('hidden') : '')));
      }
      cursor = page.next_cursor || '';
      more.hidden = !cursor;
    } catch (err) {
      if (!isAbort(err)) msg.append(errorBox(err));
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', load);
  more.hidden = true;
  put(el, h('div', {class: 'table-wrap'}, h('table', {id: 'catalogue-table'},
    h('thead', {}, h('tr', {}, ['Item', 'Categories', 'Relevant users', 'Features', ''].map((c) => h('th', {}, c)))), body)), msg, more);
  load();
}

function renderItem(view, {signal}, id) {
  const details = h('div', {id: 'item-details'});
  const features = h('div', {id: 'item-features'});
  const collab = h('div', {id: 'similar-collaborative'});
  const content = h('div', {id: 'similar-content'});
  const search = h('div', {id: 'item-search'});
  view.append(
    h('p', {}, h('a', {href: '#/items'}, '← catalogue')),
    h('h1', {id: 'item-heading'}, 'Item ', h('span', {class: 'mono'}, id)),
    h('div', {class: 'grid grid-2'}, section('Details', details), section('Features', features)),
    h('div', {class: 'grid grid-2'},
      section('Collaborative neighbours', h('p', {class: 'small muted'}, 'Items the same users liked (GET /items/{id}/similar?by=collaborative).'), collab),
      section('Content neighbours', h('p', {class: 'small muted'}, 'Nearest by the learned metric over item features (by=content).'), content)),
    section('Query by example', search));

  fill(details, async () => {
    const it = await get('/items/' + seg(id), {signal});
    const title = itemTitle(it);
    rememberTitle(id, title);
    if (title) view.querySelector('#item-heading').replaceChildren(title, ' ', h('span', {class: 'muted mono small'}, id));
    put(features, featureTable(it.features || {}));
    put(search, searchForm(it.features || {}, signal));
    const labels = Object.entries(it.labels || {});
    return h('dl', {class: 'facts'},
      h('dt', {}, 'Categories'), h('dd', {}, (it.categories || []).length ? it.categories.map((c) => h('span', {class: 'chip'}, c)) : '–'),
      h('dt', {}, 'Relevant users'), h('dd', {}, fmtInt(it.positives)),
      h('dt', {}, 'Hidden'), h('dd', {}, it.hidden ? badge('hidden') : 'no'),
      h('dt', {}, 'Created'), h('dd', {}, fmtDate(it.created_at)),
      h('dt', {}, 'Updated'), h('dd', {}, fmtDate(it.updated_at)),
      labels.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {class: 'wrap'}, v)]));
  }).then(() => {
    if (!features.firstChild || features.querySelector('.loading')) {
      put(features, h('p', {class: 'muted'}, 'Needs the item above.'));
      put(search, searchForm({}, signal));
    }
  });
  fill(collab, () => similar(id, 'collaborative', signal));
  fill(content, () => similar(id, 'content', signal));
}

function featureTable(f) {
  const entries = Object.entries(f);
  if (!entries.length) return h('p', {class: 'muted'}, 'No features.');
  const nonzero = entries.filter(([, v]) => v !== 0);
  const max = Math.max(...entries.map(([, v]) => Math.abs(v)), 1e-12);
  const rows = entries.map(([k, v]) => {
    const meter = h('span', {class: 'meter'}, h('span', {class: 'meter-fill'}));
    meter.firstChild.style.width = Math.round(100 * Math.abs(v) / max) + '%';
    return h('tr', {class: v === 0 ? 'zero' : ''}, td(k), td(String(Number(v.toPrecision(6))), {class: 'num'}), td(meter));
  });
  return [
    h('p', {class: 'small'}, `${entries.length} features, ${nonzero.length} non-zero: `,
      nonzero.slice(0, 20).map(([k]) => h('span', {class: 'chip'}, k))),
    h('details', {class: 'features-all'}, h('summary', {}, 'All values'),
      table(['name', 'value', ''], rows, {class: 'features-table'})),
  ];
}

async function similar(id, by, signal) {
  const out = await get('/items/' + seg(id) + '/similar', {signal, query: {by, n: 10}});
  if (!out.items.length) return h('p', {class: 'muted'}, 'No neighbours.');
  const titles = await titlesFor(out.items.map((it) => it.item_id));
  return [
    h('p', {class: 'small muted'}, `${out.model} ${out.model_version}`),
    table(['#', 'Item', 'Score'], out.items.map((it, k) => h('tr', {},
      td(String(k + 1), {class: 'num'}), td(itemLabel(it.item_id, titles.get(it.item_id))), td(fmtNum(it.score), {class: 'num'}))),
    {class: 'similar-table similar-' + by}),
  ];
}

// parseFeatures reads the textarea: a JSON array or object of numbers, or
// "name=value" / "name: value" lines, or numbers separated by commas.
export function parseFeatures(text) {
  const t = text.trim();
  if (!t) throw new Error('Enter a feature vector.');
  if (t[0] === '[' || t[0] === '{') {
    let v;
    try {
      v = JSON.parse(t);
    } catch (err) {
      throw new Error('The features are not valid JSON: ' + err.message);
    }
    return v;
  }
  if (/^[-+\d.eE,\s]+$/.test(t)) return t.split(/[,\s]+/).filter(Boolean).map(Number);
  const obj = {};
  for (const line of t.split(/\n|;/)) {
    if (!line.trim()) continue;
    const m = /^\s*(.+?)\s*[=:]\s*(\S+)\s*$/.exec(line);
    if (!m || Number.isNaN(Number(m[2]))) throw new Error(`Cannot read “${line.trim()}”: write name=value, one per line, or JSON.`);
    obj[m[1]] = Number(m[2]);
  }
  return obj;
}

function searchForm(features, signal) {
  const nonzero = Object.fromEntries(Object.entries(features).filter(([, v]) => v !== 0));
  const area = h('textarea', {id: 'search-features', name: 'features', rows: 5, spellcheck: 'false',
    placeholder: '{"Action": 1, "Sci-Fi": 1}  or  [0.1, 0.7, 0]  or one name=value per line'});
  area.value = Object.keys(nonzero).length ? JSON.stringify(nonzero) : '';
  const n = h('input', {type: 'number', id: 'search-n', name: 'n', min: 1, max: 1000, value: '10', class: 'narrow'});
  const result = h('div', {id: 'search-result', 'aria-live': 'polite'});
  const form = h('form', {id: 'search-form', class: 'form'},
    h('p', {class: 'small muted'}, 'Items nearest to a feature vector that need not be in the catalogue (POST /search/similar): an object of the catalogue’s feature names, or an array in their order.'),
    h('label', {for: 'search-features'}, 'Features'), area,
    h('div', {class: 'row fields'}, h('label', {}, 'n ', n), h('button', {type: 'submit', id: 'search-go'}, 'Search')),
    result);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    let feats;
    try {
      feats = parseFeatures(area.value);
    } catch (err) {
      put(result, errorBox(err));
      return;
    }
    await fill(result, async () => {
      const out = await post('/search/similar', {features: feats, n: Number(n.value || 10)}, {signal});
      const items = (out && out.items) || [];
      if (!items.length) return h('p', {class: 'muted'}, 'No items found.');
      const titles = await titlesFor(items.map((it) => it.item_id));
      return table(['#', 'Item', 'Score'], items.map((it, k) => h('tr', {},
        td(String(k + 1), {class: 'num'}), td(itemLabel(it.item_id, titles.get(it.item_id))), td(fmtNum(it.score), {class: 'num'}))),
      {class: 'search-table'});
    }, 'Searching…');
  });
  return form;
}
