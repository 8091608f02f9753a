// Overview: what the store holds, how it grew, which model serves, the
// last training and the service's health.

import {get, isAbort} from './api.js';
import {h, errorBox, fill, section, badge, fmtInt, fmtDate, fmtSeconds, fmtNum, fmtParams, every, put} from './dom.js';
import {chart, timeChart, timeSpans} from './charts.js';

export function render(view, {signal}) {
  const health = h('div', {id: 'health'});
  const stats = h('div', {id: 'stats'});
  const serving = h('div', {id: 'serving'});
  const training = h('div', {id: 'last-training'});
  const growth = h('div', {id: 'growth'});
  view.append(
    h('h1', {}, 'Overview'),
    stats,
    h('div', {class: 'grid'},
      section('Service health', health),
      section('Serving model', serving),
      section('Last training', training)),
    section('Growth', growth));

  fill(stats, async () => {
    const st = await get('/stats', {signal, query: {days: 3650}});
    growthCharts(growth, st);
    const card = (id, label, value, note) => h('div', {class: 'stat'},
      h('div', {class: 'stat-value', id}, fmtInt(value)), h('div', {class: 'stat-label'}, label), note ? h('div', {class: 'muted small'}, note) : null);
    const share = st.interactions ? `${(100 * st.positives / st.interactions).toFixed(1)}% of pairs` : '';
    return h('div', {class: 'stats'},
      card('stat-users', 'users', st.users),
      card('stat-items', 'items', st.items),
      card('stat-interactions', 'interactions', st.interactions, 'distinct (user, item) pairs'),
      card('stat-positives', 'relevant pairs', st.positives, share),
      card('stat-events', 'events', st.events, 'repeats included'));
  }).then(() => {
    if (!stats.querySelector('.stats')) put(growth, h('p', {class: 'muted'}, 'Needs the store counters above.'));
  });

  fill(serving, async () => {
    const {models} = await get('/models', {signal});
    const active = models.find((m) => m.active);
    if (!active) {
      return h('p', {}, models.length ? 'No model is active: recommendations come from popularity. ' : 'No trained model yet: recommendations come from popularity. ',
        h('a', {href: '#/models'}, 'Train or activate one on the Models page.'));
    }
    const val = active.validation || {};
    return h('dl', {class: 'facts', id: 'active-model'},
      h('dt', {}, 'Model'), h('dd', {}, h('strong', {}, active.name), ' ', h('span', {class: 'muted'}, active.version)),
      h('dt', {}, 'Trained'), h('dd', {}, fmtDate(active.trained_at)),
      h('dt', {}, 'Parameters'), h('dd', {}, fmtParams(active.params)),
      h('dt', {}, 'Validation ADG'), h('dd', {}, fmtNum(val.adg)),
      h('dt', {}, 'Trained on'), h('dd', {}, `${fmtInt(active.users)} users, ${fmtInt(active.items)} items, ${fmtInt(active.positives)} relevant pairs`),
      h('dt', {}, 'Versions stored'), h('dd', {}, `${models.length} (of ${new Set(models.map((m) => m.name)).size} models)`));
  });

  every(5000, async () => {
    await Promise.all([checkHealth(health, signal), lastTraining(training, signal)]);
  }, signal);
}

async function probe(path, signal) {
  try {
    const out = await get(path, {signal});
    return {ok: true, text: out && out.status ? out.status : 'ok'};
  } catch (err) {
    if (isAbort(err)) throw err;
    return {ok: false, text: err.message, code: err.code, status: err.status};
  }
}

async function checkHealth(el, signal) {
  const [live, ready] = await Promise.all([probe('/healthz', signal), probe('/readyz', signal)]);
  const line = (name, what, r, id) => h('div', {class: 'health-row', id},
    h('span', {class: 'dot ' + (r.ok ? 'dot-ok' : 'dot-bad')}),
    h('span', {class: 'health-name'}, name),
    h('span', {class: 'health-state'}, r.ok ? what : (r.status ? `${r.status} ${r.code}` : r.code)),
    r.ok ? null : h('div', {class: 'small muted health-msg'}, r.text));
  put(el, 
    line('Live', 'alive', live, 'health-live'),
    line('Ready', 'ready', ready, 'health-ready'),
    h('p', {class: 'small muted'}, `Checked ${fmtDate(new Date().toISOString())}; `, h('a', {href: '/metrics'}, 'Prometheus metrics')));
}

async function lastTraining(el, signal) {
  let jobs;
  try {
    jobs = (await get('/admin/jobs', {signal, query: {limit: 50}})).jobs;
  } catch (err) {
    if (isAbort(err)) throw err;
    put(el, errorBox(err));
    return;
  }
  const train = jobs.filter((j) => j.kind === 'train');
  const live = train.find((j) => j.state === 'queued' || j.state === 'running');
  const done = train.find((j) => j.state === 'succeeded');
  const last = train[0];
  if (!last) {
    put(el, h('p', {class: 'muted'}, 'No training job yet. ', h('a', {href: '#/models'}, 'Start one.')));
    return;
  }
  const took = (j) => (j.started_at && j.finished_at ? fmtSeconds((new Date(j.finished_at) - new Date(j.started_at)) / 1000) : '–');
  const out = [];
  if (live) {
    out.push(h('p', {}, badge(live.state), ` ${live.id}: ${Math.round(100 * live.progress)}%`, live.stage ? ` · ${live.stage}` : '', ' · ',
      h('a', {href: '#/models'}, 'watch')));
  }
  const shown = done || last;
  out.push(h('dl', {class: 'facts'},
    h('dt', {}, done ? 'Last success' : 'Last job'), h('dd', {}, `${shown.id} `, badge(shown.state)),
    h('dt', {}, 'Finished'), h('dd', {}, fmtDate(shown.finished_at)),
    h('dt', {}, 'Took'), h('dd', {}, took(shown)),
    h('dt', {}, 'Trigger'), h('dd', {}, shown.trigger),
    h('dt', {}, 'Models'), h('dd', {}, (shown.models || []).join(', '))));
  if (last !== shown && !live) out.push(h('p', {class: 'small'}, `Latest: ${last.id} `, badge(last.state), last.error ? ` ${last.error}` : ''));
  put(el, ...out);
}

function growthCharts(el, st) {
  const days = (st.events_by_day || []).map((d) => [new Date(d.day + 'T00:00:00Z'), d.events]);
  if (!days.length) {
    put(el, h('p', {class: 'muted'}, 'No events yet.'));
    return;
  }
  const listed = days.reduce((a, d) => a + d[1], 0);
  let total = st.events - listed; // events older than the days listed
  const cumulative = days.map(([d, v]) => [d, (total += v)]);
  const iso = (t) => new Date(t).toISOString().slice(0, 10);
  const first = iso(days[0][0]);
  const lastDay = iso(days[days.length - 1][0]);
  // The charts show only the spans with events; say what they leave out.
  const spans = timeSpans(days.map(([d]) => d.getTime()));
  const gaps = spans.slice(1).map(([t0], k) => `${iso(spans[k][1] + 86400e3)} to ${iso(t0 - 86400e3)}`);
  put(el,
    h('p', {class: 'small muted', id: 'growth-span'}, `${fmtInt(listed)} events on ${fmtInt(days.length)} days with events, ${first} to ${lastDay} (UTC days of the event timestamps).`,
      gaps.length ? ` No events from ${gaps.join(', nor from ')}: the time axis skips ${gaps.length > 1 ? 'those stretches' : 'that stretch'}.` : ''),
    h('div', {class: 'grid grid-2'},
      h('figure', {id: 'chart-events-per-day'}, h('figcaption', {}, 'Events per day'), chart(200, timeChart(days, 'bars'), 'events per day')),
      h('figure', {id: 'chart-events-total'}, h('figcaption', {}, 'Events in all'), chart(200, timeChart(cumulative, 'line'), 'total events over time'))));
}
