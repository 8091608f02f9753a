// Models: the trained versions with their validation scores, activation,
// retraining with live progress, and the job history.

import {get, post, seg, isAbort} from './api.js';
import {h, clear, errorBox, fill, section, badge, table, td, fmtDate, fmtNum, fmtSeconds, fmtBytes, fmtParams, put} from './dom.js';
import {chart, barChart} from './charts.js';
import {jobPanel, jobHistory, isLive} from './jobs.js';

// The server's registry has no listing route; these are its models today.
// Names seen in /models and in job records are added.
export const KNOWN_MODELS = ['popular', 'itemknn', 'userknn', 'kunn', 'kunn-i', 'kunn-u', 'slim'];

const VALIDATION_ORDER = ['adg', 'rec@10', 'map', 'ndcg', 'ndcg@10', 'atop', 'auc', 'p@10', 'mrr'];

export function orderMetrics(keys) {
  const known = VALIDATION_ORDER.filter((k) => keys.includes(k));
  return [...known, ...keys.filter((k) => !known.includes(k)).sort()];
}

// modelPicker is a set of checkboxes; none checked means the server's
// default list.
export function modelPicker(names, name) {
  return h('fieldset', {class: 'models-pick'},
    h('legend', {}, 'Models ', h('span', {class: 'muted small'}, '(none checked: the server’s --models)')),
    names.map((m) => h('label', {class: 'check'}, h('input', {type: 'checkbox', name, value: m}), m)));
}

export const pickedModels = (form, name) =>
  [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((i) => i.value);

export async function modelNames(signal) {
  const names = new Set(KNOWN_MODELS);
  try {
    for (const m of (await get('/models', {signal})).models) names.add(m.name);
  } catch (err) {
    if (isAbort(err)) throw err;
  }
  return [...names];
}

export function render(view, {signal}) {
  const list = h('div', {id: 'models-list'});
  const chartEl = h('div', {id: 'validation-chart'});
  const live = h('div', {id: 'job-live'});
  const history = h('div', {id: 'job-history'});
  const form = h('form', {id: 'retrain-form', class: 'form'});
  const formMsg = h('div');
  view.append(h('h1', {}, 'Models'),
    section('Trained models', h('p', {class: 'small muted'}, 'Every stored version, newest first within a model; validation scores are on the 10% per-user validation split that chose the parameters.'), list),
    section('Validation scores', chartEl),
    section('Retrain', form, formMsg, live),
    section('Jobs', h('p', {class: 'small muted'}, 'Open a job to see its stage timings.'), history));

  const hist = jobHistory(history, signal);
  const loadModels = () => fill(list, async () => {
    const {models} = await get('/models', {signal});
    drawChart(chartEl, models);
    return modelsTable(models, signal, loadModels);
  });
  loadModels();

  form.append(
    modelPicker(KNOWN_MODELS, 'model'),
    h('label', {class: 'check'}, h('input', {type: 'checkbox', name: 'queue', id: 'retrain-queue'}), 'queue behind a running training job instead of refusing'),
    h('label', {class: 'check'}, h('input', {type: 'checkbox', name: 'auto', id: 'retrain-auto'}), 'auto: activate the best model by validation ADG (with no models picked: the neighbourhood models, every FEBR variant and the matrix factorisations)'),
    h('div', {class: 'row'}, h('button', {type: 'submit', id: 'retrain-start'}, 'Start retraining')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const btn = form.querySelector('#retrain-start');
    btn.disabled = true;
    clear(formMsg);
    const body = {models: pickedModels(form, 'model'), queue: form.querySelector('#retrain-queue').checked,
      auto: form.querySelector('#retrain-auto').checked};
    try {
      const acc = await post('/admin/retrain', body, {signal});
      watch(acc.job_id);
    } catch (err) {
      if (isAbort(err)) return;
      formMsg.append(errorBox(err));
      const busy = err.code === 'conflict' && err.details.find((d) => d.field === 'job_id');
      if (busy) {
        const b = h('button', {type: 'button', class: 'secondary'}, `Watch ${busy.problem}`);
        b.addEventListener('click', () => watch(busy.problem));
        formMsg.append(b);
      }
    } finally {
      btn.disabled = false;
    }
  });
  const watch = (id) => {
    clear(formMsg);
    put(live, jobPanel(id, signal, {
      onDone: (j) => {
        hist.reload();
        if (j.state === 'succeeded') loadModels();
      },
    }));
    hist.reload();
  };
  // Follow a training job that is already under way.
  get('/admin/jobs', {signal, query: {limit: 20}}).then((out) => {
    const running = out.jobs.find((j) => j.kind === 'train' && isLive(j));
    if (running && !live.firstChild) watch(running.id);
  }, () => {});
  // Offer every model the server has trained, too.
  modelNames(signal).then((names) => {
    const pick = form.querySelector('.models-pick');
    for (const m of names.filter((n) => !KNOWN_MODELS.includes(n))) {
      pick.append(h('label', {class: 'check'}, h('input', {type: 'checkbox', name: 'model', value: m}), m));
    }
  }, () => {});
}

function modelsTable(models, signal, reload) {
  if (!models.length) return h('p', {class: 'muted'}, 'No trained model yet. Start a retraining below.');
  const metrics = orderMetrics([...new Set(models.flatMap((m) => Object.keys(m.validation || {})))]);
  const msg = h('div', {id: 'activate-msg'});
  const seen = new Set();
  const best = {};
  for (const k of metrics) {
    best[k] = Math.max(...models.map((m) => (m.validation || {})[k] ?? -Infinity));
  }
  const rows = models.map((m) => {
    const newest = !seen.has(m.name);
    seen.add(m.name);
    let action = '';
    if (m.active) {
      action = badge('active');
    } else if (newest) {
      action = h('button', {type: 'button', class: 'small-btn activate', 'data-model': m.name}, 'Activate');
      action.addEventListener('click', async () => {
        action.disabled = true;
        clear(msg);
        try {
          const info = await post('/admin/models/' + seg(m.name) + '/activate', undefined, {signal});
          msg.append(h('p', {class: 'ok', role: 'status'}, `${info.name} ${info.version} now answers recommendations by default.`));
          reload();
        } catch (err) {
          if (isAbort(err)) return;
          action.disabled = false;
          msg.append(errorBox(err));
        }
      });
    }
    const val = m.validation || {};
    return h('tr', {class: (newest ? '' : 'older ') + (m.active ? 'active-row' : ''), 'data-model': m.name},
      td(h('strong', {}, m.name)),
      td(m.version, {class: 'mono', title: m.job_id ? `trained by job ${m.job_id}` : ''}),
      td(action),
      ...metrics.map((k) => td(fmtNum(val[k]), {class: 'num' + (newest && val[k] === best[k] ? ' best' : '')})),
      td(fmtParams(m.params), {class: 'nowrap'}),
      td(fmtDate(m.trained_at), {class: 'nowrap'}),
      td(fmtSeconds(m.train_seconds), {class: 'num'}),
      td(fmtBytes(m.bytes), {class: 'num nowrap'}));
  });
  return [msg, table(['Model', 'Version', '', ...metrics.map((k) => h('th', {class: 'num'}, k)), 'Params', 'Trained', 'Train time', 'Size'],
    rows, {class: 'models-table'})];
}

function drawChart(el, models) {
  const newest = [];
  const seen = new Set();
  for (const m of models) {
    if (!seen.has(m.name)) newest.push(m);
    seen.add(m.name);
  }
  const metrics = orderMetrics([...new Set(newest.flatMap((m) => Object.keys(m.validation || {})))]);
  if (!metrics.length) {
    put(el, h('p', {class: 'muted'}, 'No validation scores yet.'));
    return;
  }
  const select = h('select', {id: 'validation-metric', 'aria-label': 'measure'}, metrics.map((k) => h('option', {value: k}, k)));
  const box = h('div');
  const draw = () => {
    const k = select.value;
    const vals = newest.map((m) => (m.validation || {})[k] ?? 0);
    const best = vals.indexOf(Math.max(...vals));
    put(box, chart(240, barChart({labels: newest.map((m) => m.name + (m.active ? ' ★' : '')), series: [{name: k, values: vals}], highlight: best}),
      `validation ${k} per model`));
  };
  select.addEventListener('change', draw);
  put(el, h('label', {class: 'inline'}, 'Measure ', select), h('span', {class: 'small muted'}, ' ★ active, darker bar best'), box);
  draw();
}
