// Background jobs: a live panel that follows one job (GET /admin/jobs/{id}
// twice a second) and the job history table.

import {get, del, seg, isAbort} from './api.js';
import {h, clear, errorBox, badge, table, td, fmtDate, fmtSeconds, every, reportHref, put} from './dom.js';
import {progressBar, stageBars} from './charts.js';

export const isLive = (j) => j.state === 'queued' || j.state === 'running';

function elapsed(j) {
  const start = j.started_at ? new Date(j.started_at) : null;
  if (!start) return null;
  const end = j.finished_at ? new Date(j.finished_at) : new Date();
  return (end - start) / 1000;
}

function outcome(j) {
  const out = [];
  if (j.error) out.push(h('p', {class: j.state === 'cancelled' ? 'warn' : 'error-inline'}, j.error));
  if (j.versions && j.versions.length) {
    out.push(h('p', {class: 'small'}, 'Versions stored: ', j.versions.join(', ')));
  }
  for (const sk of j.skipped || []) {
    out.push(h('p', {class: 'small warn skipped', 'data-model': sk.model}, 'Skipped ', h('strong', {}, sk.model), ': ', sk.reason));
  }
  const over = j.over_budget || [];
  for (const o of over) {
    out.push(h('p', {class: 'small warn over-budget', 'data-model': o.model}, 'Over the serving budget ', h('code', {}, o.budget), ': ',
      h('strong', {}, o.model), ` (mean ${o.mean_ms.toFixed(3)} ms, p99 ${o.p99_ms.toFixed(3)} ms of CPU a request, ${o.factor.toFixed(1)}× the budget)`));
  }
  if (j.activated) {
    const why = over.some((o) => o.model === j.activated) ? ': no candidate is within the serving budget, and it is the cheapest.' :
      (j.auto || over.length ? ': the best validation ADG within the serving budget.' : '.');
    out.push(h('p', {class: 'small'}, 'Activated ', h('strong', {}, j.activated), why));
  }
  if (j.report_id) {
    out.push(h('p', {class: 'small'}, 'Report: ', h('a', {href: reportHref(j.report_id), class: 'report-link'}, j.report_id)));
  }
  return out;
}

// cancelButton asks the server to cancel a live job; errors show in msg.
function cancelButton(j, msg, after) {
  const b = h('button', {type: 'button', class: 'danger small-btn cancel-job', 'data-job': j.id}, 'Cancel');
  b.addEventListener('click', async () => {
    b.disabled = true;
    clear(msg);
    try {
      await del('/admin/jobs/' + seg(j.id));
      if (after) after();
    } catch (err) {
      if (!isAbort(err)) msg.append(errorBox(err));
      b.disabled = false;
    }
  });
  return b;
}

// jobPanel follows one job until it ends, then calls onDone(job).
export function jobPanel(id, signal, {onDone} = {}) {
  const panel = h('div', {class: 'job-panel', 'data-job': id, 'data-state': 'queued', 'aria-live': 'polite'});
  const msg = h('div');
  let last = null;
  const draw = (j) => {
    panel.dataset.state = j.state;
    const secs = elapsed(j);
    put(panel, 
      h('div', {class: 'job-head'},
        h('strong', {}, `Job ${j.id}`), ' ',
        h('span', {class: 'muted'}, `${j.kind} · ${(j.models || []).join(', ')}`), ' ',
        badge(j.state),
        isLive(j) ? cancelButton(j, msg) : null),
      progressBar(j.progress, j.state),
      h('div', {class: 'job-stage small'},
        isLive(j) ? (j.stage ? `Stage: ${j.stage}` : 'Waiting to start') : `Finished ${fmtDate(j.finished_at)}`,
        secs !== null ? ` · ${fmtSeconds(secs)}` : ''),
      stageBars(j.stages || [], isLive(j) ? j.stage : ''),
      outcome(j),
      msg);
  };
  every(500, async () => {
    let j;
    try {
      j = await get('/admin/jobs/' + seg(id), {signal});
    } catch (err) {
      if (isAbort(err)) return;
      if (!last) put(panel, errorBox(err));
      else put(msg, errorBox(err));
      // A job that is gone or a key that is refused will not change.
      return !(err.status === 404 || err.status === 401 || err.status === 403);
    }
    last = j;
    draw(j);
    if (isLive(j)) return true;
    if (onDone) onDone(j);
    return false;
  }, signal);
  return panel;
}

// jobsTable lists job records; expanded holds the ids whose stage
// timings are open. onChange is called after a cancel.
export function jobsTable(jobs, expanded, onChange) {
  if (!jobs.length) return h('p', {class: 'muted'}, 'No jobs yet.');
  const msg = h('div');
  const rows = [];
  for (const j of jobs) {
    const open = expanded.has(j.id);
    const toggle = h('button', {type: 'button', class: 'link-btn', 'aria-expanded': open ? 'true' : 'false'}, open ? '▾ ' + j.id : '▸ ' + j.id);
    toggle.addEventListener('click', () => {
      if (expanded.has(j.id)) expanded.delete(j.id);
      else expanded.add(j.id);
      onChange(false);
    });
    const secs = elapsed(j);
    rows.push(h('tr', {class: 'job-row', 'data-job': j.id},
      td(toggle),
      td(j.kind),
      td(badge(j.state)),
      td(j.trigger),
      td([(j.models || []).join(', '), (j.skipped || []).length ? h('span', {class: 'small warn', title: j.skipped.map((sk) => `${sk.model}: ${sk.reason}`).join('\n')}, ` (skipped: ${j.skipped.map((sk) => sk.model).join(', ')})`) : null], {class: 'wrap'}),
      td(fmtDate(j.created_at), {class: 'nowrap'}),
      td(secs !== null ? fmtSeconds(secs) : '–', {class: 'num'}),
      td(isLive(j) ? [`${Math.round(100 * j.progress)}% `, cancelButton(j, msg, () => onChange(true))] :
        (j.report_id ? h('a', {href: reportHref(j.report_id)}, j.report_id) : ''))));
    if (open) {
      const info = [];
      if (j.kind === 'evaluate') info.push(h('p', {class: 'small muted'}, `protocol ${j.protocol || 'standard'}, ${j.folds || 3} folds, seed ${j.seed || 1}`));
      rows.push(h('tr', {class: 'job-detail'}, h('td', {colspan: 8},
        info, stageBars(j.stages || [], isLive(j) ? j.stage : ''), outcome(j))));
    }
  }
  return [msg, table(['Job', 'Kind', 'State', 'Trigger', 'Models', 'Created', 'Took', ''], rows, {class: 'jobs-table'})];
}

// jobHistory fetches the job history into el and keeps it fresh: every 1.5 s
// while a job is live, every 10 s otherwise.
export function jobHistory(el, signal, {limit = 30, kind} = {}) {
  const expanded = new Set();
  let jobs = null;
  let wait = 0;
  const draw = () => put(el, jobsTable(jobs, expanded, (refetch) => (refetch ? load() : draw())));
  const load = async () => {
    try {
      const out = await get('/admin/jobs', {signal, query: {limit}});
      jobs = out.jobs.filter((j) => !kind || j.kind === kind);
      draw();
    } catch (err) {
      if (!isAbort(err)) put(el, errorBox(err));
      throw err;
    }
  };
  every(1500, async () => {
    if (wait > 0) {
      wait--;
      return true;
    }
    try {
      await load();
    } catch {
      return false; // the error stays on screen until the page is opened again
    }
    wait = jobs.some(isLive) ? 0 : 6;
    return true;
  }, signal);
  return {reload: () => load().catch(() => {})};
}
