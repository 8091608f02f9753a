// Small SVG charts drawn at the width of their box (redrawn when it
// changes), so text stays legible on a phone. Hovering a mark shows its
// value (an SVG <title>).

import {h, s} from './dom.js';

export const PALETTE = ['#2f6fdf', '#e0702f', '#2a9d6f', '#b8476e', '#7a5fc4', '#c9a227', '#3aa6b9', '#7d7d7d'];

export const color = (k) => PALETTE[k % PALETTE.length];

// chart returns a box of a fixed height whose SVG draw(width, height)
// makes; the height is fixed so that drawing never resizes the box.
export function chart(height, draw, label) {
  const box = h('div', {class: 'chart', role: 'img', 'aria-label': label || 'chart'});
  box.style.height = height + 'px';
  let lastW = 0;
  const ro = new ResizeObserver((entries) => {
    const w = Math.floor(entries[0].contentRect.width);
    if (w > 0 && w !== lastW) {
      lastW = w;
      box.replaceChildren(draw(w, height));
    }
  });
  ro.observe(box);
  return box;
}

// legend is an HTML legend (it wraps on narrow screens).
export function legend(names) {
  return h('div', {class: 'legend'}, names.map((n, k) =>
    h('span', {class: 'legend-item'}, h('span', {class: 'swatch swatch-' + (k % PALETTE.length)}), n)));
}

// niceTicks returns about count round values spanning [lo, hi].
export function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((st) => st >= raw) || 10 * mag;
  const out = [];
  const end = Math.ceil(hi / step - 1e-9) * step;
  for (let v = Math.floor(lo / step + 1e-9) * step; v <= end + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

function fmtTick(v) {
  const a = Math.abs(v);
  if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + 'M';
  if (a >= 1e4) return (v / 1e3).toFixed(0) + 'k';
  if (a >= 100 || v === 0) return String(Math.round(v));
  return String(Number(v.toPrecision(3)));
}

function yAxis(g, ticks, y, x0, x1) {
  for (const t of ticks) {
    const yy = y(t);
    g.append(s('line', {x1: x0, x2: x1, y1: yy, y2: yy, class: 'gridline'}),
      s('text', {x: x0 - 6, y: yy + 4, 'text-anchor': 'end', class: 'tick'}, fmtTick(t)));
  }
}

// barChart: bars per label, one per series, each with an optional ±
// error whisker. opts: {labels, series: [{name, values, errors?}], format?,
// highlight?: the label index to mark (single series), missing?: the text
// shown instead of a bar for a value that is not a number (single series)}.
export function barChart(opts) {
  const {labels, series} = opts;
  const format = opts.format || ((v) => v.toFixed(4));
  return (W, H) => {
    const n = labels.length;
    const m = series.length;
    const longest = Math.max(1, ...labels.map((l) => l.length));
    const left = 48;
    const right = 8;
    const band = (W - left - right) / Math.max(1, n);
    const rotate = longest * 7 > band - 4;
    const bottom = rotate ? Math.min(110, 20 + longest * 5.2) : 26;
    const top = 18;
    const all = series.flatMap((se) => se.values.map((v, k) => [v, (se.errors || [])[k] || 0])).filter(([v]) => Number.isFinite(v));
    const hi = Math.max(0, ...all.map(([v, e]) => v + e));
    const lo = Math.min(0, ...all.map(([v, e]) => v - e));
    const ticks = niceTicks(lo, hi > lo ? hi * 1.08 : lo + 1, Math.max(2, Math.floor((H - top - bottom) / 40)));
    const yMax = ticks[ticks.length - 1];
    const yMin = Math.min(lo, ticks[0]);
    const y = (v) => top + (H - top - bottom) * (1 - (v - yMin) / (yMax - yMin || 1));
    const svg = s('svg', {width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'svg-chart'});
    const g = s('g');
    yAxis(g, ticks, y, left, W - right);
    const group = Math.min(band * 0.7, 64 * m);
    const bw = Math.max(2, group / m - (m > 1 ? 2 : 0));
    const y0 = y(Math.max(0, yMin));
    for (let k = 0; k < n; k++) {
      const center = left + band * (k + 0.5);
      series.forEach((se, j) => {
        const v = se.values[k];
        const cx = center - group / 2 + (j + 0.5) * (group / m);
        if (typeof v !== 'number' || !Number.isFinite(v)) {
          if (m === 1 && opts.missing) {
            g.append(s('text', {x: cx, y: y0 - 4, 'text-anchor': 'middle', class: 'label missing'}, opts.missing));
          }
          return;
        }
        const err = (se.errors || [])[k] || 0;
        const yv = y(v);
        const tip = `${m > 1 ? se.name + ' · ' : ''}${labels[k]}: ${format(v)}` + (se.errors ? ` ± ${format(err)}` : '');
        const best = m === 1 && opts.highlight === k;
        g.append(s('rect', {x: cx - bw / 2, y: Math.min(y0, yv), width: bw, height: Math.max(1, Math.abs(y0 - yv)),
          class: 'bar' + (best ? ' bar-best' : ''), fill: color(j)}, s('title', {}, tip)));
        if (err > 0) {
          const ya = y(v + err);
          const yb = y(v - err);
          const wh = Math.min(6, bw / 2);
          g.append(s('path', {d: `M${cx},${ya}V${yb}M${cx - wh},${ya}H${cx + wh}M${cx - wh},${yb}H${cx + wh}`, class: 'whisker'},
            s('title', {}, tip)));
        }
        if (m === 1 && band >= 44) {
          g.append(s('text', {x: cx, y: y(v + err) - 4, 'text-anchor': 'middle', class: 'value'}, format(v)));
        }
      });
      const ly = H - bottom + 14;
      g.append(rotate
        ? s('text', {x: center, y: ly, 'text-anchor': 'end', transform: `rotate(-40 ${center} ${ly})`, class: 'label'}, labels[k])
        : s('text', {x: center, y: ly, 'text-anchor': 'middle', class: 'label'}, labels[k]));
    }
    g.append(s('line', {x1: left, x2: W - right, y1: y0, y2: y0, class: 'axis'}));
    svg.append(g);
    return svg;
  };
}

// lineChart: series of [x, y, se?] points over a numeric x axis, with
// whiskers where se > 0 (or [x, y, undefined, lo, hi]: from lo to hi). opts: {series: [{name, points}], xTicks?, xFormat?, yFormat?}
export function lineChart(opts) {
  const series = opts.series;
  const yFormat = opts.yFormat || ((v) => v.toFixed(4));
  const xFormat = opts.xFormat || String;
  return (W, H) => {
    const left = 48;
    const right = 16;
    const top = 14;
    const bottom = 28;
    const xs = series.flatMap((se) => se.points.map((p) => p[0]));
    // A point [x, y, se] has whiskers y ± se; [x, y, , lo, hi] from lo to hi.
    const ends = (p) => (p.length > 4 ? [p[3], p[4]] : [p[1] - (p[2] || 0), p[1] + (p[2] || 0)]);
    const ys = series.flatMap((se) => se.points.flatMap(ends));
    let xMin = Math.min(...xs);
    let xMax = Math.max(...xs);
    if (xMin === xMax) {
      xMin -= 1;
      xMax += 1;
    }
    const pad = (xMax - xMin) * 0.04; // keep the end points and labels inside
    xMin -= pad;
    xMax += pad;
    const yLo = Math.min(0, ...ys);
    const yHi = Math.max(...ys, yLo + 1e-9);
    const ticks = niceTicks(yLo, yHi * 1.08, Math.max(2, Math.floor((H - top - bottom) / 40)));
    const yMin = ticks[0];
    const yMax = ticks[ticks.length - 1];
    const x = (v) => left + (W - left - right) * (v - xMin) / (xMax - xMin);
    const y = (v) => top + (H - top - bottom) * (1 - (v - yMin) / (yMax - yMin || 1));
    const svg = s('svg', {width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'svg-chart'});
    const g = s('g');
    yAxis(g, ticks, y, left, W - right);
    const xt = opts.xTicks || [...new Set(xs)].sort((a, b) => a - b);
    for (const t of xt) {
      g.append(s('text', {x: x(t), y: H - bottom + 16, 'text-anchor': 'middle', class: 'tick'}, xFormat(t)));
    }
    g.append(s('line', {x1: left, x2: W - right, y1: y(yMin), y2: y(yMin), class: 'axis'}));
    series.forEach((se, k) => {
      const pts = [...se.points].sort((a, b) => a[0] - b[0]);
      if (pts.length > 1) {
        g.append(s('path', {d: pts.map((p, i) => `${i ? 'L' : 'M'}${x(p[0])},${y(p[1])}`).join(''), class: 'line', stroke: color(k)}));
      }
      for (const p of pts) {
        const [lo, hi] = ends(p);
        const tip = `${se.name} @${xFormat(p[0])}: ${yFormat(p[1])}` + (p.length > 4 ? ` [${yFormat(lo)}, ${yFormat(hi)}]` : p[2] !== undefined ? ` ± ${yFormat(p[2])}` : '');
        if (hi > lo) {
          const ya = y(hi);
          const yb = y(lo);
          const cx = x(p[0]);
          g.append(s('path', {d: `M${cx},${ya}V${yb}M${cx - 4},${ya}H${cx + 4}M${cx - 4},${yb}H${cx + 4}`, class: 'whisker', stroke: color(k)}));
        }
        g.append(s('circle', {cx: x(p[0]), cy: y(p[1]), r: 4, fill: color(k), class: 'dot'}, s('title', {}, tip)));
      }
    });
    svg.append(g);
    return svg;
  };
}

const DAY = 86400e3;

// timeSpans splits the times (oldest first) into the spans that hold the
// data: a stretch without events that is longer than 30 days and than a
// fifth of the whole range separates two spans. MovieLens' 1997–98 events
// beside a few of today would otherwise leave them a sliver of the axis.
export function timeSpans(times) {
  if (!times.length) return [];
  const whole = times[times.length - 1] - times[0];
  const spans = [[times[0], times[0]]];
  for (let k = 1; k < times.length; k++) {
    const gap = times[k] - times[k - 1];
    if (gap > 30 * DAY && gap > whole / 5) spans.push([times[k], times[k]]);
    else spans[spans.length - 1][1] = times[k];
  }
  return spans;
}

// timeChart: values per day (bars) or a running total (line) over a time
// axis that shows only the spans with data (timeSpans), side by side with
// a break mark between them. points: [[Date, value]], oldest first.
export function timeChart(points, kind) {
  return (W, H) => {
    const left = 48;
    const right = 12;
    const top = 12;
    const bottom = 26;
    const svg = s('svg', {width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'svg-chart'});
    if (!points.length) {
      svg.append(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'label'}, 'no events yet'));
      return svg;
    }
    const pad = DAY / 2; // a day's bar, or a lone day's point, sits inside its span
    const brk = 14; // the width of a break between spans
    const spans = timeSpans(points.map((p) => p[0].getTime())).map(([a, b]) => ({t0: a - pad, t1: Math.max(b + pad, a - pad + DAY)}));
    const plot = W - left - right - brk * (spans.length - 1);
    // Each span's width follows its length, but a short one keeps room
    // for a date label.
    const minShare = Math.min(1 / spans.length, 80 / Math.max(plot, 1));
    const total = spans.reduce((a, sp) => a + (sp.t1 - sp.t0), 0);
    const shares = spans.map((sp) => Math.max(minShare, (sp.t1 - sp.t0) / total));
    const norm = shares.reduce((a, v) => a + v, 0);
    let at = left;
    spans.forEach((sp, k) => {
      sp.x0 = at;
      sp.w = plot * shares[k] / norm;
      at += sp.w + brk;
    });
    const spanOf = (t) => spans.find((sp) => t <= sp.t1) || spans[spans.length - 1];
    const x = (t) => {
      const sp = spanOf(t);
      return sp.x0 + sp.w * (t - sp.t0) / (sp.t1 - sp.t0);
    };
    const yHi = Math.max(1, ...points.map((p) => p[1]));
    const ticks = niceTicks(0, yHi * 1.05, Math.max(2, Math.floor((H - top - bottom) / 36)));
    const yMax = ticks[ticks.length - 1];
    const y = (v) => top + (H - top - bottom) * (1 - v / yMax);
    const g = s('g');
    yAxis(g, ticks, y, left, W - right);
    for (const sp of spans) {
      const n = Math.max(1, Math.min(6, Math.floor(sp.w / 90)));
      for (let k = 0; k < n; k++) {
        const t = sp.t0 + (sp.t1 - sp.t0) * (k + 0.5) / n;
        g.append(s('text', {x: x(t), y: H - 8, 'text-anchor': 'middle', class: 'tick'}, new Date(t).toISOString().slice(0, 10)));
      }
    }
    for (let k = 1; k < spans.length; k++) {
      const bx = spans[k].x0 - brk / 2;
      const from = new Date(spans[k - 1].t1 + pad).toISOString().slice(0, 10);
      const to = new Date(spans[k].t0 - pad).toISOString().slice(0, 10);
      g.append(s('path', {d: `M${bx - 4},${y(0) + 5}l4,-10M${bx},${y(0) + 5}l4,-10`, class: 'axis-break'},
        s('title', {}, `no events from ${from} to ${to}`)));
    }
    if (kind === 'bars') {
      for (const [d, v] of points) {
        const sp = spanOf(d.getTime());
        const bw = Math.min(24, Math.max(1, sp.w * DAY / (sp.t1 - sp.t0) * 0.8));
        g.append(s('rect', {x: x(d.getTime()) - bw / 2, y: y(v), width: bw, height: Math.max(0.5, y(0) - y(v)), class: 'bar', fill: PALETTE[0]},
          s('title', {}, `${d.toISOString().slice(0, 10)}: ${v.toLocaleString('en-US')} events`)));
      }
    } else {
      const d = points.map((p, i) => `${i ? 'L' : 'M'}${x(p[0].getTime())},${y(p[1])}`).join('');
      const last = points[points.length - 1];
      g.append(s('path', {d: `${d}L${x(last[0].getTime())},${y(0)}L${x(points[0][0].getTime())},${y(0)}Z`, class: 'area', fill: PALETTE[2]}));
      g.append(s('path', {d, class: 'line', stroke: PALETTE[2]}));
      g.append(s('circle', {cx: x(last[0].getTime()), cy: y(last[1]), r: 3.5, fill: PALETTE[2]},
        s('title', {}, `${last[0].toISOString().slice(0, 10)}: ${last[1].toLocaleString('en-US')} events in all`)));
    }
    for (const sp of spans) {
      g.append(s('line', {x1: sp.x0, x2: sp.x0 + sp.w, y1: y(0), y2: y(0), class: 'axis'}));
    }
    svg.append(g);
    return svg;
  };
}

// stageBars shows a job's stage timings as horizontal bars (HTML, so long
// stage names wrap).
export function stageBars(stages, current) {
  const total = stages.reduce((a, st) => a + st.seconds, 0) || 1;
  const max = Math.max(...stages.map((st) => st.seconds), 1e-9);
  const rows = stages.map((st) => {
    const fill = h('span', {class: 'stage-fill'});
    fill.style.width = Math.max(0.5, 100 * st.seconds / max) + '%';
    return h('div', {class: 'stage-row'},
      h('span', {class: 'stage-name'}, st.name),
      h('span', {class: 'stage-bar', title: `${(100 * st.seconds / total).toFixed(1)}% of the job`}, fill),
      h('span', {class: 'stage-sec'}, st.seconds < 1 ? `${Math.round(st.seconds * 1000)} ms` : `${st.seconds.toFixed(2)} s`));
  });
  if (current) {
    rows.push(h('div', {class: 'stage-row stage-current'},
      h('span', {class: 'stage-name'}, current), h('span', {class: 'stage-bar'}, h('span', {class: 'stage-fill stage-pulse'})),
      h('span', {class: 'stage-sec'}, 'running')));
  }
  return h('div', {class: 'stages'}, rows);
}

// progressBar shows a share in [0, 1].
export function progressBar(p, state) {
  const pct = Math.round(100 * Math.max(0, Math.min(1, p || 0)));
  const fill = h('span', {class: 'progress-fill'});
  fill.style.width = pct + '%';
  return h('div', {class: 'progress progress-' + (state || 'running'), role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct},
    fill, h('span', {class: 'progress-text'}, pct + '%'));
}
