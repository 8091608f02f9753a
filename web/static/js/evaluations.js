// Evaluations: the stored reports as the CLI prints them (rows = models,
// columns = measures as "mean (se)"), charts, a comparison of two reports,
// and starting a new evaluation.

import {get, post, seg, isAbort} from './api.js';
import {h, clear, errorBox, fill, section, table, td, fmtDate, fmtSeconds, fmtParams, reportHref, put} from './dom.js';
import {chart, barChart, lineChart, legend} from './charts.js';
import {jobPanel, jobHistory} from './jobs.js';
import {modelPicker, pickedModels} from './models.js';

// The CLI's columns (recsys/eval WriteTable), then a retrieval report's.
const ORDER = ['adg', 'rec@10', 'map', 'ndcg', 'ndcg@10', 'atop', 'auc', 'p@10', 'mrr', 'knn_error', 'p@1'];
const LOWER_IS_BETTER = new Set(['knn_error']);
const AT_K = /^(.+)@(\d+)$/;

export const rowName = (r) => (r.model || r.method || '?') + (r.variant ? '/' + r.variant : '');

// metricKeys orders a report's measures: the CLI's columns first; another
// cutoff of a measure (rec@5, rec@20) next to its family, by k; the rest
// by name.
export function metricKeys(rows) {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r.metrics || {})))];
  const out = ORDER.filter((k) => keys.includes(k));
  const atk = (k) => {
    const m = AT_K.exec(k);
    return m ? [m[1], Number(m[2])] : null;
  };
  for (const k of keys.filter((k) => !out.includes(k)).sort()) {
    const a = atk(k);
    const family = a ? out.map((o, i) => [atk(o), i]).filter(([b]) => b && b[0] === a[0]) : [];
    if (!family.length) {
      out.push(k);
      continue;
    }
    const after = family.filter(([b]) => b[1] < a[1]);
    const at = after.length ? after[after.length - 1][1] + 1 : family[0][1];
    out.splice(at, 0, k);
  }
  return out;
}

// atKFamilies groups the cutoff measures: {rec: [5, 10, 20], p: [10]}.
export function atKFamilies(keys) {
  const fam = {};
  for (const k of keys) {
    const m = AT_K.exec(k);
    if (m) (fam[m[1]] ||= []).push(Number(m[2]));
  }
  for (const f of Object.values(fam)) f.sort((a, b) => a - b);
  return fam;
}

const better = (k, a, b) => (LOWER_IS_BETTER.has(k) ? a < b : a > b);
// cell prints "mean (se)" as the CLI does, the se smaller.
const cell = (v) => (v ? [v.mean.toFixed(4), ' ', h('span', {class: 'se'}, `(${v.se.toFixed(4)})`)] : '–');

function bestPerMetric(rows, keys) {
  const best = {};
  for (const k of keys) {
    for (const r of rows) {
      const v = r.metrics[k];
      if (v && (best[k] === undefined || better(k, v.mean, best[k]))) best[k] = v.mean;
    }
  }
  return best;
}

export function render(view, ctx) {
  if (ctx.args.length) {
    const vs = ctx.query.get('vs');
    if (vs) return renderCompare(view, ctx, ctx.args[0], vs);
    return renderReport(view, ctx, ctx.args[0]);
  }
  return renderList(view, ctx);
}

function renderList(view, {signal, navigate}) {
  const list = h('div', {id: 'reports'});
  const form = h('form', {id: 'eval-form', class: 'form'});
  const msg = h('div');
  const live = h('div', {id: 'eval-live'});
  const jobs = h('div', {id: 'eval-jobs'});
  view.append(h('h1', {}, 'Evaluations'),
    section('Reports', list),
    section('Start an evaluation', h('p', {class: 'small muted'},
      'Runs the offline protocol on a snapshot of the stored data: per user 10% of the relevant items held out for validation and 20% for test, averaged over folds.'),
    form, msg, live),
    section('Evaluation jobs', jobs));

  fill(list, async () => {
    const {evaluations} = await get('/evaluations', {signal});
    if (!evaluations.length) return h('p', {class: 'muted'}, 'No report yet. Start an evaluation below.');
    const rows = evaluations.map((r) => h('tr', {},
      td(h('a', {href: reportHref(r.id), class: 'report-link'}, r.id), {class: 'mono'}),
      td(fmtDate(r.created_at), {class: 'nowrap'}),
      td(r.dataset), td(r.kind || 'recommendation'), td(r.protocol || '–'), td(r.folds ?? '–', {class: 'num'}),
      td((r.models || []).join(', '), {class: 'wrap'})));
    const opts = () => evaluations.map((r) => h('option', {value: r.id}, `${r.id} · ${(r.models || []).join(', ')}`));
    const a = h('select', {id: 'compare-a', 'aria-label': 'first report'}, opts());
    const b = h('select', {id: 'compare-b', 'aria-label': 'second report'}, opts());
    if (evaluations.length > 1) b.selectedIndex = 1;
    const cmp = h('form', {class: 'row compare-form', id: 'compare-form'}, 'Compare ', a, ' with ', b, ' ', h('button', {type: 'submit', id: 'compare-go'}, 'Compare'));
    cmp.addEventListener('submit', (ev) => {
      ev.preventDefault();
      navigate(reportHref(a.value) + '?vs=' + encodeURIComponent(b.value));
    });
    return [table(['Report', 'Created', 'Dataset', 'Kind', 'Protocol', 'Folds', 'Rows'], rows, {class: 'reports-table'}),
      evaluations.length > 1 ? cmp : null];
  });

  form.append(
    // Only recommenders can be evaluated: the content metric is not one.
    modelPicker('eval-model', signal, (out) => out.recommenders, (out) => out.defaults.filter((m) => out.recommenders.includes(m))),
    h('div', {class: 'row fields'},
      h('label', {}, 'Protocol ', h('select', {name: 'protocol', id: 'eval-protocol'},
        h('option', {value: 'standard'}, 'standard'), h('option', {value: 'novelty'}, 'novelty (outside the 100 most popular)'),
        h('option', {value: 'users'}, 'users (20% of users held out, scored from 80% of their items)'),
        h('option', {value: 'time'}, 'time (latest 20% of each user; one fold)'))),
      h('label', {}, 'Folds ', h('input', {type: 'number', name: 'folds', id: 'eval-folds', min: 1, max: 10, value: '3', class: 'narrow'})),
      h('label', {}, 'Seed ', h('input', {type: 'number', name: 'seed', id: 'eval-seed', min: 1, value: '1', class: 'narrow'}))),
    h('div', {class: 'row'}, h('button', {type: 'submit', id: 'eval-start'}, 'Start evaluation')));
  const hist = jobHistory(jobs, signal, {kind: 'evaluate', limit: 50});
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clear(msg);
    const btn = form.querySelector('#eval-start');
    btn.disabled = true;
    const body = {
      models: pickedModels(form, 'eval-model'),
      protocol: form.querySelector('#eval-protocol').value,
      folds: Number(form.querySelector('#eval-folds').value || 3),
      seed: Number(form.querySelector('#eval-seed').value || 1),
    };
    try {
      const acc = await post('/admin/evaluations', body, {signal});
      put(live, jobPanel(acc.job_id, signal, {
        onDone: (j) => {
          hist.reload();
          if (j.state === 'succeeded' && j.report_id) navigate(reportHref(j.report_id));
        },
      }));
      hist.reload();
    } catch (err) {
      if (!isAbort(err)) msg.append(errorBox(err));
    } finally {
      btn.disabled = false;
    }
  });
}

function meta(r) {
  return [
    ['Created', fmtDate(r.created_at)], ['Dataset', r.dataset], ['Kind', r.kind || 'recommendation'],
    ['Protocol', r.protocol || '–'], ['Folds', r.folds ?? r.splits ?? '–'], ['Seed', r.seed], ['Took', fmtSeconds(r.seconds)],
  ];
}

function metaList(r, other) {
  const mine = meta(r);
  const theirs = other ? meta(other) : null;
  return h('dl', {class: 'facts-row'}, mine.map(([k, v], i) => h('div', {},
    h('dt', {}, k),
    h('dd', {class: theirs && k !== 'Created' && k !== 'Took' && String(theirs[i][1]) !== String(v) ? 'diff' : ''}, String(v)))));
}

async function renderReport(view, {signal, navigate}, id) {
  const body = h('div', {id: 'report'});
  view.append(h('p', {}, h('a', {href: '#/evaluations'}, '← all reports')), h('h1', {}, 'Report ', h('span', {class: 'mono'}, id)), body);
  await fill(body, async () => {
    const [r, list] = await Promise.all([get('/evaluations/' + seg(id), {signal}), get('/evaluations', {signal})]);
    const keys = metricKeys(r.rows);
    const others = list.evaluations.filter((e) => e.id !== r.id);
    let cmp = null;
    if (others.length) {
      const sel = h('select', {id: 'compare-with', 'aria-label': 'report to compare with'},
        others.map((e) => h('option', {value: e.id}, `${e.id} · ${(e.models || []).join(', ')}`)));
      cmp = h('form', {class: 'row compare-form'}, 'Compare with ', sel, ' ', h('button', {type: 'submit'}, 'Compare'));
      cmp.addEventListener('submit', (ev) => {
        ev.preventDefault();
        navigate(reportHref(r.id) + '?vs=' + encodeURIComponent(sel.value));
      });
    }
    return [
      section('Report', metaList(r), cmp),
      section('Results', h('p', {class: 'small muted'}, 'Mean over folds (standard error); the best of each column in bold.'), reportTable(r, keys)),
      section('Measure per model', metricChart(r.rows.map(rowName), [{name: r.id, rows: r.rows}], keys, 'metric-chart')),
      section('Measures against the cutoff k', atKCharts(r, keys)),
      settingsTable(r),
    ];
  });
}

function reportTable(r, keys) {
  const best = bestPerMetric(r.rows, keys);
  const rows = r.rows.map((row) => h('tr', {},
    td(h('strong', {}, rowName(row)), {class: 'nowrap'}),
    ...keys.map((k) => {
      const v = row.metrics[k];
      return td(cell(v), {class: 'num nowrap' + (v && v.mean === best[k] && r.rows.length > 1 ? ' best' : '')});
    }),
    td(fmtParams(row.params), {class: 'nowrap'}),
    td(typeof row.train_seconds === 'number' ? row.train_seconds.toFixed(2) : '–', {class: 'num'})));
  return table([r.rows.some((x) => x.method) ? 'method' : 'model', ...keys.map((k) => h('th', {class: 'num'}, k)), 'params', 'train s'], rows,
    {id: 'report-table', class: 'report-table'});
}

function settingsTable(r) {
  const rows = r.rows.filter((row) => Object.keys(row.settings || {}).length || Object.keys(row.params || {}).length);
  if (!rows.length) return null;
  return h('details', {class: 'card'}, h('summary', {}, 'Hyper-parameters and settings'),
    table(['row', 'params', 'settings'], rows.map((row) => h('tr', {},
      td(rowName(row)), td(fmtParams(row.params)),
      td(Object.entries(row.settings || {}).map(([k, v]) => h('div', {}, h('span', {class: 'muted'}, k + ': '), v)))))));
}

// metricChart: a measure picker and bars per row (per report when there
// are several), with standard-error whiskers.
function metricChart(labels, reports, keys, id) {
  const sel = h('select', {id: id + '-select', 'aria-label': 'measure'}, keys.map((k) => h('option', {value: k}, k)));
  const box = h('div', {id});
  const draw = () => {
    const k = sel.value;
    const series = reports.map((rep) => {
      const byName = new Map(rep.rows.map((row) => [rowName(row), row]));
      const vs = labels.map((l) => byName.get(l)?.metrics[k]);
      return {name: rep.name, values: vs.map((v) => (v ? v.mean : NaN)), errors: vs.map((v) => (v ? v.se : 0))};
    });
    let highlight = -1;
    if (series.length === 1) {
      series[0].values.forEach((v, i) => {
        if (Number.isFinite(v) && (highlight < 0 || better(k, v, series[0].values[highlight]))) highlight = i;
      });
    }
    put(box, 
      reports.length > 1 ? legend(reports.map((rep) => rep.name)) : null,
      chart(260, barChart({labels, series, highlight}), `${k} per model`));
  };
  sel.addEventListener('change', draw);
  draw();
  return [h('div', {class: 'row'}, h('label', {class: 'inline'}, 'Measure ', sel),
    h('span', {class: 'small muted'}, 'whiskers: ± one standard error over folds (none with one fold); darker bar: best')), box];
}

function atKCharts(r, keys) {
  const fam = atKFamilies(keys);
  const rank = (f) => {
    const i = ['rec', 'p', 'ndcg'].indexOf(f);
    return i < 0 ? 99 : i;
  };
  const names = Object.keys(fam).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  if (!names.length) return h('p', {class: 'muted'}, 'This report has no measure at a cutoff (rec@k, p@k).');
  const curves = names.filter((f) => fam[f].length > 1);
  const single = names.filter((f) => fam[f].length === 1).map((f) => `${f}@${fam[f][0]}`);
  const series = (f) => r.rows.map((row) => ({
    name: rowName(row),
    points: fam[f].filter((k) => row.metrics[`${f}@${k}`]).map((k) => [k, row.metrics[`${f}@${k}`].mean, row.metrics[`${f}@${k}`].se]),
  }));
  const figures = curves.map((f) => h('figure', {'data-family': f},
    h('figcaption', {}, `${f.toUpperCase()}@k against k`),
    chart(220, lineChart({series: series(f), xTicks: fam[f], xFormat: (k) => `@${k}`}), `${f}@k against k`)));
  if (single.length) {
    // One cutoff only: the measures side by side, one bar per model.
    const bars = r.rows.map((row) => ({
      name: rowName(row),
      values: single.map((k) => (row.metrics[k] ? row.metrics[k].mean : NaN)),
      errors: single.map((k) => (row.metrics[k] ? row.metrics[k].se : 0)),
    }));
    figures.push(h('figure', {'data-family': 'single'},
      h('figcaption', {}, curves.length ? 'Measures with one cutoff' : 'At the one cutoff in this report'),
      chart(220, barChart({labels: single, series: bars}), 'measures at one cutoff')));
  }
  return [
    curves.length ? null : h('p', {class: 'small muted'}, 'This report has one cutoff per measure; a report with several (rec@5, rec@10, rec@20, …) draws REC@k and P@k curves against k.'),
    legend(r.rows.map(rowName)),
    h('div', {class: 'grid grid-2', id: 'atk-charts'}, figures),
  ];
}

async function renderCompare(view, {signal}, a, b) {
  const body = h('div', {id: 'compare'});
  view.append(h('p', {}, h('a', {href: '#/evaluations'}, '← all reports')),
    h('h1', {}, 'Compare ', h('a', {href: reportHref(a), class: 'mono'}, a), ' with ', h('a', {href: reportHref(b), class: 'mono'}, b)), body);
  await fill(body, async () => {
    const [ra, rb] = await Promise.all([get('/evaluations/' + seg(a), {signal}), get('/evaluations/' + seg(b), {signal})]);
    const keys = metricKeys([...ra.rows, ...rb.rows]);
    const names = [...new Set([...ra.rows.map(rowName), ...rb.rows.map(rowName)])];
    const ia = new Map(ra.rows.map((r) => [rowName(r), r]));
    const ib = new Map(rb.rows.map((r) => [rowName(r), r]));
    const rows = [];
    for (const n of names) {
      const x = ia.get(n);
      const y = ib.get(n);
      rows.push(h('tr', {class: 'cmp-a'}, td(h('strong', {}, n), {rowspan: 3, class: 'nowrap'}), td('A', {title: ra.id}),
        ...keys.map((k) => td(x ? cell(x.metrics[k]) : 'absent', {class: 'num nowrap' + (x ? '' : ' muted')}))));
      rows.push(h('tr', {class: 'cmp-b'}, td('B', {title: rb.id}),
        ...keys.map((k) => {
          const u = x && x.metrics[k];
          const v = y && y.metrics[k];
          const cls = u && v && u.mean !== v.mean ? (better(k, v.mean, u.mean) ? ' up' : ' down') : '';
          return td(y ? cell(v) : 'absent', {class: 'num nowrap' + cls + (y ? '' : ' muted')});
        })));
      rows.push(h('tr', {class: 'cmp-d'}, td('Δ'),
        ...keys.map((k) => {
          const u = x && x.metrics[k];
          const v = y && y.metrics[k];
          if (!u || !v) return td('–', {class: 'num muted'});
          const d = v.mean - u.mean;
          const se = Math.hypot(u.se, v.se);
          const sig = se > 0 && Math.abs(d) > 2 * se;
          const cls = d === 0 ? ' same' : (better(k, v.mean, u.mean) ? ' up' : ' down');
          return td(h('span', {title: se > 0 ? `difference ${d.toFixed(4)}, standard error ${se.toFixed(4)}` : 'no standard error (one fold)'},
            (d > 0 ? '+' : '') + d.toFixed(4), sig ? ' *' : ''), {class: 'num nowrap delta' + cls + (sig ? ' sig' : '')});
        })));
    }
    return [
      h('div', {class: 'grid grid-2'}, section(`A: ${ra.id}`, metaList(ra, rb)), section(`B: ${rb.id}`, metaList(rb, ra))),
      section('Side by side', h('p', {class: 'small muted'},
        `For each model: A (${ra.id}), then B (${rb.id}), then Δ = B − A. Green: B is better; red: B is worse; * the difference is more than twice its standard error. Settings that differ are marked in the headers above.`),
      table(['model', 'report', ...keys.map((k) => h('th', {class: 'num'}, k))], rows, {id: 'compare-table', class: 'compare-table'})),
      section('Measure per model', metricChart(names, [{name: `A ${ra.id}`, rows: ra.rows}, {name: `B ${rb.id}`, rows: rb.rows}], keys, 'compare-chart')),
    ];
  });
}
