// Online: CTR per model and day with its 95% interval (GET /admin/online),
// the same per placement, the running experiment live (every 5 s) with a
// Stop button, a form to start one, and the experiments run before.

import {get, post, seg, isAbort} from './api.js';
import {h, clear, errorBox, fill, section, badge, table, td, fmtInt, fmtDate, put, every} from './dom.js';
import {chart, lineChart, legend} from './charts.js';

const pct = (x) => (typeof x === 'number' ? (100 * x).toFixed(2) + '%' : '–');
const interval = (iv) => `${pct(iv.rate)} [${pct(iv.low)}, ${pct(iv.high)}]`;

export function render(view, {signal}) {
  const ctr = h('div', {id: 'online-ctr'});
  const places = h('div', {id: 'online-placements'});
  const running = h('div', {id: 'experiment-running'});
  const form = h('form', {id: 'experiment-form', class: 'form'});
  const formMsg = h('div');
  const past = h('div', {id: 'experiments-past'});
  view.append(h('h1', {}, 'Online'),
    section('CTR per model and day', h('p', {class: 'small muted'},
      'Shown items credited with a positive event over items shown, by the UTC day the list was shown; the whiskers are 95% intervals. Last 30 days.'), ctr),
    section('By placement', h('p', {class: 'small muted'},
      'The same 30 days per placement the lists were answered for (?placement= or the placement field).'), places),
    section('Running experiment', running),
    section('Start an experiment', form, formMsg),
    section('Experiments', past));

  const report = lastDays(signal);
  fill(ctr, () => report.then(ctrChart));
  fill(places, () => report.then(placementTable));
  every(5000, () => experiments(running, past, signal), signal);
  experimentForm(form, formMsg, signal, () => experiments(running, past, signal));
}

// lastDays is the report of the last 30 days.
function lastDays(signal) {
  const to = new Date().toISOString().slice(0, 10);
  const from = new Date(Date.now() - 29 * 86400e3).toISOString().slice(0, 10);
  return get('/admin/online', {signal, query: {from, to}});
}

function ctrChart(rep) {
  if (!rep.days.length) return h('p', {class: 'muted'}, `Nothing shown from ${rep.from} to ${rep.to}.`);
  const models = [...new Set(rep.days.map((d) => d.model))].sort();
  const day = (d) => Date.parse(d + 'T00:00:00Z') / 86400e3;
  const series = models.map((m) => ({name: m, points: rep.days.filter((d) => d.model === m)
    .map((d) => [day(d.day), d.ctr.rate, undefined, d.ctr.low, d.ctr.high])}));
  const fmtDay = (x) => new Date(x * 86400e3).toISOString().slice(5, 10);
  const rows = rep.totals.map((t) => h('tr', {'data-model': t.model}, td(t.model), td(fmtInt(t.lists)), td(fmtInt(t.impressions)),
    td(fmtInt(t.clicks)), td(interval(t.ctr)), td(fmtInt(t.conversions)), td(interval(t.conversion))));
  return h('div', {},
    legend(models),
    h('figure', {id: 'chart-ctr'}, chart(240, lineChart({series, xFormat: fmtDay, yFormat: pct}), 'CTR per model and day')),
    table(['model', 'lists', 'shown', 'clicks', 'CTR [95%]', 'conversions', 'conversion [95%]'], rows, {id: 'online-totals'}));
}

function placementTable(rep) {
  if (!rep.placements.length) return h('p', {class: 'muted'}, `Nothing shown from ${rep.from} to ${rep.to}.`);
  const rows = rep.placements.map((p) => h('tr', {'data-placement': p.placement},
    td(p.placement || h('span', {class: 'muted'}, 'none')), td(fmtInt(p.lists)), td(fmtInt(p.impressions)),
    td(fmtInt(p.clicks)), td(interval(p.ctr)), td(fmtInt(p.conversions)), td(interval(p.conversion))));
  return table(['placement', 'lists', 'shown', 'clicks', 'CTR [95%]', 'conversions', 'conversion [95%]'], rows, {id: 'online-placements-table'});
}

async function experiments(running, past, signal) {
  let exps;
  try {
    exps = (await get('/admin/experiments', {signal})).experiments;
  } catch (err) {
    if (isAbort(err)) throw err;
    put(running, errorBox(err));
    return;
  }
  const live = exps.find((e) => e.state === 'running');
  if (!live) put(running, h('p', {class: 'muted'}, 'No experiment is running: requests are answered by the active model.'));
  else put(running, experimentCard(live, signal, () => experiments(running, past, signal)));
  const done = exps.filter((e) => e !== live);
  put(past, done.length ? table(['id', 'name', 'started', 'stopped', 'arms', 'winner'], done.map((e) => h('tr', {},
    td(e.id), td(e.name), td(fmtDate(e.created_at)), td(fmtDate(e.stopped_at)),
    td(e.arms.map((a) => `${a.model} ${a.share}%: ${interval(a.ctr)}`).join(' · ')), td(e.winner || 'none')))) :
    h('p', {class: 'muted'}, 'None yet.'));
}

function experimentCard(e, signal, reload) {
  const stop = h('button', {type: 'button', class: 'secondary', id: 'experiment-stop'}, 'Stop');
  const msg = h('div');
  stop.addEventListener('click', async () => {
    stop.disabled = true;
    try {
      await post('/admin/experiments/' + seg(e.id) + '/stop', undefined, {signal});
      await reload();
    } catch (err) {
      if (!isAbort(err)) msg.append(errorBox(err));
      stop.disabled = false;
    }
  });
  const rows = e.arms.map((a) => h('tr', {'data-arm': a.model}, td(a.model), td(a.share + '%'), td(fmtInt(a.impressions)),
    td(fmtInt(a.clicks)), td(interval(a.ctr)), td(interval(a.conversion))));
  const series = [{name: 'CTR', points: e.arms.map((a, k) => [k, a.ctr.rate, undefined, a.ctr.low, a.ctr.high])}];
  const verdict = e.winner ? h('p', {id: 'experiment-winner'}, badge('winner', 'succeeded'), ' ', h('strong', {}, e.winner),
    ` (${e.test.reason})`) : h('p', {id: 'experiment-winner', class: 'muted'}, e.test.reason);
  return h('div', {'data-experiment': e.id},
    h('p', {}, h('strong', {}, e.name), ` ${e.id}, started ${fmtDate(e.created_at)}; α = ${e.alpha}, at least ${fmtInt(e.min_impressions)} shown per arm`),
    (e.warnings || []).map((w) => h('p', {class: 'small warn experiment-warning'}, w)),
    table(['arm', 'share', 'shown', 'clicks', 'CTR [95%]', 'conversion [95%]'], rows, {id: 'experiment-arms'}),
    chart(160, lineChart({series, xTicks: e.arms.map((_, k) => k), xFormat: (k) => e.arms[k] ? e.arms[k].model : '', yFormat: pct}), 'CTR per arm'),
    verdict,
    h('p', {class: 'small muted'}, `mSPRT: log evidence ${e.test.statistic.toFixed(2)} of ${e.test.threshold.toFixed(2)} needed. Refreshed every 5 s.`),
    h('div', {class: 'row'}, stop), msg);
}

function experimentForm(form, msg, signal, reload) {
  const arms = h('div', {id: 'experiment-arms-form'});
  const armRow = (models, model, share) => h('div', {class: 'row arm-row'},
    h('select', {name: 'model'}, models.map((m) => h('option', {value: m, selected: m === model}, m))),
    h('input', {type: 'number', name: 'share', min: 1, max: 99, value: share, class: 'share'}), '%');
  get('/models', {signal}).then(({recommenders, models}) => {
    const trained = [...new Set(['popular', ...models.map((m) => m.name).filter((n) => recommenders.includes(n))])];
    arms.append(armRow(trained, trained[0], 50), armRow(trained, trained[1] || trained[0], 50));
    form.dataset.ready = 'true';
  }, (err) => {
    if (!isAbort(err)) arms.append(errorBox(err));
  });
  form.append(
    h('label', {}, 'Name ', h('input', {name: 'name', id: 'experiment-name', required: '', maxlength: 128, value: 'a-b-test'})),
    arms,
    h('div', {class: 'row'}, h('button', {type: 'submit', id: 'experiment-start'}, 'Start')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clear(msg);
    const body = {name: form.querySelector('#experiment-name').value,
      arms: [...arms.querySelectorAll('.arm-row')].map((r) => ({model: r.querySelector('select').value, share: Number(r.querySelector('.share').value)}))};
    try {
      await post('/admin/experiments', body, {signal});
      await reload();
    } catch (err) {
      if (!isAbort(err)) msg.append(errorBox(err));
    }
  });
}
