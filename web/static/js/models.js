// Models: the trained versions with their validation scores, activation,
// retraining with live progress, and the job history.

import {get, post, seg, isAbort} from './api.js';
import {h, append, clear, errorBox, fill, section, badge, table, td, fmtDate, fmtNum, fmtSeconds, fmtBytes, put} from './dom.js';
import {chart, barChart} from './charts.js';
import {jobPanel, jobHistory, isLive} from './jobs.js';

const VALIDATION_ORDER = ['adg', 'rec@10', 'map', 'ndcg', 'ndcg@10', 'atop', 'auc', 'p@10', 'mrr'];

export function orderMetrics(keys) {
  const known = VALIDATION_ORDER.filter((k) => keys.includes(k));
  return [...known, ...keys.filter((k) => !known.includes(k)).sort()];
}

// modelPicker is a set of checkboxes, one per name the server accepts
// (GET /models lists them from its registry); pick chooses the list
// (out.trainable, out.recommenders) and defaults what none checked means.
export function modelPicker(name, signal, pick, defaults) {
  const note = h('span', {class: 'muted small'}, '(none checked: the server’s --models)');
  const box = h('fieldset', {class: 'models-pick', 'data-pick': name}, h('legend', {}, 'Models ', note));
  get('/models', {signal}).then((out) => {
    append(box, pick(out).map((m) => h('label', {class: 'check'}, h('input', {type: 'checkbox', name, value: m}), m)));
    note.textContent = `(none checked: ${defaults(out).join(', ') || 'none'})`;
    box.dataset.ready = 'true';
  }, (err) => {
    if (!isAbort(err)) box.append(errorBox(err));
  });
  return box;
}

export const pickedModels = (form, name) =>
  [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((i) => i.value);

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
    const {models, recommenders} = await get('/models', {signal});
    drawChart(chartEl, models);
    return modelsTable(models, recommenders, signal, loadModels);
  });
  loadModels();

  form.append(
    modelPicker('model', signal, (out) => out.trainable, (out) => out.defaults),
    h('label', {class: 'check'}, h('input', {type: 'checkbox', name: 'queue', id: 'retrain-queue'}), 'queue behind a running training job instead of refusing'),
    h('label', {class: 'check'}, h('input', {type: 'checkbox', name: 'auto', id: 'retrain-auto'}), 'auto: activate the best model by validation ADG (with no models picked: the server\'s models and auto mode\'s other candidates, within the training budget)'),
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
}

// modelsTable lists the stored versions; the newest version of a
// recommender that is not active gets an Activate button (the content
// metric is no recommender: activating it is a 404).
function modelsTable(models, recommenders, signal, reload) {
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
    } else if (!recommenders.includes(m.name)) {
      action = h('span', {class: 'muted small', title: 'Not a recommender: it cannot answer recommendations, so it cannot be activated.'}, '—');
    } else if (newest) {
      action = h('button', {type: 'button', class: 'small-btn activate', 'data-model': m.name}, 'Activate');
      action.addEventListener('click', async () => {
        action.disabled = true;
        clear(msg);
        try {
          const info = await post('/admin/models/' + seg(m.name) + '/activate', undefined, {signal});
          msg.append(h('p', {class: 'ok', role: 'status'}, `${info.name} ${info.version} now answers recommendations by default.`));
          if (info.warning) msg.append(h('p', {class: 'warn', id: 'activate-warning'}, info.warning));
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
      td([h('strong', {}, m.name), h('div', {class: 'mono small version', title: m.job_id ? `trained by job ${m.job_id}` : ''}, m.version)]),
      td(action),
      ...metrics.map((k) => td(fmtNum(val[k]), {class: 'num' + (newest && val[k] === best[k] ? ' best' : '')})),
      td(paramPairs(m.params), {class: 'params'}),
      td(fmtDate(m.trained_at).split(' ').map((part, i) => [i ? ' ' : '', h('span', {class: 'nowrap'}, part)])),
      td(fmtSeconds(m.train_seconds), {class: 'num'}),
      servingCost(m.serving_cost),
      td(fmtBytes(m.bytes), {class: 'num nowrap'}));
  });
  const costHead = h('th', {class: 'num', title: 'CPU time of one core per recommendation request (n = 10), measured after training on a fixed sample of users: the mean, and the p99 below it'}, 'Serve ms');
  return [msg, table(['Model', '', ...metrics.map((k) => h('th', {class: 'num'}, k)), 'Params', 'Trained', 'Train time', costHead, 'Size'],
    rows, {class: 'models-table'})];
}

// servingCost is the cell of a version's measured serving cost: the mean
// CPU ms per request, the p99 under it; a dash when it was not measured
// (the content metric, versions trained before the measure).
function servingCost(c) {
  if (!c) return td('–', {class: 'num serving-cost'});
  return td([h('span', {class: 'nowrap'}, c.mean_ms.toFixed(3)), ' ', h('span', {class: 'nowrap small muted'}, `p99 ${c.p99_ms.toFixed(3)}`)],
    {class: 'num serving-cost', title: `mean ${c.mean_ms.toFixed(3)} ms, p50 ${c.p50_ms.toFixed(3)} ms, p99 ${c.p99_ms.toFixed(3)} ms over ${c.requests} requests`});
}

// paramPairs lists the parameters as name=value pairs that wrap between
// pairs, never inside one, so a model with many keeps the table narrow.
function paramPairs(p) {
  const keys = Object.keys(p || {}).sort();
  if (!keys.length) return '–';
  return keys.map((k, i) => [i ? ' ' : '', h('span', {class: 'nowrap'}, `${k}=${p[k]}`)]);
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
    // A model without the measure (the content metric has no validation
    // scores) gets no bar, not a bar at 0.
    const vals = newest.map((m) => (m.validation || {})[k]);
    const scored = vals.filter((v) => typeof v === 'number' && Number.isFinite(v));
    const best = scored.length ? vals.indexOf(Math.max(...scored)) : -1;
    put(box, chart(240, barChart({labels: newest.map((m) => m.name + (m.active ? ' ★' : '')), series: [{name: k, values: vals}], highlight: best, missing: 'no score'}),
      `validation ${k} per model`));
  };
  select.addEventListener('change', draw);
  put(el, h('label', {class: 'inline'}, 'Measure ', select), h('span', {class: 'small muted'}, ' ★ active, darker bar best'), box);
  draw();
}
