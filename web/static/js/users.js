// User explorer: a user's summary and history, and their recommendations
// from any model with the reasons behind each item.

import {get, seg, isAbort, titlesFor} from './api.js';
import {h, clear, errorBox, fill, section, table, td, badge, fmtInt, fmtDate, fmtNum, itemLabel, userHref, put} from './dom.js';

const PAGE = 25;

export function render(view, ctx) {
  if (!ctx.args.length) return renderPick(view, ctx);
  return renderUser(view, ctx, ctx.args[0]);
}

function idForm(id, placeholder, go) {
  const input = h('input', {type: 'text', id, name: 'id', required: true, placeholder, autocomplete: 'off', spellcheck: 'false'});
  const form = h('form', {class: 'row id-form'}, h('label', {for: id, class: 'sr-only'}, placeholder), input, h('button', {type: 'submit'}, 'Open'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (input.value.trim()) go(input.value.trim());
  });
  return form;
}

function renderPick(view, {signal, navigate}) {
  const list = h('div', {id: 'users-list'});
  view.append(h('h1', {}, 'Users'),
    section('Open a user', h('p', {class: 'small muted'}, 'A user’s history and recommendations; ids are the ones your application sends.'),
      idForm('user-id', 'user id', (id) => navigate(userHref(id)))),
    section('All users', h('p', {class: 'small muted'}, 'In natural id order (2 before 10); click one to open it.'), list));
  userList(list, signal);
}

// userList pages through GET /users, a page at a time on "Load more".
function userList(el, signal) {
  const body = h('tbody');
  const more = h('button', {type: 'button', class: 'secondary', id: 'users-more'}, 'Load more');
  const msg = h('div');
  const status = h('p', {class: 'small muted', id: 'users-status'});
  let cursor = '';
  let shown = 0;
  const load = async () => {
    more.disabled = true;
    clear(msg);
    try {
      const page = await get('/users', {signal, query: {limit: PAGE, cursor}});
      for (const u of page.users) {
        body.append(h('tr', {class: 'user-row', 'data-id': u.id},
          td(h('a', {href: userHref(u.id), class: 'mono'}, u.id)),
          td(fmtInt(u.events), {class: 'num'}),
          td(fmtInt(u.items), {class: 'num'}),
          td(fmtInt(u.positives), {class: 'num'}),
          td(fmtDate(u.last_seen), {class: 'nowrap'})));
      }
      shown += page.users.length;
      cursor = page.next_cursor || '';
      status.textContent = shown ? `${fmtInt(shown)} user${shown === 1 ? '' : 's'} shown${cursor ? '' : ', all of them'}.` : 'No users yet.';
      more.hidden = !cursor;
    } catch (err) {
      if (!isAbort(err)) msg.append(errorBox(err));
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', load);
  more.hidden = true;
  put(el, h('div', {class: 'table-wrap'}, h('table', {id: 'users-table'},
    h('thead', {}, h('tr', {}, ['User', 'Events', 'Items', 'Relevant', 'Last seen'].map((c) => h('th', {}, c)))), body)),
  status, msg, more);
  load();
}

function renderUser(view, {signal, query}, id) {
  const summary = h('div', {id: 'user-summary', class: 'card-less'});
  const recs = h('div', {id: 'recs'});
  const historyEl = h('div', {id: 'history'});
  const form = recForm(query);
  view.append(
    h('p', {}, h('a', {href: '#/users'}, '← users')),
    h('h1', {}, 'User ', h('span', {class: 'mono'}, id)),
    summary,
    section('Recommendations', form, recs),
    section('History', h('p', {class: 'small muted'}, 'One row per item, in the store’s order, with the latest event’s type and value; “Load more” reads the next page.'), historyEl));

  fill(summary, async () => {
    const u = await get('/users/' + seg(id), {signal});
    const stat = (sid, label, value) => h('div', {class: 'stat'}, h('div', {class: 'stat-value', id: sid}, value), h('div', {class: 'stat-label'}, label));
    return h('div', {class: 'stats'},
      stat('user-items', 'items', fmtInt(u.items)),
      stat('user-positives', 'relevant', fmtInt(u.positives)),
      stat('user-events', 'events', fmtInt(u.events)),
      h('div', {class: 'stat'}, h('dl', {class: 'facts small'},
        h('dt', {}, 'First seen'), h('dd', {}, fmtDate(u.created_at)),
        h('dt', {}, 'Last seen'), h('dd', {}, fmtDate(u.last_seen)))));
  });

  const loadRecs = () => {
    const q = formQuery(form);
    history.replaceState(null, '', userHref(id) + '?' + new URLSearchParams(q).toString());
    return fill(recs, () => recommendations(id, q, signal));
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    loadRecs();
  });
  form.addEventListener('change', (ev) => {
    if (ev.target.name === 'model' || ev.target.name === 'exclude_consumed') loadRecs();
  });
  get('/models', {signal}).then(({models, recommenders}) => {
    const sel = form.querySelector('#rec-model');
    const want = query.get('model') || '';
    // Only recommenders answer ?model= (the content metric is not one).
    for (const name of [...new Set(models.map((m) => m.name))].filter((n) => recommenders.includes(n))) {
      const active = models.some((m) => m.name === name && m.active);
      const label = name + (active ? ' (active)' : '');
      const have = [...sel.options].find((o) => o.value === name);
      if (have) have.textContent = label;
      else sel.append(h('option', {value: name, selected: name === want}, label));
    }
  }, () => {});
  loadRecs();
  historyPages(historyEl, id, signal);
}

function recForm(query) {
  const model = query.get('model') || '';
  const sel = h('select', {id: 'rec-model', name: 'model'}, h('option', {value: ''}, 'active model'));
  if (model) sel.append(h('option', {value: model, selected: true}, model));
  return h('form', {id: 'rec-form', class: 'row fields'},
    h('label', {}, 'Model ', sel),
    h('label', {}, 'n ', h('input', {type: 'number', id: 'rec-n', name: 'n', min: 1, max: 1000, value: query.get('n') || '10', class: 'narrow'})),
    h('label', {}, 'Category ', h('input', {type: 'text', id: 'rec-category', name: 'category', value: query.get('category') || '', class: 'narrow', placeholder: 'any'})),
    h('label', {class: 'check'}, h('input', {type: 'checkbox', id: 'rec-exclude', name: 'exclude_consumed', checked: query.get('exclude_consumed') !== 'false'}), 'exclude consumed'),
    h('button', {type: 'submit', id: 'rec-go'}, 'Recommend'));
}

function formQuery(form) {
  const q = {n: form.querySelector('#rec-n').value || '10'};
  const model = form.querySelector('#rec-model').value;
  const cat = form.querySelector('#rec-category').value.trim();
  if (model) q.model = model;
  if (cat) q.category = cat;
  if (!form.querySelector('#rec-exclude').checked) q.exclude_consumed = 'false';
  return q;
}

async function recommendations(id, q, signal) {
  const out = await get('/users/' + seg(id) + '/recommendations', {signal, query: {...q, explain: 'true'}});
  const reasonIDs = out.items.flatMap((it) => (it.reasons || []).filter((r) => r.kind === 'item').map((r) => r.id));
  const titles = await titlesFor([...out.items.map((it) => it.item_id), ...reasonIDs]);
  const anyReasons = out.items.some((it) => Array.isArray(it.reasons));
  // Meters share one scale across the answer, so weights compare between items.
  const maxWeight = Math.max(1e-12, ...out.items.flatMap((it) => (it.reasons || []).map((r) => Math.abs(r.weight || 0))));
  const head = h('p', {class: 'rec-head'},
    'From ', h('strong', {id: 'rec-model-used'}, out.model), out.model_version ? ` ${out.model_version}` : '',
    out.fallback ? [' ', badge('fallback: ' + out.fallback, 'fallback')] : null);
  const notes = [];
  if (out.fallback) {
    notes.push(h('p', {class: 'small warn'}, 'No trained model answered (no model yet, or no history for this user): these are the most popular items.'));
  }
  if (!anyReasons && out.items.length) {
    notes.push(h('p', {class: 'small muted', id: 'no-reasons'}, 'No reasons came with these items: popularity has none to give, and a server without explain=true sends none.'));
  }
  if (!out.items.length) return [head, ...notes, h('p', {class: 'muted'}, 'No items to recommend.')];
  const rows = out.items.map((it, k) => h('tr', {class: 'rec-row'},
    td(String(k + 1), {class: 'num'}),
    td(itemLabel(it.item_id, titles.get(it.item_id))),
    td(fmtNum(it.score), {class: 'num'}),
    td(reasons(it.reasons, titles, maxWeight), {class: 'reasons'})));
  return [head, ...notes, table(['#', 'Item', 'Score', 'Because'], rows, {id: 'recs-table', class: 'recs-table'})];
}

// reasons renders {"kind":"item"|"user","id","weight"}: the consumed items
// or neighbour users that contributed most, strongest first, grouped by
// kind, each with a meter of its weight against max.
function reasons(list, titles, max) {
  if (!Array.isArray(list)) return h('span', {class: 'muted'}, '–');
  if (!list.length) return h('span', {class: 'muted'}, 'no single reason');
  const groups = [['item', 'you had'], ['user', 'similar users']];
  const other = list.filter((r) => r.kind !== 'item' && r.kind !== 'user');
  const line = (r) => {
    const meter = h('span', {class: 'meter'}, h('span', {class: 'meter-fill'}));
    meter.firstChild.style.width = Math.round(100 * Math.abs(r.weight || 0) / max) + '%';
    const who = r.kind === 'user'
      ? h('a', {href: userHref(r.id), class: 'mono'}, r.id)
      : r.kind === 'item' ? itemLabel(r.id, titles.get(r.id)) : h('span', {}, `${r.kind} ${r.id}`);
    return h('li', {class: 'reason reason-' + r.kind, title: `weight ${fmtNum(r.weight)}`}, meter, who);
  };
  const blocks = groups.map(([kind, label]) => [label, list.filter((r) => r.kind === kind)]);
  if (other.length) blocks.push(['other', other]);
  return blocks.filter(([, rs]) => rs.length).map(([label, rs]) => h('div', {class: 'reason-group'},
    h('span', {class: 'reason-kind'}, label), h('ul', {class: 'reason-list'},
      [...rs].sort((a, b) => (b.weight || 0) - (a.weight || 0)).map(line))));
}

function historyPages(el, id, signal) {
  const rowsEl = h('tbody');
  const more = h('button', {type: 'button', id: 'history-more', class: 'secondary'}, 'Load more');
  const msg = h('div');
  const status = h('p', {class: 'small muted'});
  let cursor = '';
  let shown = 0;
  const load = async () => {
    more.disabled = true;
    clear(msg);
    try {
      const page = await get('/users/' + seg(id) + '/interactions', {signal, query: {limit: PAGE, cursor}});
      const titles = await titlesFor(page.interactions.map((e) => e.item_id));
      for (const e of page.interactions) {
        rowsEl.append(h('tr', {class: 'history-row' + (e.negative ? ' negative' : '')},
          td(itemLabel(e.item_id, titles.get(e.item_id))),
          td(e.type), td(e.value !== undefined ? String(e.value) : '–', {class: 'num'}), td(String(e.count), {class: 'num'}),
          td(e.negative ? badge('excluded', 'negative') : (e.relevant ? badge('relevant', 'relevant') : badge('not relevant', 'plain'))),
          td(fmtDate(e.first_seen), {class: 'nowrap'}), td(fmtDate(e.last_seen), {class: 'nowrap'})));
      }
      shown += page.interactions.length;
      cursor = page.next_cursor || '';
      status.textContent = shown ? `${shown} item${shown === 1 ? '' : 's'} shown${cursor ? '' : ', all of them'}.` : 'No history.';
      more.hidden = !cursor;
    } catch (err) {
      if (isAbort(err)) return;
      msg.append(errorBox(err));
      if (!shown) wrap.hidden = true;
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', load);
  const wrap = h('div', {class: 'table-wrap'}, h('table', {id: 'history-table'},
    h('thead', {}, h('tr', {}, ['Item', 'Type', 'Value', 'Count', 'Relevance', 'First seen', 'Last seen'].map((c) => h('th', {}, c)))),
    rowsEl));
  put(el, wrap, status, msg, more);
  more.hidden = true;
  load();
}
