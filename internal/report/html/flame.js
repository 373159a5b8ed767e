// pgscale's flame graphs, drawn in the page from its own data block
// (#pgscale-data: every graph's frames): a frame's numbers on hover, a
// click zooms into its subtree (a click on the root or "Reset zoom" goes
// back), and a search box highlights every frame whose function matches
// and says their share. It fetches nothing, evaluates nothing, and sets
// every name from the data as text, never as markup. The page's
// Content-Security-Policy allows this script alone, by its hash.
(function () {
  "use strict";
  var block = document.getElementById("pgscale-data");
  if (!block) return;
  var data;
  try {
    data = JSON.parse(block.textContent);
  } catch (e) {
    return;
  }
  document.documentElement.classList.add("js");
  var NS = "http://www.w3.org/2000/svg";
  var W = 1000, ROW = 17, CHAR = 6.6;
  var graphs = {};
  (data.profiles || []).forEach(function (p) { graphs[p.id] = { p: p, diff: false }; });
  (data.flame_diffs || []).forEach(function (d) { graphs[d.id] = { p: d, diff: true }; });

  var tip = document.createElement("div");
  tip.className = "flame-tip";
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  document.body.appendChild(tip);

  function rgb(r, g, b) { return "rgb(" + (r | 0) + "," + (g | 0) + "," + (b | 0) + ")"; }

  // fnv is FNV-1a of a name, so a function keeps its shade everywhere.
  function fnv(s) {
    var h = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h;
  }

  // fill is warm for the server's own code, blue for the kernel; in a
  // differential graph red where the count per transaction grew, blue
  // where it shrank, the deeper the larger up to 25%, pale where the
  // change is not one to read (the page's data says which).
  function fill(f, diff) {
    if (diff) {
      if (f.depth === 0 || !f.significant) return "rgb(225,225,222)";
      var d = f.change === null || f.change === undefined ? 1 : f.change; // null: the baseline had no such box
      var l = 0.1 + 0.9 * Math.min(1, Math.abs(d) / 0.25);
      return d > 0 ? rgb(240 - 20 * l, 215 - 160 * l, 210 - 160 * l) : rgb(210 - 160 * l, 220 - 120 * l, 240 - 10 * l);
    }
    var k = (fnv(f.name) % 1000) / 1000;
    if (f.depth === 0) return "rgb(200,200,200)";
    if (f.lib === "kernel") return rgb(110 + 40 * k, 160 + 40 * k, 225);
    if (f.lib === "postgres") return rgb(230, 110 + 90 * k, 50 + 30 * k);
    return rgb(215, 190 + 40 * k, 70 + 40 * k);
  }

  function pct(x) { return (100 * x).toFixed(x > 0 && x < 0.01 ? 2 : 1) + "%"; }

  function count(n) { return n.toLocaleString("en-US"); }

  // per is a count per transaction with the digits its size needs.
  function per(x) {
    var a = Math.abs(x);
    return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
  }

  // fit is as much of a name as fits a box w units wide.
  function fit(name, w) {
    var n = Math.floor((w - 6) / CHAR);
    if (n < 3) return "";
    return name.length > n ? name.slice(0, n - 1) + "\u2026" : name;
  }

  function make(host) {
    var g = graphs[host.getAttribute("data-flame")];
    if (!g || !g.p.frames || !g.p.frames.length) return;
    var p = g.p, diff = g.diff, frames = p.frames, total = frames[0].value;
    var unit = p.unit || "samples";
    var depth = p.depth || 1;

    var bar = document.createElement("div");
    bar.className = "flame-bar";
    var search = document.createElement("input");
    search.type = "search";
    search.placeholder = "Search a function";
    search.setAttribute("aria-label", "search a function in " + p.label);
    var reset = document.createElement("button");
    reset.type = "button";
    reset.textContent = "Reset zoom";
    reset.disabled = true;
    var status = document.createElement("span");
    status.className = "flame-status";
    status.setAttribute("aria-live", "polite");
    bar.appendChild(search);
    bar.appendChild(reset);
    bar.appendChild(status);

    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", (diff ? "differential flame graph: " : "flame graph: ") + p.label);
    svg.setAttribute("viewBox", "0 0 " + W + " " + depth * ROW);
    svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    var boxes = frames.map(function (f, i) {
      var e = document.createElementNS(NS, "g");
      e.setAttribute("data-i", String(i));
      var r = document.createElementNS(NS, "rect");
      r.setAttribute("y", String(f.depth * ROW));
      r.setAttribute("height", "16");
      r.setAttribute("fill", fill(f, diff));
      var t = document.createElementNS(NS, "text");
      t.setAttribute("y", String(f.depth * ROW));
      t.setAttribute("dx", "3");
      t.setAttribute("dy", "12");
      e.appendChild(r);
      e.appendChild(t);
      svg.appendChild(e);
      return { e: e, r: r, t: t, f: f };
    });
    host.appendChild(bar);
    host.appendChild(svg);

    var zoom = null; // the frame zoomed into, null for the root
    function layout() {
      var z = zoom === null ? frames[0] : frames[zoom];
      boxes.forEach(function (b) {
        var f = b.f, x = 0, w = W, show = true;
        if (f.depth >= z.depth && f.start >= z.start && f.start + f.value <= z.start + z.value) {
          x = ((f.start - z.start) / z.value) * W;
          w = (f.value / z.value) * W;
        } else if (!(f.depth < z.depth && f.start <= z.start && f.start + f.value >= z.start + z.value)) {
          show = false; // neither below the zoomed frame nor one of its callers
        }
        b.e.style.display = show ? "" : "none";
        if (!show) return;
        b.r.setAttribute("x", x.toFixed(2));
        b.r.setAttribute("width", Math.max(w, 0.5).toFixed(2));
        b.t.setAttribute("x", x.toFixed(2));
        b.t.textContent = fit(f.name, w);
      });
      reset.disabled = zoom === null;
    }

    function describe(f) {
      var lines = [f.name];
      if (diff) {
        var what = p.unit || "samples";
        if (f.candidate_per_txn !== null && f.candidate_per_txn !== undefined) {
          lines.push(p.candidate + ": " + per(f.candidate_per_txn) + " " + what + " a transaction; " + p.baseline + ": " + per(f.baseline_per_txn));
          var c = f.change === null || f.change === undefined ? "new" : (f.change >= 0 ? "+" : "") + (100 * f.change).toFixed(1) + "%";
          var dt = f.candidate_per_txn - f.baseline_per_txn;
          lines.push((dt >= 0 ? "+" : "") + per(dt) + " a transaction (" + c + ")" + (f.depth > 0 && !f.significant ? ", not drawn as changed" : ""));
        }
        lines.push(p.candidate + ": " + pct(f.candidate_share) + " of its " + what + "; " + p.baseline + ": " + pct(f.baseline_share));
        lines.push(count(f.value) + " of " + p.candidate + "'s " + what + " with its callees, " + count(f.self || 0) + " in the function itself");
      } else {
        lines.push(count(f.value) + " " + unit + " with its callees (" + pct(f.value / total) + ")");
        lines.push(count(f.self || 0) + " in the function itself (" + pct((f.self || 0) / total) + ")");
        if (zoom !== null) lines.push(pct(f.value / frames[zoom].value) + " of the frame zoomed into");
      }
      if (f.lib) lines.push("[" + f.lib + "]");
      return lines.join("\n");
    }

    function frameOf(ev) {
      var e = ev.target.closest ? ev.target.closest("g[data-i]") : null;
      return e ? Number(e.getAttribute("data-i")) : -1;
    }
    svg.addEventListener("mousemove", function (ev) {
      var i = frameOf(ev);
      if (i < 0) {
        tip.hidden = true;
        return;
      }
      tip.textContent = describe(frames[i]);
      tip.hidden = false;
      var x = ev.pageX + 14, y = ev.pageY + 14;
      var room = document.documentElement.clientWidth + window.scrollX - tip.offsetWidth - 8;
      tip.style.left = Math.max(window.scrollX, Math.min(x, room)) + "px";
      tip.style.top = y + "px";
    });
    svg.addEventListener("mouseleave", function () { tip.hidden = true; });
    svg.addEventListener("click", function (ev) {
      var i = frameOf(ev);
      if (i < 0) return;
      zoom = i === 0 || i === zoom ? null : i;
      layout();
    });
    reset.addEventListener("click", function () {
      zoom = null;
      layout();
    });
    search.addEventListener("input", function () {
      var term = search.value.trim().toLowerCase();
      var n = 0, covered = [], sum = 0;
      boxes.forEach(function (b) {
        var hit = term !== "" && b.f.name.toLowerCase().indexOf(term) >= 0;
        b.e.classList.toggle("match", hit);
        if (!hit) return;
        n++;
        // A match inside another match's box is counted once.
        var f = b.f, inside = covered.some(function (c) { return f.start >= c[0] && f.start + f.value <= c[1]; });
        if (!inside) {
          covered.push([f.start, f.start + f.value]);
          sum += f.value;
        }
      });
      status.textContent = term === "" ? "" : n + (n === 1 ? " frame matches" : " frames match") + ", " + pct(sum / total) + " of the " + unit;
      host.setAttribute("data-matches", String(n));
    });
    layout();
  }

  var hosts = document.querySelectorAll("div.flamegraph[data-flame]");
  for (var i = 0; i < hosts.length; i++) make(hosts[i]);
})();
