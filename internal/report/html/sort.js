// pgscale's sortable tables: a click on a header of a table.sortable
// sorts its body by that column, a second click reverses it. A cell's
// data-v, where it has one, is the number it is sorted by; otherwise its
// text, as a number when it reads as one. Rows only move: nothing is
// written into the table, and nothing is fetched or evaluated.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // key is what a cell sorts by: a number when it has one, else its text.
  function key(td) {
    var v = td.getAttribute("data-v");
    if (v !== null) return v === "" ? NaN : Number(v);
    var t = td.textContent.trim();
    var n = parseFloat(t.replace(/[−–]/g, "-").replace(/[ ,]/g, ""));
    return isNaN(n) || !/^[-+−–]?[\d.]/.test(t) ? t.toLowerCase() : n;
  }

  // compare orders numbers before text and NaN (no value) last.
  function compare(a, b) {
    var na = typeof a === "number", nb = typeof b === "number";
    if (na && nb) {
      if (isNaN(a) || isNaN(b)) return isNaN(a) - isNaN(b);
      return a - b;
    }
    if (na !== nb) return na ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  document.querySelectorAll("table.sortable").forEach(function (table) {
    var head = table.tHead, body = table.tBodies[0];
    if (!head || !body) return;
    var ths = head.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      th.classList.add("sort");
      th.tabIndex = 0;
      th.title = "sort by this column";
      function sort() {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        Array.prototype.forEach.call(ths, function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        var rows = Array.prototype.map.call(body.rows, function (tr, i) { return { tr: tr, k: key(tr.cells[col]), i: i }; });
        rows.sort(function (a, b) {
          var c = compare(a.k, b.k);
          // NaN stays last either way; equal keys keep their order.
          if (typeof a.k === "number" && typeof b.k === "number" && (isNaN(a.k) || isNaN(b.k))) return c || a.i - b.i;
          return dir * c || a.i - b.i;
        });
        rows.forEach(function (r) { body.appendChild(r.tr); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") {
          ev.preventDefault();
          sort();
        }
      });
    });
  });
})();
