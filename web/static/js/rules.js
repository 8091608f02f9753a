// Rules & placements: the business rules (/admin/rules) and placements
// (/admin/placements), each with a table and a form to create or edit
// one, and a preview of a user's list without and with a placement and
// a filter: which items moved, came in or went out, and which rules did
// it (explain=true). docs/rules.md describes all of it.

import {get, post, put as putJSON, del, seg, isAbort, titlesFor} from './api.js';
import {h, clear, errorBox, fill, section, badge, table, td, fmtNum, itemLabel, put} from './dom.js';

const ACTIONS = ['boost', 'bury', 'pin', 'exclude'];
const DEFAULT_N = 10; // the n of a ranked answer that names none

export function render(view, {signal, query}) {
  const state = {rules: [], placements: []};
  const rulesEl = h('div', {id: 'rules-list'});
  const placesEl = h('div', {id: 'placements-list'});
  const rulesMsg = h('div', {id: 'rules-msg'});
  const placesMsg = h('div', {id: 'placements-msg'});
  const previewEl = h('div', {id: 'preview'});

  const load = () => {
    const both = Promise.all([get('/admin/rules', {signal}), get('/admin/placements', {signal})]).then(([r, p]) => {
      state.rules = r.rules;
      state.placements = p.placements;
      previewForm.placements(state.placements);
      return state;
    });
    return Promise.all([
      fill(rulesEl, () => both.then((s) => rulesTable(s.rules, ruleForm.edit, async (r) => {
        clear(rulesMsg);
        await del('/admin/rules/' + seg(r.name), {signal});
        ruleForm.forget(r.name);
        load();
      }, rulesMsg))),
      fill(placesEl, () => both.then((s) => placementsTable(s, placementForm.edit, async (p) => {
        clear(placesMsg);
        await del('/admin/placements/' + seg(p.name), {signal});
        placementForm.forget(p.name);
        load();
      }, placesMsg))),
    ]).then(() => both.then(() => true, () => false));
  };

  const ruleForm = newRuleForm(signal, load);
  const placementForm = newPlacementForm(signal, load);
  const previewForm = newPreviewForm(previewEl, state, signal);

  view.append(h('h1', {}, 'Rules & placements'),
    section('Rules', h('p', {class: 'small muted'},
      'A rule excludes, boosts, buries or pins the items its condition matches while its window holds, in the answers of its placements (every answer when it names none). Times are UTC.'),
    rulesMsg, rulesEl),
    section('Placements', h('p', {class: 'small muted'},
      'A placement is a named surface: ?placement= applies its model or experiment, n, filter, rules and diversity, and the request’s own parameters narrow them.'),
    placesMsg, placesEl),
    section('Preview', h('p', {class: 'small muted'},
      'A user’s list as the application gets it without steering, beside the list with a placement and a filter. Rules that name no placement apply to both.'),
    previewForm.form, previewEl),
    h('div', {class: 'grid grid-2'},
      section('Create or edit a rule', ruleForm.form),
      section('Create or edit a placement', placementForm.form)));

  load().then((ok) => {
    if (ok && query.get('user')) previewForm.run(query);
  });
}

// ---- rules

function actionText(r) {
  if (r.action === 'boost') return `boost × ${r.factor}`;
  if (r.action === 'pin') return `pin at ${r.position}`;
  return r.action;
}

// utcText shows an RFC 3339 time in UTC to the minute (to the second when
// it has seconds).
function utcText(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toISOString().slice(0, 19).replace('T', ' ').replace(/:00$/, '');
}

function windowText(r) {
  if (r.starts_at && r.ends_at) return `${utcText(r.starts_at)} → ${utcText(r.ends_at)}`;
  if (r.starts_at) return `from ${utcText(r.starts_at)}`;
  if (r.ends_at) return `until ${utcText(r.ends_at)}`;
  return h('span', {class: 'muted'}, 'always');
}

// ruleState is the server's "active", and for an inactive rule whether
// its window is still to come or over.
function ruleState(r, now) {
  if (r.active) return 'active';
  if (r.starts_at && Date.parse(r.starts_at) > now) return 'scheduled';
  return 'ended';
}

const STATE_BADGE = {active: 'active', scheduled: 'queued', ended: 'plain'};

const dash = () => h('span', {class: 'muted'}, '–');

const chips = (names, none) => (names && names.length ?
  names.map((n) => h('span', {class: 'chip mono'}, n)) : h('span', {class: 'muted'}, none));

function rulesTable(rules, edit, remove, msg) {
  if (!rules.length) return h('p', {class: 'muted'}, 'No rules yet. Create one below.');
  const now = Date.now();
  const rows = rules.map((r) => {
    const st = ruleState(r, now);
    const editBtn = h('button', {type: 'button', class: 'small-btn secondary edit'}, 'Edit');
    editBtn.addEventListener('click', () => edit(r));
    return h('tr', {'data-rule': r.name},
      td(h('strong', {class: 'mono'}, r.name)),
      td(h('code', {}, r.condition), {class: 'wrap rule-condition'}),
      td(actionText(r), {class: 'nowrap rule-action'}),
      td(windowText(r), {class: 'rule-window'}),
      td(chips(r.placements, 'every answer'), {class: 'rule-placements'}),
      td(badge(st, STATE_BADGE[st]), {class: 'rule-state', 'data-state': st}),
      td(h('div', {class: 'row actions'}, editBtn, deleteButton(remove.bind(null, r), msg))));
  });
  return table(['Rule', 'Condition', 'Action', 'Window (UTC)', 'Placements', 'State', ''], rows, {id: 'rules-table', class: 'rules-table'});
}

// The value of a datetime-local input, read as UTC, and back.
function toUTC(v) {
  if (!v) return '';
  return (v.length === 16 ? v + ':00' : v) + 'Z';
}

function fromUTC(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().slice(0, 19);
}

const nameList = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);

function newRuleForm(signal, saved) {
  const input = (id, attrs) => h('input', {id, autocomplete: 'off', spellcheck: 'false', ...attrs});
  const name = input('rule-name', {type: 'text', name: 'name', maxlength: 64, placeholder: 'spring-campaign'});
  const cond = h('textarea', {id: 'rule-condition', name: 'condition', rows: 2, spellcheck: 'false', placeholder: '"Comedy" in categories'});
  const action = h('select', {id: 'rule-action', name: 'action'}, ACTIONS.map((a) => h('option', {value: a}, a)));
  const factor = input('rule-factor', {type: 'number', name: 'factor', step: 'any', min: 0, placeholder: '1.5', class: 'narrow'});
  const position = input('rule-position', {type: 'number', name: 'position', step: 1, min: 1, max: 1000, placeholder: '1', class: 'narrow'});
  const starts = input('rule-starts', {type: 'datetime-local', name: 'starts_at', step: 1});
  const ends = input('rule-ends', {type: 'datetime-local', name: 'ends_at', step: 1});
  const places = input('rule-placements', {type: 'text', name: 'placements', placeholder: 'home, product'});
  const mode = h('p', {id: 'rule-form-mode', class: 'form-mode'});
  const save = h('button', {type: 'submit', id: 'rule-save'});
  const reset = h('button', {type: 'button', id: 'rule-reset', class: 'secondary'}, 'New rule');
  const msg = h('div', {id: 'rule-form-msg'});
  const factorField = field('Factor', factor, ['factor']);
  const positionField = field('Position', position, ['position']);
  const form = h('form', {id: 'rule-form', class: 'form', novalidate: true},
    mode,
    h('div', {class: 'form-grid'},
      field('Name', name, ['name']),
      field('Action', action, ['action']),
      factorField, positionField,
      field('Condition', cond, ['condition'], 'A filter expression over id, categories, labels, features and age_days.', 'wide'),
      field('Starts (UTC)', starts, ['starts_at'], 'Empty: from now.'),
      field('Ends (UTC)', ends, ['ends_at'], 'Empty: for good.'),
      field('Placements', places, ['placements'], 'Comma-separated; empty: every answer.', 'wide')),
    h('div', {class: 'row'}, save, reset), msg);

  let editing = ''; // the name of the rule in the form, '' for a new one
  const showAction = () => {
    factorField.hidden = action.value !== 'boost';
    positionField.hidden = action.value !== 'pin';
  };
  const setMode = (ruleName) => {
    editing = ruleName;
    name.readOnly = !!ruleName;
    put(mode, ruleName ? ['Editing ', h('strong', {class: 'mono'}, ruleName), ' (saving replaces it)'] : 'New rule');
    save.textContent = ruleName ? 'Save rule' : 'Create rule';
    reset.hidden = !ruleName;
  };
  const blank = () => {
    for (const el of [name, cond, factor, position, starts, ends, places]) el.value = '';
    action.value = 'boost';
    showAction();
    setMode('');
  };
  blank();
  action.addEventListener('change', showAction);
  reset.addEventListener('click', () => {
    clearErrors(form, msg);
    blank();
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors(form, msg);
    const body = {name: name.value.trim(), condition: cond.value, action: action.value, placements: nameList(places.value)};
    if (body.action === 'boost' && factor.value !== '') body.factor = Number(factor.value);
    if (body.action === 'pin' && position.value !== '') body.position = Number(position.value);
    if (starts.value) body.starts_at = toUTC(starts.value);
    if (ends.value) body.ends_at = toUTC(ends.value);
    const was = editing;
    await submit({form, msg, save, blank, saved},
      () => was ? putJSON('/admin/rules/' + seg(was), body, {signal}) : post('/admin/rules', body, {signal}),
      (out) => h('p', {class: 'ok', role: 'status', id: 'rule-form-ok'},
        `${was ? 'Saved' : 'Created'} rule ${out.name}: ${out.active ? 'active now' : 'not active now'}.`));
  });
  return {
    form,
    edit(r) {
      clearErrors(form, msg);
      setMode(r.name);
      name.value = r.name;
      cond.value = r.condition;
      action.value = r.action;
      factor.value = r.action === 'boost' ? String(r.factor) : '';
      position.value = r.action === 'pin' ? String(r.position) : '';
      starts.value = fromUTC(r.starts_at);
      ends.value = fromUTC(r.ends_at);
      places.value = (r.placements || []).join(', ');
      showAction();
      form.scrollIntoView({block: 'nearest'});
      cond.focus({preventScroll: true});
    },
    forget(ruleName) {
      if (editing === ruleName) blank();
    },
  };
}

// ---- placements

function answeredBy(p) {
  if (p.model) return ['model ', h('strong', {}, p.model)];
  if (p.experiment) return ['experiment ', h('strong', {class: 'mono'}, p.experiment)];
  return h('span', {class: 'muted'}, 'the active model');
}

function placementsTable({placements, rules}, edit, remove, msg) {
  if (!placements.length) return h('p', {class: 'muted'}, 'No placements yet. Create one below.');
  const rows = placements.map((p) => {
    const editBtn = h('button', {type: 'button', class: 'small-btn secondary edit'}, 'Edit');
    editBtn.addEventListener('click', () => edit(p));
    // Rules that name the placement apply to it as well as those it lists.
    const naming = rules.filter((r) => (r.placements || []).includes(p.name) && !(p.rules || []).includes(r.name)).map((r) => r.name);
    return h('tr', {'data-placement': p.name},
      td(h('strong', {class: 'mono'}, p.name)),
      td(answeredBy(p), {class: 'placement-by'}),
      td(p.n ? String(p.n) : dash(), {class: 'num placement-n'}),
      td(p.filter ? h('code', {}, p.filter) : dash(), {class: 'wrap placement-filter'}),
      td([chips(p.rules, 'none listed'),
        naming.length ? h('div', {class: 'small muted'}, 'named by ', naming.join(', ')) : null], {class: 'placement-rules'}),
      td(p.max_per_category ? String(p.max_per_category) : dash(), {class: 'num placement-max'}),
      td(typeof p.diversity === 'number' ? String(p.diversity) : dash(), {class: 'num placement-diversity'}),
      td(h('div', {class: 'row actions'}, editBtn, deleteButton(remove.bind(null, p), msg))));
  });
  return table(['Placement', 'Answered by', 'n', 'Filter', 'Rules', 'Max per category', 'Diversity', ''], rows,
    {id: 'placements-table', class: 'placements-table'});
}

function newPlacementForm(signal, saved) {
  const input = (id, attrs) => h('input', {id, autocomplete: 'off', spellcheck: 'false', ...attrs});
  const name = input('placement-name', {type: 'text', name: 'name', maxlength: 64, placeholder: 'home'});
  const by = h('select', {id: 'placement-by', name: 'by'}, h('option', {value: ''}, 'the active model'));
  const n = input('placement-n', {type: 'number', name: 'n', min: 1, step: 1, placeholder: String(DEFAULT_N), class: 'narrow'});
  const filter = h('textarea', {id: 'placement-filter', name: 'filter', rows: 2, spellcheck: 'false', placeholder: 'labels.stock != "0"'});
  const rules = input('placement-rules', {type: 'text', name: 'rules', placeholder: 'spring-campaign'});
  const maxPer = input('placement-max', {type: 'number', name: 'max_per_category', min: 1, step: 1, class: 'narrow'});
  const diversity = input('placement-diversity', {type: 'number', name: 'diversity', min: 0, max: 1, step: 'any', class: 'narrow'});
  const mode = h('p', {id: 'placement-form-mode', class: 'form-mode'});
  const save = h('button', {type: 'submit', id: 'placement-save'});
  const reset = h('button', {type: 'button', id: 'placement-reset', class: 'secondary'}, 'New placement');
  const msg = h('div', {id: 'placement-form-msg'});
  const form = h('form', {id: 'placement-form', class: 'form', novalidate: true},
    mode,
    h('div', {class: 'form-grid'},
      field('Name', name, ['name']),
      field('Answered by', by, ['model', 'experiment']),
      field('n', n, ['n'], `Empty: the request’s, else ${DEFAULT_N}.`),
      field('Max per category', maxPer, ['max_per_category'], 'Empty: no cap.'),
      field('Diversity (0–1)', diversity, ['diversity'], 'MMR’s λ; 1 is the model’s order. Empty: none.'),
      field('Filter', filter, ['filter'], 'A filter expression every item of its answers satisfies; empty: none.', 'wide'),
      field('Rules', rules, ['rules'], 'Comma-separated, applied besides the rules that name this placement or none.', 'wide')),
    h('div', {class: 'row'}, save, reset), msg);

  const option = (value, label) => {
    if (![...by.options].some((o) => o.value === value)) by.append(h('option', {value}, label));
  };
  Promise.all([get('/models', {signal}), get('/admin/experiments', {signal})]).then(([ms, ex]) => {
    // Only recommenders answer a placement (the content metric is none).
    const trained = ms.models.map((m) => m.name).filter((m) => ms.recommenders.includes(m));
    for (const m of [...new Set(['popular', ...trained])]) option('model:' + m, 'model ' + m);
    for (const e of ex.experiments) option('experiment:' + e.id, `experiment ${e.name} (${e.id}, ${e.state})`);
    form.dataset.ready = 'true';
  }, (err) => {
    if (!isAbort(err)) msg.append(errorBox(err));
  });

  let editing = '';
  const setMode = (placementName) => {
    editing = placementName;
    name.readOnly = !!placementName;
    put(mode, placementName ? ['Editing ', h('strong', {class: 'mono'}, placementName), ' (saving replaces it)'] : 'New placement');
    save.textContent = placementName ? 'Save placement' : 'Create placement';
    reset.hidden = !placementName;
  };
  const blank = () => {
    for (const el of [name, n, filter, rules, maxPer, diversity]) el.value = '';
    by.value = '';
    setMode('');
  };
  blank();
  reset.addEventListener('click', () => {
    clearErrors(form, msg);
    blank();
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors(form, msg);
    const body = {rules: nameList(rules.value)};
    const [kind, ...rest] = by.value.split(':');
    if (kind === 'model' || kind === 'experiment') body[kind] = rest.join(':');
    if (n.value !== '') body.n = Number(n.value);
    if (filter.value.trim()) body.filter = filter.value;
    if (maxPer.value !== '') body.max_per_category = Number(maxPer.value);
    if (diversity.value !== '') body.diversity = Number(diversity.value);
    const target = editing || name.value.trim();
    const was = editing;
    if (!target) {
      // PUT needs a name in its path: say so where the server would.
      showError(form, msg, {name: 'ApiError', status: 400, details: [{field: 'name', problem: 'is required'}]});
      return;
    }
    await submit({form, msg, save, blank, saved},
      () => putJSON('/admin/placements/' + seg(target), body, {signal}),
      (out) => h('p', {class: 'ok', role: 'status', id: 'placement-form-ok'}, `${was ? 'Saved' : 'Stored'} placement ${out.name}.`));
  });
  return {
    form,
    edit(p) {
      clearErrors(form, msg);
      setMode(p.name);
      name.value = p.name;
      if (p.model) option('model:' + p.model, 'model ' + p.model);
      if (p.experiment) option('experiment:' + p.experiment, 'experiment ' + p.experiment);
      by.value = p.model ? 'model:' + p.model : p.experiment ? 'experiment:' + p.experiment : '';
      n.value = p.n ? String(p.n) : '';
      filter.value = p.filter || '';
      rules.value = (p.rules || []).join(', ');
      maxPer.value = p.max_per_category ? String(p.max_per_category) : '';
      diversity.value = typeof p.diversity === 'number' ? String(p.diversity) : '';
      form.scrollIntoView({block: 'nearest'});
      filter.focus({preventScroll: true});
    },
    forget(placementName) {
      if (editing === placementName) blank();
    },
  };
}

// ---- preview

function newPreviewForm(out, state, signal) {
  const user = h('input', {type: 'text', id: 'preview-user', name: 'user', autocomplete: 'off', spellcheck: 'false', placeholder: 'user id'});
  const place = h('select', {id: 'preview-placement', name: 'placement'}, h('option', {value: ''}, 'none'));
  const filter = h('input', {type: 'text', id: 'preview-filter', name: 'filter', autocomplete: 'off', spellcheck: 'false', placeholder: 'optional'});
  const n = h('input', {type: 'number', id: 'preview-n', name: 'n', min: 1, step: 1, class: 'narrow'});
  const go = h('button', {type: 'submit', id: 'preview-go'}, 'Preview');
  const form = h('form', {id: 'preview-form', class: 'form', novalidate: true},
    h('div', {class: 'form-grid'},
      field('User', user, ['user_id', 'id']),
      field('Placement', place, ['placement']),
      field('n', n, ['n'], `Empty: the placement’s, else ${DEFAULT_N}.`),
      field('Filter', filter, ['filter'], 'ANDed with the placement’s.', 'wide')),
    h('div', {class: 'row'}, go));

  const run = async () => {
    clearErrors(form, out);
    const q = {user: user.value.trim(), placement: place.value, filter: filter.value.trim(), n: n.value};
    if (!q.user) {
      showError(form, out, {name: 'ApiError', status: 400, details: [{field: 'id', problem: 'enter a user id'}]});
      return;
    }
    const hash = new URLSearchParams(Object.entries(q).filter(([, v]) => v !== ''));
    history.replaceState(null, '', '#/rules?' + hash.toString());
    go.disabled = true;
    put(out, h('p', {class: 'muted loading'}, 'Loading…'));
    try {
      put(out, await preview(q, state, signal));
    } catch (err) {
      if (isAbort(err)) return;
      clear(out);
      showError(form, out, err);
    } finally {
      go.disabled = false;
    }
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    run();
  });
  return {
    form,
    placements(list) {
      const keep = place.value;
      put(place, h('option', {value: ''}, 'none'), list.map((p) => h('option', {value: p.name}, p.name)));
      place.value = list.some((p) => p.name === keep) ? keep : '';
    },
    run(query) {
      user.value = query.get('user') || '';
      filter.value = query.get('filter') || '';
      n.value = query.get('n') || '';
      const p = query.get('placement') || '';
      if (p && ![...place.options].some((o) => o.value === p)) place.append(h('option', {value: p}, p));
      place.value = p;
      return run();
    },
  };
}

// preview answers the two lists: GET /users/{id}/recommendations?n=N, and
// the same with the placement and filter and explain=true. The user is
// read first: an unknown user would get the popular items, and the page
// says that there is no such user instead.
async function preview(q, state, signal) {
  const path = '/users/' + seg(q.user) + '/recommendations';
  await get('/users/' + seg(q.user), {signal});
  const p = state.placements.find((x) => x.name === q.placement);
  const n = q.n || (p && p.n) || DEFAULT_N;
  const plainQ = {n};
  const steerQ = {placement: q.placement, filter: q.filter, n: q.n, explain: 'true'};
  const [plain, steered] = await Promise.all([get(path, {signal, query: plainQ}), get(path, {signal, query: steerQ})]);
  const plainIDs = plain.items.map((it) => it.item_id);
  const steeredIDs = steered.items.map((it) => it.item_id);
  const titles = await titlesFor([...plainIDs, ...steeredIDs]);
  const wasAt = new Map(plainIDs.map((id, k) => [id, k]));
  const nowAt = new Map(steeredIDs.map((id, k) => [id, k]));
  const count = {added: 0, removed: 0, moved: 0, ruled: 0};

  const plainRows = plain.items.map((it, k) => {
    const gone = !nowAt.has(it.item_id);
    if (gone) count.removed++;
    return h('tr', {class: 'preview-row' + (gone ? ' change-removed' : ''), 'data-item': it.item_id, 'data-change': gone ? 'removed' : 'kept'},
      td(String(k + 1), {class: 'num'}),
      td(itemLabel(it.item_id, titles.get(it.item_id))),
      td(fmtNum(it.score), {class: 'num'}),
      td(gone ? badge('removed', 'negative') : ''));
  });
  const steeredRows = steered.items.map((it, k) => {
    const was = wasAt.get(it.item_id);
    const change = was === undefined ? 'added' : was === k ? 'same' : 'moved';
    if (change !== 'same') count[change]++;
    const ruled = it.rules || [];
    if (ruled.length) count.ruled++;
    let mark = '';
    if (change === 'added') mark = badge('added', 'succeeded');
    else if (change === 'moved') {
      mark = h('span', {class: 'nowrap ' + (was > k ? 'move-up' : 'move-down'), title: `#${was + 1} without steering`},
        `${was > k ? '↑' : '↓'} ${Math.abs(was - k)}`);
    }
    return h('tr', {class: 'preview-row change-' + change, 'data-item': it.item_id, 'data-change': change, 'data-rules': ruled.join(' ')},
      td(String(k + 1), {class: 'num'}),
      td(itemLabel(it.item_id, titles.get(it.item_id))),
      td(fmtNum(it.score), {class: 'num'}),
      td(mark, {class: 'preview-change'}),
      td(ruled.map((r) => h('span', {class: 'chip mono'}, r)), {class: 'preview-rules'}));
  });

  const request = (query) => {
    const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== ''));
    return h('code', {class: 'small wrap preview-request'}, 'GET ' + path + '?' + qs.toString());
  };
  const from = (o) => h('p', {class: 'small'}, 'From ', h('strong', {}, o.model), o.model_version ? ` ${o.model_version}` : '',
    o.fallback ? [' ', badge('fallback: ' + o.fallback, 'fallback')] : null,
    o.experiment ? ` (experiment ${o.experiment}, arm ${o.arm})` : '');
  const empty = () => h('p', {class: 'muted'}, 'No items.');
  const title = q.placement ? ['With placement ', h('span', {class: 'mono'}, q.placement), q.filter ? ' and the filter' : ''] :
    q.filter ? 'With the filter' : 'With no placement or filter';
  const summary = h('p', {id: 'preview-summary'},
    `${count.added} added, ${count.removed} removed, ${count.moved} moved; rules changed ${count.ruled} of the ${steered.items.length} items.`);
  return [
    summary,
    q.placement || q.filter ? null : h('p', {class: 'small muted'}, 'Pick a placement or a filter to see what it changes.'),
    h('div', {class: 'grid grid-2 preview-grid'},
      h('figure', {id: 'preview-plain'}, h('figcaption', {}, 'Without steering'), request(plainQ), from(plain),
        plain.items.length ? table(['#', 'Item', 'Score', ''], plainRows, {class: 'preview-table'}) : empty()),
      h('figure', {id: 'preview-steered'}, h('figcaption', {}, title), request(steerQ), from(steered),
        steered.items.length ? table(['#', 'Item', 'Score', 'Change', 'Rules'], steeredRows, {class: 'preview-table'}) : empty())),
  ];
}

// ---- form helpers

// field is a labelled control with a line under it for the problem of a
// 400 that names one of fields (the API's names for what it holds).
function field(label, control, fields, hint, cls) {
  const err = h('div', {class: 'field-error', id: control.id + '-error', 'data-fields': fields.join(' ')});
  control.setAttribute('aria-describedby', err.id);
  return h('div', {class: 'field' + (cls ? ' ' + cls : '')},
    h('label', {for: control.id}, label), control,
    hint ? h('div', {class: 'small muted'}, hint) : null, err);
}

// submit sends a form's write with its save button disabled; on success
// it empties the form, says ok(answer) and calls saved, otherwise it shows
// the server's error under the field it names.
async function submit({form, msg, save, blank, saved}, send, ok) {
  save.disabled = true;
  try {
    const out = await send();
    blank();
    msg.append(ok(out));
    saved();
  } catch (err) {
    if (!isAbort(err)) showError(form, msg, err);
  } finally {
    save.disabled = false;
  }
}

function clearErrors(form, msg) {
  for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  clear(msg);
}

// showError puts the problem of each field a 400 names under that field
// ("placements[2]" under placements); an error naming no field shown in
// the form goes to msg whole.
function showError(form, msg, err) {
  const details = err && err.name === 'ApiError' && err.status === 400 ? err.details : [];
  const slots = [...form.querySelectorAll('.field-error')];
  let rest = !details.length;
  for (const d of details) {
    const name = String(d.field ?? '').replace(/\[\d+\]$/, '');
    const slot = slots.find((el) => el.dataset.fields.split(' ').includes(name) && !el.closest('[hidden]'));
    if (!slot) {
      rest = true;
      continue;
    }
    slot.textContent = String(d.problem ?? '');
    slot.closest('.field').querySelector('input, select, textarea').setAttribute('aria-invalid', 'true');
  }
  if (rest) msg.append(errorBox(err));
}

// deleteButton asks twice: "Delete" becomes "Confirm delete" and
// "Cancel", and only the second click removes. A failure shows in msg.
function deleteButton(remove, msg) {
  const box = h('span', {class: 'delete-box'});
  const idle = () => {
    const b = h('button', {type: 'button', class: 'small-btn danger delete'}, 'Delete');
    b.addEventListener('click', ask);
    put(box, b);
  };
  const ask = () => {
    const yes = h('button', {type: 'button', class: 'small-btn danger confirm-delete'}, 'Confirm delete');
    const no = h('button', {type: 'button', class: 'small-btn secondary cancel-delete'}, 'Cancel');
    yes.addEventListener('click', async () => {
      yes.disabled = no.disabled = true;
      try {
        await remove();
      } catch (err) {
        if (isAbort(err)) return;
        msg.append(errorBox(err));
        idle();
      }
    });
    no.addEventListener('click', idle);
    put(box, yes, ' ', no);
    yes.focus();
  };
  idle();
  return box;
}
