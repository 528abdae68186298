// celltcp view: linked time series (uPlot), a map of cells and UE tracks, a table of runs.
// The data are the JSON object in #celltcp-data, made by celltcp/viewer/__init__.py.
(function () {
  "use strict";
  var V = window.viewer = { errors: [], plots: [], selected: [], ready: false };
  window.addEventListener("error", function (e) { V.errors.push(String(e.message || e)); });

  var D = JSON.parse(document.getElementById("celltcp-data").textContent);
  V.data = D;
  var SVG = "http://www.w3.org/2000/svg";
  // colour-blind-safe cycle (Okabe-Ito and more); beyond it, hues evenly spaced
  var PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
                 "#7F7F7F", "#8C564B", "#9467BD", "#17BECF", "#BCBD22"];
  function color(i, n) {
    if (n <= PALETTE.length) return PALETTE[i % PALETTE.length];
    return "hsl(" + Math.round(330 * i / n) + ",70%,42%)";
  }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in (attrs || {})) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sel(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in (attrs || {})) e.setAttribute(k, attrs[k]);
    return e;
  }
  function runLabel(id) {
    for (var i = 0; i < D.runs.length; i++) if (D.runs[i].id === id) return D.runs[i].label;
    return id;
  }

  // ---- linked plots -------------------------------------------------------------------------
  var syncing = false;
  function onScale(u, key) {
    if (key !== "x" || syncing || !u.scales.x || u.scales.x.min == null) return;
    syncing = true;
    var mn = u.scales.x.min, mx = u.scales.x.max;
    V.xrange = [mn, mx];
    V.plots.forEach(function (p) {
      if (p !== u && (p.scales.x.min !== mn || p.scales.x.max !== mx)) p.setScale("x", { min: mn, max: mx });
    });
    syncing = false;
  }
  function handoversOf(ids) {
    var out = [];
    ids.forEach(function (id) { (D.data[id].handovers || []).forEach(function (h) { out.push(h); }); });
    return out;
  }
  function drawHandovers(ids) {
    var hos = handoversOf(ids);
    return function (u) {
      if (!hos.length) return;
      var ctx = u.ctx, top = u.bbox.top, bottom = u.bbox.top + u.bbox.height;
      ctx.save();
      ctx.strokeStyle = "#c0392b";
      ctx.lineWidth = Math.max(1, devicePixelRatio);
      ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
      hos.forEach(function (h) {
        if (h.t == null) return;
        var x = u.valToPos(h.t, "x", true);
        if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, bottom); ctx.stroke();
      });
      ctx.restore();
    };
  }
  function onCursor(u) {
    var i = u.cursor.idx;
    if (i == null || !u.data[0]) return;
    moveMarkers(u.data[0][i]);
  }
  function panelWidth() {
    var w = document.getElementById("plots").clientWidth;
    return Math.max(360, w - 8);
  }

  function render() {
    var box = document.getElementById("panels");
    V.plots.forEach(function (p) { p.destroy(); });
    V.plots = [];
    box.textContent = "";
    var ids = V.selected.filter(function (id) { return D.data[id]; });
    if (!ids.length) {
      box.appendChild(el("p", { "class": "note" }, "No run with data selected."));
      return;
    }
    var order = [], meta = {};
    ids.forEach(function (id) {
      D.data[id].panels.forEach(function (p) {
        if (!meta[p.id]) { order.push(p.id); meta[p.id] = p; }
      });
    });
    order.forEach(function (pid) {
      var tables = [], labels = [];
      ids.forEach(function (id) {
        var p = D.data[id].panels.filter(function (q) { return q.id === pid; })[0];
        if (!p || !p.t.length) return;
        tables.push([p.t].concat(p.series.map(function (s) { return s.values; })));
        p.series.forEach(function (s) { labels.push(ids.length > 1 ? runLabel(id) + " · " + s.name : s.name); });
      });
      if (!tables.length) return;
      var data = tables.length === 1 ? tables[0] : uPlot.join(tables);
      var m = meta[pid];
      var div = el("div", { "class": "panel", "data-panel": pid });
      div.appendChild(el("h3", {}, m.title + " (" + m.unit + ")"));
      box.appendChild(div);
      var series = [{ label: "time (s)" }].concat(labels.map(function (l, i) {
        return { label: l, stroke: color(i, labels.length), width: 1.2, points: { show: false } };
      }));
      var opts = {
        width: panelWidth(), height: 190,
        scales: { x: { time: false } },
        legend: { show: labels.length <= 16 },
        cursor: { sync: { key: "celltcp" }, drag: { x: true, y: false } },
        series: series,
        axes: [{ label: "time (s)" }, { label: m.unit, size: 60 }],
        hooks: { setScale: [onScale], draw: [drawHandovers(ids)], setCursor: [onCursor] }
      };
      var u = new uPlot(opts, data, div);
      u.celltcpPanel = pid;
      V.plots.push(u);
    });
    if (V.xrange) V.plots[0].setScale("x", { min: V.xrange[0], max: V.xrange[1] });
  }
  V.zoom = function (t0, t1) { if (V.plots.length) V.plots[0].setScale("x", { min: t0, max: t1 }); };

  // ---- map and timeline ---------------------------------------------------------------------
  var markers = [];
  function nearest(ts, t) {
    var lo = 0, hi = ts.length - 1;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (ts[mid] < t) lo = mid + 1; else hi = mid; }
    if (lo > 0 && Math.abs(ts[lo - 1] - t) < Math.abs(ts[lo] - t)) lo -= 1;
    return lo;
  }
  function moveMarkers(t) {
    markers.forEach(function (m) {
      if (!m.track.t.length) return;
      var i = nearest(m.track.t, t);
      m.node.setAttribute("cx", m.track.x[i]);
      m.node.setAttribute("cy", -m.track.y[i]);
    });
  }
  function drawMap(id) {
    var box = document.getElementById("map");
    markers = [];
    var m = id && D.data[id] ? D.data[id].map : null;
    var cells = m ? m.cells.filter(function (c) { return c.x != null && c.y != null; }) : [];
    var tracks = m ? m.tracks : [];
    if (!cells.length && !tracks.length) {
      box.textContent = "";
      box.appendChild(el("p", { "class": "note" }, "No positions in this run (no LTE UEs)."));
      return;
    }
    var xs = [], ys = [];
    cells.forEach(function (c) { xs.push(c.x); ys.push(c.y); });
    tracks.forEach(function (t) {
      t.x.forEach(function (v) { if (v != null) xs.push(v); });
      t.y.forEach(function (v) { if (v != null) ys.push(v); });
    });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    var span = Math.max(x1 - x0, y1 - y0, 100), pad = 0.12 * span;
    // at least 0.6 as high as wide, centred, so a straight track is not a sliver
    var w = (x1 - x0) + 2 * pad + 0.12 * span, h = Math.max((y1 - y0) + 2 * pad, 0.6 * w);  // room for labels
    var cy = (y0 + y1) / 2;
    var svg = sel("svg", { viewBox: [x0 - pad, -(cy + h / 2), w, h].join(" "),
                           "data-cells": cells.length, "data-tracks": tracks.length });
    var s = span / 60;  // marker size in metres
    var gCells = sel("g", { "class": "cells" });
    cells.forEach(function (c) {
      var g = sel("g", { "class": "cell" });
      g.appendChild(sel("path", { d: "M" + c.x + "," + (-c.y - s) + " l" + (-s) + "," + (1.8 * s) + " h" + (2 * s) + " z",
                                  fill: "#333" }));
      if (c.boresight != null) {
        var a = c.boresight * Math.PI / 180, L = span / 12;
        g.appendChild(sel("line", { x1: c.x, y1: -c.y, x2: c.x + L * Math.cos(a), y2: -c.y - L * Math.sin(a),
                                    stroke: "#333", "stroke-width": s / 4 }));
      }
      var tx = sel("text", { x: c.x + 1.3 * s, y: -c.y - 1.3 * s, "font-size": 2.2 * s, fill: "#333" });
      tx.textContent = c.name;
      g.appendChild(tx);
      var title = sel("title"); title.textContent = c.name + " (" + c.x.toFixed(0) + ", " + c.y.toFixed(0) + ") m";
      g.appendChild(title);
      gCells.appendChild(g);
    });
    svg.appendChild(gCells);
    var names = {};
    tracks.forEach(function (t, i) {
      names[t.name] = i;
      var pts = [];
      for (var k = 0; k < t.x.length; k++) if (t.x[k] != null) pts.push(t.x[k] + "," + (-t.y[k]));
      var line = sel("polyline", { points: pts.join(" "), fill: "none", stroke: color(i, tracks.length),
                                   "stroke-width": s / 3, "class": "track", "data-ue": t.name });
      var title = sel("title"); title.textContent = t.name; line.appendChild(title);
      svg.appendChild(line);
    });
    (D.data[id].handovers || []).forEach(function (h) {
      var i = names[h.ue];
      if (i === undefined || h.t == null) return;
      var t = tracks[i], k = nearest(t.t, h.t);
      var mark = sel("circle", { cx: t.x[k], cy: -t.y[k], r: s, fill: "none", stroke: "#c0392b",
                                 "stroke-width": s / 3, "class": "ho-mark" });
      var title = sel("title");
      title.textContent = h.kind + " of " + h.ue + " at " + h.t.toFixed(3) + " s: " + h.source + " → " + h.target;
      mark.appendChild(title);
      svg.appendChild(mark);
    });
    tracks.forEach(function (t, i) {
      if (!t.x.length) return;
      var dot = sel("circle", { cx: t.x[0], cy: -t.y[0], r: 0.9 * s, fill: color(i, tracks.length),
                                "class": "ue-pos", "data-ue": t.name });
      svg.appendChild(dot);
      markers.push({ node: dot, track: t });
    });
    box.textContent = "";
    box.appendChild(svg);
  }
  function drawTimeline(ids) {
    var ul = document.getElementById("timeline");
    ul.textContent = "";
    var hos = handoversOf(ids);
    if (!hos.length) { ul.appendChild(el("li", { "class": "note" }, "none")); return; }
    hos.forEach(function (h) {
      var txt = "t = " + (h.t != null ? h.t.toFixed(3) : "?") + " s · " + h.ue + ": " + h.source + " → " + h.target +
        (h.interruption_ms != null ? " (" + h.interruption_ms + " ms)" : "") + (h.kind !== "handover" ? " [" + h.kind + "]" : "");
      var li = el("li", { "class": "ho" }, txt);
      li.addEventListener("click", function () { if (h.t != null) V.zoom(h.t - 1, h.t + 1); });
      ul.appendChild(li);
    });
  }

  // ---- runs table (sweeps, studies) ---------------------------------------------------------
  function fmt(v) {
    if (v === null || v === undefined) return "–";
    if (typeof v === "number") return Math.abs(v) >= 1e5 ? v.toPrecision(4) : String(v);
    return String(v);
  }
  function select(ids) {
    V.selected = ids;
    document.querySelectorAll("#runs tbody tr").forEach(function (tr) {
      tr.classList.toggle("selected", ids.indexOf(tr.dataset.id) >= 0);
    });
    render();
    drawMap(ids[0]);
    drawTimeline(ids.filter(function (id) { return D.data[id]; }));
  }
  V.select = select;
  function buildTable() {
    if (D.kind === "run") return;
    document.getElementById("runs-box").hidden = false;
    if (D.findings && D.findings.length) {
      var ft = el("table", { id: "findings" });
      ft.appendChild(el("tr")).innerHTML = "<th>finding</th><th>celltcp</th><th>verdict</th>";
      D.findings.forEach(function (f) {
        var tr = el("tr");
        tr.appendChild(el("td", {}, f.paper || f.key));
        tr.appendChild(el("td", {}, f.result || ""));
        var v = f.grade || f.verdict || (f.agrees === true ? "agrees" : f.agrees === false ? "does not agree" : "not evaluated");
        tr.appendChild(el("td", { "class": f.agrees === true ? "yes" : f.agrees === false ? "no" : "" }, String(v)));
        ft.appendChild(tr);
      });
      document.getElementById("findings-box").appendChild(ft);
    }
    var head = el("tr");
    D.columns.forEach(function (c) { head.appendChild(el("th", {}, c)); });
    document.querySelector("#runs thead").appendChild(head);
    var body = document.querySelector("#runs tbody");
    D.runs.forEach(function (r) {
      var tr = el("tr", { "data-id": r.id, "class": r.embedded ? "" : "missing",
                          title: r.embedded ? r.label : r.label + " (no time series embedded)" });
      D.columns.forEach(function (c) { tr.appendChild(el("td", {}, fmt(r.cells[c]))); });
      tr.addEventListener("click", function (ev) {
        if (!r.embedded) return;
        if (ev.ctrlKey || ev.metaKey || ev.shiftKey) {
          var ids = V.selected.slice(), k = ids.indexOf(r.id);
          if (k >= 0 && ids.length > 1) ids.splice(k, 1); else if (k < 0) ids.push(r.id);
          select(ids);
        } else {
          select([r.id]);
        }
      });
      body.appendChild(tr);
    });
    var input = document.getElementById("filter");
    function applyFilter() {
      var toks = input.value.toLowerCase().split(/\s+/).filter(Boolean), shown = 0;
      document.querySelectorAll("#runs tbody tr").forEach(function (tr) {
        var text = tr.textContent.toLowerCase();
        var ok = toks.every(function (t) { return text.indexOf(t) >= 0; });
        tr.hidden = !ok;
        if (ok) shown += 1;
      });
      document.getElementById("count").textContent = shown + " of " + D.runs.length + " runs";
    }
    input.addEventListener("input", applyFilter);
    applyFilter();
  }

  // ---- start --------------------------------------------------------------------------------
  document.getElementById("title").textContent = "celltcp view: " + D.title;
  var n = D.runs.length, emb = D.runs.filter(function (r) { return r.embedded; }).length;
  document.getElementById("subtitle").textContent = D.kind === "run" ? "one run" :
    D.kind + ", " + n + " runs" + (emb < n ? " (time series of " + emb + " embedded)" : "");
  buildTable();
  var first = D.runs.filter(function (r) { return r.embedded; })[0];
  var want = /^#run=(.+)$/.exec(location.hash);
  if (want && D.data[decodeURIComponent(want[1])]) first = { id: decodeURIComponent(want[1]) };
  select(first ? [first.id] : []);
  window.addEventListener("resize", function () {
    V.plots.forEach(function (p) { p.setSize({ width: panelWidth(), height: 190 }); });
  });
  V.ready = true;
  document.body.setAttribute("data-ready", "1");
})();
