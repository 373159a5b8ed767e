// pgscale's charts, drawn in the page by uPlot from its own data block
// (#pgscale-data): each empty box div.uchart says what to draw
// (data-chart) from which part of the data (data-of, data-metric,
// data-measures), titled as Go decided (data-title, data-ylabel). Hover
// shows exact values and intervals, a drag zooms a time axis (a
// timeline's panels follow), a double-click shows it all again, and a
// click on a legend's name hides or shows its line. It fetches nothing,
// evaluates nothing, and sets every name from the data as text, never as
// markup: uPlot writes titles and legends with textContent, and the
// canvas draws text as pixels. The page's Content-Security-Policy allows
// this script and uPlot alone, by their hashes.
(function () {
  "use strict";
  var block = document.getElementById("pgscale-data");
  if (!block || typeof uPlot !== "function") return;
  var data;
  try {
    data = JSON.parse(block.textContent);
  } catch (e) {
    return;
  }
  document.documentElement.classList.add("js");

  // The Okabe-Ito colours, told apart with most kinds of colour blindness.
  var COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#555555", "#F0E442"];
  var CPU = { "server": "#0072B2", "load generator": "#E69F00", "pooler": "#CC79A7", "probes": "#555555", "other": "#B0B0B0", "idle": "#F2F2F2" };
  var WAITS = { CPU: "#009E73", LWLock: "#D55E00", Lock: "#992222", IO: "#E69F00", BufferPin: "#884400", IPC: "#CC79A7",
    Extension: "#7755AA", Timeout: "#888888", Activity: "#C8C8C8", Client: "#56B4E9" };
  var WAIT_ORDER = ["CPU", "LWLock", "Lock", "IO", "BufferPin", "IPC", "Extension", "Timeout", "Activity", "Client"];
  var FONT = "11px system-ui, sans-serif", LABEL_FONT = "12px system-ui, sans-serif";
  var MAX_DOTS = 24; // a timeline marks each interval with a dot up to this many

  function color(i) { return COLORS[i % COLORS.length]; }

  // fmt shows a figure with the digits that matter at its size, as the
  // page's tables do (Go's fmtNum): a tie goes to the even digit, as Go
  // rounds it, where toFixed would round it up.
  function fmt(x) {
    if (x === null || x === undefined || !isFinite(x)) return "–";
    if (x === 0) return "0";
    var a = Math.abs(x), d = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
    // x is exactly half-way between two d-digit figures when x·2^(d+1)
    // (exact: a power of two) is an odd integer.
    var t = x * Math.pow(2, d + 1);
    if (Number.isInteger(t) && Math.abs(t) % 2 === 1) {
      var v = x * Math.pow(10, d), even = Math.floor(v) % 2 === 0 ? Math.floor(v) : Math.ceil(v);
      return (even / Math.pow(10, d)).toFixed(d);
    }
    return x.toFixed(d);
  }
  function interval(lo, hi) { return lo == null || hi == null ? "" : " [" + fmt(lo) + " – " + fmt(hi) + "]"; }
  function clientsWord(n) { return n === 1 ? "1 client" : n + " clients"; }
  function num(x) { return x === null || x === undefined || !isFinite(x) ? null : x; }

  var tip = document.createElement("div");
  tip.className = "chart-tip";
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  document.body.appendChild(tip);

  function showTip(u, lines) {
    if (!lines || !lines.length) {
      tip.hidden = true;
      return;
    }
    tip.textContent = lines.join("\n");
    tip.hidden = false;
    var r = u.over.getBoundingClientRect();
    var x = r.left + window.scrollX + u.cursor.left + 14, y = r.top + window.scrollY + u.cursor.top + 14;
    var room = document.documentElement.clientWidth + window.scrollX - tip.offsetWidth - 8;
    if (x > room) x = r.left + window.scrollX + u.cursor.left - tip.offsetWidth - 14;
    tip.style.left = Math.max(window.scrollX, Math.min(x, room)) + "px";
    tip.style.top = y + "px";
  }

  // plot makes one uPlot chart in parent from a spec: its series, data,
  // axes, what to draw under and over the lines, and what the tooltip
  // says at a cursor (describe).
  function plot(parent, spec) {
    var holder = document.createElement("div");
    holder.className = "panel";
    parent.appendChild(holder);
    var series = [{ label: spec.xlabel }];
    spec.series.forEach(function (s) {
      series.push({
        label: s.label, stroke: s.color, width: s.width || 1.6, dash: s.dash, fill: s.fill, spanGaps: !!s.span,
        paths: s.paths, points: { show: s.dots !== false, size: s.size || 5, fill: s.color, stroke: s.color },
      });
    });
    // A chart that zooms has the ends of its x axis in its data: an x
    // range given as a function would undo every drag.
    var zoom = !!spec.zoom;
    var opts = {
      width: Math.max(parent.clientWidth, 200),
      height: spec.height || 240,
      title: spec.title || undefined,
      series: series,
      legend: { show: spec.legend !== false, live: false },
      scales: {
        x: { time: false, distr: spec.log ? 3 : 1, log: 2, range: spec.xrange },
        y: { range: spec.yrange },
      },
      axes: [
        { label: spec.xlabel, font: FONT, labelFont: LABEL_FONT, values: spec.xvalues, splits: spec.xsplits,
          size: spec.xlabel ? 36 : 20, labelSize: spec.xlabel ? 16 : 0, grid: { stroke: "#e8e8e8" } },
        { label: spec.ylabel, font: FONT, labelFont: LABEL_FONT, size: ysize, labelSize: 18, values: spec.yvalues,
          grid: { stroke: "#e8e8e8" } },
      ],
      cursor: {
        sync: spec.sync ? { key: spec.sync } : undefined,
        drag: { x: zoom, y: false, setScale: zoom },
        y: false,
        points: { size: 7 },
        // A double-click shows a zoomed chart whole again; one that does
        // not zoom keeps its axis as drawn.
        bind: zoom ? undefined : { dblclick: function () { return function () { return null; }; } },
      },
      hooks: {
        drawClear: [function (u) { if (spec.under) clipped(u, spec.under); }],
        draw: [function (u) { if (spec.over) clipped(u, spec.over); }],
        setCursor: [function (u) {
          if (!u.cursor.event) return; // a panel that follows another says nothing
          if (u.cursor.left < 0 || u.cursor.idx == null) {
            tip.hidden = true;
            return;
          }
          showTip(u, spec.describe(u, u.cursor.idx));
        }],
        setScale: [function (u, key) { if (key === "x") label(u, spec); }],
        setSeries: [function (u, i, o) { if (spec.toggled) spec.toggled(u, i, o); }],
      },
    };
    var u = new uPlot(opts, spec.data, holder);
    u.over.addEventListener("mouseleave", function () { tip.hidden = true; });
    u.root.querySelector(".u-wrap").setAttribute("role", "img");
    label(u, spec);
    return u;
  }

  // ysize makes room for the y axis' longest tick label.
  function ysize(u, values, ai, cycle) {
    var ax = u.axes[ai];
    if (cycle > 1) return ax._size;
    var longest = (values || []).reduce(function (a, v) { return v.length > a.length ? v : a; }, "");
    u.ctx.font = ax.font[0];
    return Math.max(48, Math.ceil(ax.ticks.size + ax.gap + u.ctx.measureText(longest).width / uPlot.pxRatio) + 4);
  }

  // align gives panels on one time axis one y axis width, so that their
  // plot areas, and the times in them, line up: once uPlot has sized
  // each panel's axis (in the microtasks queued as they were made).
  function align(plots) {
    queueMicrotask(function () {
      var w = Math.max.apply(null, plots.map(function (u) { return u.axes[1]._size; }));
      plots.forEach(function (u) {
        u.axes[1].size = function () { return w; };
        u.redraw(false, true);
      });
    });
    return plots;
  }

  // label says in words what the plot area shows, for a screen reader
  // and a test: the title and the axes' ranges as drawn (zoomed or not).
  function label(u, spec) {
    var x = u.scales.x, y = u.scales.y;
    var txt = (spec.title || spec.ylabel || "") + ": " + (spec.xname || spec.xlabel || "x") + " " + fmt(x.min) + " to " + fmt(x.max) +
      "; " + (spec.ylabel || "y") + " " + fmt(y.min) + " to " + fmt(y.max);
    var wrap = u.root.querySelector(".u-wrap");
    if (wrap) wrap.setAttribute("aria-label", txt);
  }

  // clipped draws with f inside the plot area only.
  function clipped(u, f) {
    var c = u.ctx, b = u.bbox;
    c.save();
    c.beginPath();
    c.rect(b.left, b.top, b.width, b.height);
    c.clip();
    f(u, c, uPlot.pxRatio);
    c.restore();
  }

  function xpos(u, v) { return u.valToPos(v, "x", true); }
  function ypos(u, v) { return u.valToPos(v, "y", true); }

  // band fills a stretch of the x axis, the plot's whole height.
  function band(u, c, from, to, fill) {
    var x0 = xpos(u, from), x1 = xpos(u, to);
    c.fillStyle = fill;
    c.fillRect(x0, u.bbox.top, Math.max(x1 - x0, 1), u.bbox.height);
  }

  // vline draws a dashed vertical line at x, labelled at the top.
  function vline(u, c, px, x, stroke, text) {
    var p = xpos(u, x);
    c.strokeStyle = stroke;
    c.lineWidth = px;
    c.setLineDash([3 * px, 3 * px]);
    c.beginPath();
    c.moveTo(p, u.bbox.top);
    c.lineTo(p, u.bbox.top + u.bbox.height);
    c.stroke();
    c.setLineDash([]);
    if (text) words(c, px, text, p + 3 * px, u.bbox.top + 12 * px, stroke);
  }

  // words draws text on the canvas: pixels, never markup.
  function words(c, px, text, x, y, fill) {
    c.font = Math.round(11 * px) + "px system-ui, sans-serif";
    c.textAlign = "left";
    c.textBaseline = "alphabetic";
    c.fillStyle = fill;
    c.fillText(text, x, y);
  }

  // whiskers draws each point's interval and marks: lo/hi per index,
  // faint dots of each round, a hollow square at the knee, a red ring at
  // a step cut short.
  function whiskers(u, c, px, si, marks) {
    var s = u.series[si];
    if (!s.show) return;
    var xs = u.data[0];
    marks.forEach(function (m, i) {
      if (!m) return;
      var x = xpos(u, xs[i]);
      c.strokeStyle = s.stroke();
      c.fillStyle = s.stroke();
      if (m.lo != null && m.hi != null) {
        // An end past the axis is drawn at its edge as an arrowhead.
        var sc = u.scales.y, lo = Math.max(m.lo, sc.min), hi = Math.min(m.hi, sc.max);
        var y0 = ypos(u, lo), y1 = ypos(u, hi);
        c.lineWidth = px;
        c.beginPath();
        c.moveTo(x, y0); c.lineTo(x, y1);
        [[y0, m.lo >= sc.min, 1], [y1, m.hi <= sc.max, -1]].forEach(function (e) {
          if (e[1]) {
            c.moveTo(x - 4 * px, e[0]); c.lineTo(x + 4 * px, e[0]);
          } else {
            c.moveTo(x - 4 * px, e[0] - 6 * px * e[2]); c.lineTo(x, e[0]); c.lineTo(x + 4 * px, e[0] - 6 * px * e[2]);
          }
        });
        c.stroke();
      }
      (m.rounds || []).forEach(function (r) {
        if (r == null) return;
        c.globalAlpha = 0.45;
        c.beginPath();
        c.arc(x + 5 * px, ypos(u, r), 1.6 * px, 0, 2 * Math.PI);
        c.fill();
        c.globalAlpha = 1;
      });
      var y = ypos(u, u.data[si][i]);
      if (m.knee && u.data[si][i] != null) {
        c.lineWidth = 1.4 * px;
        c.strokeRect(x - 6 * px, y - 6 * px, 12 * px, 12 * px);
        words(c, px, "knee", x + 8 * px, y + 4 * px, s.stroke());
      }
      if (m.incomplete && u.data[si][i] != null) {
        c.strokeStyle = "#B00000";
        c.lineWidth = 1.4 * px;
        c.beginPath();
        c.arc(x, y, 6 * px, 0, 2 * Math.PI);
        c.stroke();
      }
    });
  }

  // top is the highest of values, for a y axis from 0 with room above.
  function top(vals) {
    var m = 0;
    vals.forEach(function (v) { if (v != null && isFinite(v) && v > m) m = v; });
    return m > 0 ? m * 1.08 : 1;
  }

  // clientAxis is the x axis of a scaling chart: client counts, on a
  // log scale when the sweep is geometric, each count labelled when few.
  function clientAxis(spec, cs, log) {
    var lo = cs[0], hi = cs[cs.length - 1];
    if (log) {
      spec.xrange = function () { return [lo / 1.15, hi * 1.15]; };
    } else {
      var pad = Math.max((hi - lo) * 0.05, 0.5);
      spec.xrange = function () { return [lo - pad, hi + pad]; };
    }
    spec.log = log;
    if (cs.length <= 14) spec.xsplits = function () { return cs; };
    spec.xvalues = function (u, splits) { return splits.map(function (v) { return String(Math.round(v * 100) / 100); }); };
  }

  // scaling draws one metric of a panel's lines against clients.
  function scaling(el) {
    var sc = data.scaling;
    var idx = el.dataset.of.split(" ").map(Number);
    var lines = idx.map(function (i) { return { s: sc.series[i], color: color(idx.indexOf(i)) }; });
    var metric = el.dataset.metric;
    var cs = [];
    lines.forEach(function (l) { l.s.points.forEach(function (p) { if (cs.indexOf(p.clients) < 0) cs.push(p.clients); }); });
    cs.sort(function (a, b) { return a - b; });
    var spec = { title: el.dataset.title, xlabel: "clients", ylabel: el.dataset.ylabel, series: [], data: [cs], height: 270 };
    clientAxis(spec, cs, sc.log_clients);
    var marks = [], all = [], unit = "";
    // add draws a line: its label, colour and dash, and its values, each
    // at its client count with what the tooltip and the marks beside it
    // say (its interval, rounds, knee, a step cut short).
    function add(label, col, dash, values) {
      if (!values.length) return; // a line with nothing of this metric
      var ys = [], at = [];
      cs.forEach(function () { ys.push(undefined); at.push(null); });
      values.forEach(function (v) {
        var i = cs.indexOf(v.clients);
        ys[i] = v.y;
        at[i] = v;
        all.push(v.y);
        (v.rounds || []).forEach(function (r) { all.push(r); });
      });
      spec.series.push({ label: label, color: col, dash: dash, span: true });
      spec.data.push(ys);
      marks.push({ at: at });
    }
    var measures = (el.dataset.measures || "").split(" ").filter(Boolean);
    lines.forEach(function (l) {
      var s = l.s;
      // each is the line's points that have a value f gives.
      function each(f) {
        var out = [];
        s.points.forEach(function (p) {
          var v = f(p);
          if (v && v.y != null) {
            v.clients = p.clients;
            v.p = p;
            out.push(v);
          }
        });
        return out;
      }
      // marked is a value with the knee and a sweep's step cut short.
      function marked(p, v) {
        v.knee = p.clients === s.knee_clients;
        v.incomplete = p.incomplete && !s.rounds;
        return v;
      }
      if (metric === "tps") {
        unit = "tps";
        add(s.label, l.color, undefined, each(function (p) {
          return marked(p, { y: num(p.tps), lo: num(p.tps_lo), hi: num(p.tps_hi), rounds: p.round_tps });
        }));
      } else if (metric === "p99") {
        unit = "ms";
        add(s.label, l.color, undefined, each(function (p) {
          return marked(p, { y: num(p.p99_ms), lo: num(p.p99_lo), hi: num(p.p99_hi), rounds: p.round_p99_ms });
        }));
      } else if (metric === "speedup") {
        unit = "×";
        add(s.label, l.color, undefined, each(function (p) { return p.speedup == null ? null : marked(p, { y: p.speedup }); }));
      } else if (metric === "cost") {
        unit = el.dataset.ylabel.indexOf("instructions") === 0 ? "instructions" : "µs";
        measures.forEach(function (m, k) {
          var part = m.indexOf("pooler") === 0 ? "pooler" : "server";
          add(measures.length > 1 ? s.label + " " + part : s.label, l.color, k ? [5, 3] : undefined, each(function (p) {
            var c = (p.costs || []).filter(function (x) { return x.measure === m; })[0];
            return c ? { y: num(c.value), lo: num(c.lo), hi: num(c.hi) } : null;
          }));
        });
      } else if (metric === "change") {
        unit = "%";
        if (s.baseline) return;
        add(s.label, l.color, undefined, each(function (p) {
          var v = p.vs_baseline;
          return v ? { y: 100 * v.change, lo: v.lo == null ? null : 100 * v.lo, hi: v.hi == null ? null : 100 * v.hi, text: v.text } : null;
        }));
      }
    });
    // Perfect scaling, as Go computed it for the first line: in
    // proportion to the clients up to the machine's cores, flat after.
    if (metric === "speedup" && lines.length && lines[0].s.points.some(function (p) { return p.ideal != null; })) {
      var ideal = {};
      lines[0].s.points.forEach(function (p) { if (p.ideal != null) ideal[p.clients] = num(p.ideal); });
      spec.series.push({ label: data.scaling.ideal_label || "perfect scaling", color: "#909090", dash: [4, 3], width: 1, dots: false, span: true });
      spec.data.push(cs.map(function (c) { return c in ideal ? ideal[c] : undefined; }));
      marks.push({ at: cs.map(function (c) { return c in ideal ? { y: ideal[c] } : null; }) });
      Object.keys(ideal).forEach(function (c) { all.push(ideal[c]); });
    }
    // The axis holds the values, the rounds and the intervals, but an
    // interval far wider than the values (two rounds make one) would
    // flatten them: it runs off the axis instead, and the tooltip gives
    // it.
    var lo = metric === "change" ? 0 : Infinity, hi = 0;
    all.forEach(function (v) { if (v != null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
    if (!isFinite(lo)) lo = 0;
    var span = Math.max(hi - lo, Math.abs(hi), metric === "change" ? 1 : 0);
    marks.forEach(function (m) {
      m.at.forEach(function (v) {
        if (!v) return;
        if (v.lo != null && v.lo >= lo - span) lo = Math.min(lo, v.lo);
        if (v.hi != null && v.hi <= hi + span) hi = Math.max(hi, v.hi);
      });
    });
    if (metric === "change") {
      var pad = Math.max((hi - lo) * 0.1, 1);
      spec.yrange = function () { return [lo - pad, hi + pad]; };
    } else {
      spec.yrange = function () { return [0, hi > 0 ? hi * 1.08 : 1]; };
    }
    spec.over = function (u, c, px) {
      if (metric === "change") {
        c.strokeStyle = "#777";
        c.lineWidth = px;
        c.beginPath();
        c.moveTo(u.bbox.left, ypos(u, 0));
        c.lineTo(u.bbox.left + u.bbox.width, ypos(u, 0));
        c.stroke();
      }
      marks.forEach(function (m, k) { whiskers(u, c, px, k + 1, m.at); });
    };
    spec.describe = function (u, i) {
      var out = [clientsWord(cs[i])];
      marks.forEach(function (m, k) {
        if (!u.series[k + 1].show) return;
        var j = u.cursor.idxs[k + 1];
        var v = j == null ? null : m.at[j];
        if (!v || cs[j] !== cs[i]) return;
        var line = u.series[k + 1].label + ": ";
        if (v.text) {
          line += v.text;
        } else {
          line += fmt(v.y) + " " + unit + interval(v.lo, v.hi);
        }
        var notes = [];
        if (v.p && metric !== "change" && metric !== "cost") {
          var s = lines.filter(function (l) { return l.s.points.indexOf(v.p) >= 0; })[0].s;
          if (v.p.clients === s.knee_clients) notes.push("knee");
          if (v.p.clients === s.peak_clients && s.points.length > 1) notes.push("peak");
          if (s.rounds) notes.push("geometric mean of " + (v.p.round_tps || []).length + " rounds");
          if (v.p.rounds_left_out) notes.push(v.p.rounds_left_out + " cut short, left out");
          else if (v.p.incomplete) notes.push("incomplete");
        }
        out.push(line + (notes.length ? "; " + notes.join("; ") : ""));
      });
      return out.length > 1 ? out : null;
    };
    return [plot(el, spec)];
  }

  // timeline draws a step's (or an A/B run's client count's) intervals
  // in panels on one time axis: throughput, latency (p99 solid, mean
  // dashed) and, when any transaction failed, failures per second;
  // disturbance windows, stretches never measured, gaps and rounds marked.
  function timeline(el) {
    var t = data.timelines[Number(el.dataset.of)];
    var xs = {}, xmin = 0, xmax = 0;
    var gaps = (t.gap_spans || []).map(function (g) { return [g.from_s, g.to_s]; });
    function at(x) { xs[x.toFixed(6)] = x; }
    t.series.forEach(function (s) {
      s.segments.forEach(function (seg) {
        seg.forEach(function (p) {
          at(p.t + p.len_s / 2);
          xmin = Math.min(xmin, p.t);
          xmax = Math.max(xmax, p.t + p.len_s);
        });
        // The end of a segment: where its line breaks before the next.
        if (seg.length) at(seg[seg.length - 1].t + seg[seg.length - 1].len_s);
      });
    });
    if (t.not_run) xmax = Math.max(xmax, t.not_run.to_s);
    (t.windows || []).forEach(function (w) { xmax = Math.max(xmax, w.to_s); });
    if (xmax <= xmin) xmax = xmin + 1;
    at(xmin);
    at(xmax);
    var x = Object.keys(xs).map(function (k) { return xs[k]; }).sort(function (a, b) { return a - b; });
    var pos = {};
    x.forEach(function (v, i) { pos[v.toFixed(6)] = i; });
    // Per target: its interval at each x, undefined where only another
    // target has one (the line goes on), null between two of its
    // segments (the line breaks).
    var per = t.series.map(function (s) {
      var pts = x.map(function () { return undefined; });
      s.segments.forEach(function (seg, k) {
        seg.forEach(function (p) { pts[pos[(p.t + p.len_s / 2).toFixed(6)]] = p; });
        var next = s.segments[k + 1];
        if (!next || !seg.length || !next.length) return;
        var from = seg[seg.length - 1].t + seg[seg.length - 1].len_s, to = next[0].t;
        x.forEach(function (v, i) { if (v >= from && v < to && pts[i] === undefined) pts[i] = null; });
      });
      return pts;
    });
    var n = 0;
    t.series.forEach(function (s) { s.segments.forEach(function (seg) { n += seg.length; }); });
    var dots = n <= MAX_DOTS * Math.max(t.series.length, 1);
    var many = t.series.length > 1;
    var xlabel = t.clock === "run" ? "seconds since the run's first step began" : "seconds since the step's measured window began";
    function values(pts, f) { return pts.map(function (p) { return p === null ? null : p === undefined ? undefined : f(p); }); }
    var panels = [{ ylabel: "tps", title: el.dataset.title, height: 170, series: [], data: [x], owner: [] }];
    var lat = { ylabel: "latency ms", height: 150, series: [], data: [x], owner: [] };
    panels.push(lat);
    var fail = null;
    if (t.failed > 0) {
      fail = { ylabel: "failed / s", height: 120, series: [], data: [x], owner: [] };
      panels.push(fail);
    }
    t.series.forEach(function (s, i) {
      var col = color(i), pts = per[i];
      panels[0].series.push({ label: s.label, color: col, width: 1.5, dots: dots, size: 4 });
      panels[0].data.push(values(pts, function (p) { return p.tps; }));
      panels[0].owner.push(i);
      lat.series.push({ label: many ? s.label + " p99" : "p99", color: col, width: 1.5, dots: dots, size: 4 });
      lat.data.push(values(pts, function (p) { return p.p99_ms; }));
      lat.owner.push(i);
      lat.series.push({ label: many ? s.label + " mean" : "mean", color: col, width: 1, dash: [3, 2], dots: false });
      lat.data.push(values(pts, function (p) { return p.mean_ms; }));
      lat.owner.push(i);
      if (fail) {
        fail.series.push({ label: many ? s.label + " failed/s" : "failed/s", color: many ? col : "#CC0000", width: 1.2, dots: dots, size: 4 });
        fail.data.push(values(pts, function (p) { return p.len_s > 0 ? (p.failed || 0) / p.len_s : 0; }));
        fail.owner.push(i);
      }
    });
    var plots = [];
    function under(first) {
      return function (u, c, px) {
        gaps.forEach(function (g) { band(u, c, g[0], g[1], "rgba(128,128,128,0.16)"); });
        (t.windows || []).forEach(function (w) { band(u, c, w.from_s, Math.max(w.to_s, w.from_s + 0.01), "rgba(213,94,0,0.22)"); });
        if (t.not_run) band(u, c, t.not_run.from_s, t.not_run.to_s, "rgba(128,128,128,0.28)");
        (t.rounds || []).forEach(function (r) { vline(u, c, px, r.at_s, "#999", first ? r.label.replace(/^round /, "") : ""); });
        if (!first) return;
        (t.windows || []).forEach(function (w) { words(c, px, (w.target ? w.target + ": " : "") + w.name, xpos(u, w.from_s) + 3 * px, u.bbox.top + 24 * px, "#8a3b00"); });
        if (t.not_run) words(c, px, "not measured", xpos(u, t.not_run.from_s) + 3 * px, u.bbox.top + 24 * px, "#555");
        gaps.forEach(function (g) { words(c, px, "gap", xpos(u, g[0]) + 2 * px, u.bbox.top + 36 * px, "#555"); });
      };
    }
    function describe(u, i) {
      var out = [fmt(x[i]) + " s"];
      var first = plots[0];
      t.series.forEach(function (s, k) {
        if (!first.series[k + 1].show) return;
        var p = nearest(per[k], x[i]);
        if (!p) return;
        var line = (many ? s.label + ", " : "") + fmt(p.t) + "–" + fmt(p.t + p.len_s) + " s: " + fmt(p.tps) + " tps, p99 " + fmt(p.p99_ms) +
          " ms, mean " + fmt(p.mean_ms) + " ms";
        if (p.failed) line += ", " + p.failed + " failed";
        out.push(line);
      });
      (t.windows || []).forEach(function (w) {
        if (x[i] >= w.from_s && x[i] <= w.to_s) out.push("during " + (w.target ? w.target + ": " : "") + w.name + " (" + w.spec + ")");
      });
      var round = null;
      (t.rounds || []).forEach(function (r) { if (x[i] >= r.at_s) round = r.label; });
      if (round) out.push(round);
      return out.length > 1 ? out : null;
    }
    panels.forEach(function (p, k) {
      var last = k === panels.length - 1;
      var tops = [];
      p.data.slice(1).forEach(function (ys) { tops = tops.concat(ys); });
      var spec = {
        title: p.title, xlabel: last ? xlabel : "", xname: "seconds", ylabel: p.ylabel, series: p.series, data: p.data, height: p.height,
        legend: k > 0 || many, zoom: true, sync: t.id,
        xvalues: last ? undefined : function (u, splits) { return splits.map(function () { return ""; }); },
        yrange: (function (m) { return function () { return [0, m]; }; })(top(tops) * 1.04),
        under: under(k === 0), describe: describe,
      };
      if (k === 0) {
        spec.toggled = function (u, si, o) {
          if (!o || o.show == null) return;
          plots.slice(1).forEach(function (q, qk) {
            panels[qk + 1].owner.forEach(function (owner, sj) {
              if (owner === si - 1 && q.series[sj + 1].show !== o.show) q.setSeries(sj + 1, { show: o.show }, false);
            });
          });
        };
      }
      plots.push(plot(el, spec));
    });
    return align(plots);
  }

  // nearest is the interval of pts whose middle is nearest the time at,
  // if at is within one interval's length of it: a target that ran
  // nothing there (another's slice, another client count's step) says
  // nothing.
  function nearest(pts, at) {
    var best = null, d = Infinity;
    pts.forEach(function (p) {
      if (!p) return;
      var e = Math.abs(p.t + p.len_s / 2 - at);
      if (e < d) {
        d = e;
        best = p;
      }
    });
    return best && d <= best.len_s ? best : null;
  }

  // bars draws a file's steps as stacked bars: where the machine's CPU
  // went, or the client backends' wait classes; hidden parts leave the
  // stack.
  function bars(el) {
    var e = data.evidence[Number(el.dataset.of)];
    var cpu = el.dataset.metric === "cpu";
    var steps = e.steps;
    var names = steps.map(function (s) { return s.round ? "r" + s.round + "·" + s.clients : String(s.clients); });
    var parts = cpu ? ["server", "load generator", "pooler", "probes", "other", "idle"] : WAIT_ORDER.slice();
    if (!cpu) steps.forEach(function (s) { (s.wait_classes || []).forEach(function (w) { if (parts.indexOf(w.name) < 0) parts.push(w.name); }); });
    function value(s, part) {
      if (cpu) {
        var c = s.cpu;
        if (!c) return 0;
        var k = { "server": "server", "load generator": "load_generator", "pooler": "pooler", "probes": "probes", "other": "other", "idle": "idle" }[part];
        return 100 * (c[k] || 0);
      }
      var w = (s.wait_classes || []).filter(function (x) { return x.name === part; })[0];
      return w ? 100 * w.share : 0;
    }
    parts = parts.filter(function (p) { return steps.some(function (s) { return value(s, p) > 0; }); });
    var raw = parts.map(function (p) { return steps.map(function (s) { return value(s, p); }); });
    var order = parts.map(function (p, i) { return i; }).reverse(); // the top of the stack first
    var xs = steps.map(function (s, i) { return i; });
    var shown = parts.map(function () { return true; });
    function stacked() {
      var sum = xs.map(function () { return 0; }), cum = [];
      parts.forEach(function (p, k) {
        if (shown[k]) sum = sum.map(function (v, i) { return v + raw[k][i]; });
        cum[k] = sum.slice();
      });
      return [xs].concat(order.map(function (k) { return cum[k]; }));
    }
    var bar = uPlot.paths.bars({ size: [0.6, 44], align: 0 });
    var spec = {
      title: el.dataset.title, xlabel: steps[0] && steps[0].round ? "round · clients" : "clients", ylabel: cpu ? "% of all cores" : "% of samples",
      height: 260, data: stacked(),
      series: order.map(function (k) {
        var p = parts[k], col = cpu ? CPU[p] : WAITS[p] || "#333333";
        return { label: p, color: "#808080", width: 0.5, fill: col, paths: bar, dots: false };
      }),
      xrange: function () { return [-0.5, steps.length - 0.5]; },
      yrange: function () { return [0, 100]; },
      xsplits: function () { var k = Math.ceil(steps.length / 14); return xs.filter(function (i) { return i % k === 0; }); },
      xvalues: function (u, splits) { return splits.map(function (i) { return names[i] || ""; }); },
    };
    spec.describe = function (u, i) {
      var s = steps[i];
      var out = [(s.round ? "round " + s.round + ", " : "") + clientsWord(s.clients)];
      order.forEach(function (k, si) {
        if (u.series[si + 1].show) out.push(parts[k] + ": " + fmt(raw[k][i]) + "%");
      });
      if (cpu && s.cpu) out.push("run queue " + fmt(s.cpu.run_queue_per_core) + " per core");
      return out;
    };
    spec.toggled = function (u, si, o) {
      if (!o || o.show == null) return;
      shown[order[si - 1]] = o.show;
      u.setData(stacked(), false);
      u.redraw();
    };
    return [plot(el, spec)];
  }

  // pooler draws a step's throughput per interval above the pooler's
  // waiting clients and active server connections per sample.
  function pooler(el) {
    var st = null;
    (data.evidence || []).forEach(function (e) { e.steps.forEach(function (s) { if (s.id === el.dataset.of) st = s; }); });
    if (!st || !st.pooler) return [];
    var p = st.pooler, xmax = 1;
    (p.load || []).forEach(function (l) { xmax = Math.max(xmax, l.t); });
    p.series.forEach(function (s) { xmax = Math.max(xmax, s.t); });
    function panel(pts, fields) {
      var x = [0].concat(pts.map(function (q) { return q.t; }), [xmax]);
      var ys = fields.map(function (f) { return [undefined].concat(pts.map(function (q) { return num(q[f]); }), [undefined]); });
      var tops = [];
      ys.forEach(function (y) { tops = tops.concat(y); });
      return { x: x, ys: ys, top: top(tops) * 1.04 };
    }
    var load = panel(p.load || [], ["tps"]);
    var queue = panel(p.series, ["clients_waiting", "servers_active"]);
    var dots = p.series.length <= MAX_DOTS;
    var plots = [];
    var common = { zoom: true, sync: "pooler-" + st.id, xname: "seconds" };
    var a = plot(el, assign({
      title: el.dataset.title, xlabel: "", ylabel: "tps", height: 150, legend: false, data: [load.x, load.ys[0]],
      series: [{ label: "throughput", color: color(0), width: 1.5, dots: dots, size: 4, span: true }],
      xvalues: function (u, splits) { return splits.map(function () { return ""; }); },
      yrange: function () { return [0, load.top]; },
      describe: function (u, i) { return load.ys[0][i] == null ? null : [fmt(load.x[i]) + " s: " + fmt(load.ys[0][i]) + " tps"]; },
    }, common));
    plots.push(a);
    var b = plot(el, assign({
      xlabel: "seconds since the step's measured window began", ylabel: "connections", height: 150, data: [queue.x].concat(queue.ys),
      series: [{ label: "clients waiting", color: color(1), width: 1.5, dots: dots, size: 4, span: true },
        { label: "server connections active", color: color(2), width: 1.5, dots: dots, size: 4, span: true }],
      yrange: function () { return [0, queue.top]; },
      describe: function (u, i) {
        var out = [fmt(queue.x[i]) + " s"];
        if (queue.ys[0][i] != null && u.series[1].show) out.push(fmt(queue.ys[0][i]) + " clients waiting");
        if (queue.ys[1][i] != null && u.series[2].show) out.push(fmt(queue.ys[1][i]) + " server connections active");
        return out.length > 1 ? out : null;
      },
    }, common));
    plots.push(b);
    return align(plots);
  }

  function assign(a, b) {
    Object.keys(b).forEach(function (k) { a[k] = b[k]; });
    return a;
  }

  // trend draws a history series over its runs: each run's value with
  // its interval, the segments' means between change points in grey, and
  // each change point as a dashed line labelled with the change, red for
  // the worse, green for the better.
  function trend(el) {
    var s = data.series[Number(el.dataset.of)];
    var n = s.points.length;
    var x = [0.5], y = [undefined];
    s.points.forEach(function (p, i) { x.push(i + 1); y.push(num(p.value)); });
    x.push(n + 0.5);
    y.push(undefined);
    var lo = Infinity, hi = -Infinity;
    s.points.forEach(function (p) {
      [p.value, p.lo, p.hi].forEach(function (v) { if (v != null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
    });
    var pad = (hi - lo) * 0.12 || Math.abs(hi) * 0.05 || 1;
    var marks = x.map(function (v, i) { var p = s.points[i - 1]; return p ? { lo: num(p.lo), hi: num(p.hi) } : null; });
    var spec = {
      title: el.dataset.title, xlabel: "run (oldest first)", ylabel: s.measure + " (" + s.unit + ")", height: 280, data: [x, y], zoom: true,
      series: [{ label: s.measure, color: color(0), width: 1.2, size: 5, span: true }],
      legend: false,
      yrange: function () { return [lo - pad, hi + 2.2 * pad]; },
      xsplits: function (u, ax, min, max) {
        var step = 1;
        while ((max - min) / step > 20) step = step === 1 ? 2 : step === 2 ? 5 : step * 2;
        var out = [];
        for (var i = Math.max(1, Math.ceil(min)); i <= max; i++) if (i === 1 || i % step === 0) out.push(i);
        return out;
      },
      xvalues: function (u, splits) { return splits.map(String); },
    };
    spec.under = function (u, c, px) {
      var start = 0;
      c.strokeStyle = "#555";
      c.lineWidth = 1.6 * px;
      s.changes.forEach(function (ch, k) {
        mean(start, ch.index, ch.before);
        start = ch.index;
        if (k === s.changes.length - 1) mean(start, n, ch.after);
      });
      function mean(from, to, v) {
        c.beginPath();
        c.moveTo(xpos(u, from + 0.5), ypos(u, v));
        c.lineTo(xpos(u, to + 0.5), ypos(u, v));
        c.stroke();
      }
      s.changes.forEach(function (ch) {
        var col = ch.worse ? "#B00000" : "#00704A";
        vline(u, c, px, ch.index + 0.5, col, "");
        words(c, px, ch.text.split(" ±")[0], xpos(u, ch.index + 0.5) + 3 * px, u.bbox.top + 12 * px, col);
      });
    };
    spec.over = function (u, c, px) { whiskers(u, c, px, 1, marks); };
    spec.describe = function (u, i) {
      var j = u.cursor.idxs[1];
      var p = j == null ? null : s.points[j - 1];
      if (!p) return null;
      var out = [p.commit + ": " + fmt(p.value) + " " + s.unit + interval(num(p.lo), num(p.hi)),
        p.time.slice(0, 10) + " " + p.time.slice(11, 16) + " UTC, run " + j + ", result " + p.result + ", " + p.n + " round" + (p.n === 1 ? "" : "s")];
      s.changes.forEach(function (ch) {
        if (ch.index === j - 1) {
          out.push("change " + ch.text + " between " + ch.from + " and " + ch.to + ", p=" + Number(ch.p.toPrecision(2)) + (ch.acknowledged ? " (acknowledged)" : ""));
        }
      });
      return out;
    };
    return [plot(el, spec)];
  }

  var kinds = { scaling: scaling, timeline: timeline, bars: bars, pooler: pooler, trend: trend };

  // Each chart is drawn once its box has a width (a closed section's
  // chart when it opens) and follows the box's width after.
  var drawn = new Map();
  var ro = new ResizeObserver(function (entries) {
    entries.forEach(function (en) {
      var el = en.target, w = el.clientWidth;
      if (w <= 0) return;
      if (!drawn.has(el)) {
        var make = kinds[el.dataset.chart];
        drawn.set(el, make ? make(el) : []);
        return;
      }
      drawn.get(el).forEach(function (u) {
        if (Math.abs(u.width - w) > 1) u.setSize({ width: w, height: u.height });
      });
    });
  });
  document.querySelectorAll("div.uchart[data-chart]").forEach(function (el) { ro.observe(el); });
  // A printed page is narrower than the screen: the charts follow it
  // there and back.
  function fit(most) {
    drawn.forEach(function (us, el) {
      us.forEach(function (u) { u.setSize({ width: Math.min(el.clientWidth, most), height: u.height }); });
    });
  }
  window.addEventListener("beforeprint", function () { fit(640); });
  window.addEventListener("afterprint", function () { fit(Infinity); });
})();
