#pragma once
// The fixed parts of the HTML chart (html.cpp): its style, its controls and the script that
// draws the plan data the page carries. Nothing is fetched: the page works offline.
#include <string_view>

namespace gpuplan::emit {

/// The page fills the window: header, unschedulable units and diagnostics on top, the chart
/// takes the rest, and the page itself never scrolls.
constexpr std::string_view kPageStyle =
    R"(html,body{height:100%;margin:0}
body{display:flex;flex-direction:column;font:13px system-ui,'DejaVu Sans',sans-serif;color:#222;background:#fff}
header{padding:8px 12px 4px}
h1{font-size:17px;margin:0 0 2px}
.muted{color:#666;margin:0 0 6px}
#controls{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:center}
#controls input[type=search]{width:22em;padding:3px 6px}
#controls button{padding:2px 8px}
#legend{display:flex;flex-wrap:wrap;gap:2px 12px;margin:6px 0 0;padding:0;list-style:none}
#legend li{cursor:pointer;max-width:100%;overflow-wrap:anywhere}
#legend .swatch{display:inline-block;width:11px;height:11px;border:1px solid #0004;border-radius:2px;margin-right:4px;vertical-align:-1px}
details{margin:0 12px 4px}
details ul{max-height:18vh;overflow:auto;margin:4px 0;padding-left:18px}
details table{display:block;max-height:18vh;overflow:auto;border-collapse:collapse}
td{padding:2px 10px 2px 0;vertical-align:top}
summary{cursor:pointer;font-weight:bold}
.error{color:#c0392b}.warning{color:#b9770e}.note{color:#2471a3}
#chart{flex:1;min-height:240px;position:relative;overflow:hidden;border-top:1px solid #ddd}
#canvas{position:absolute;left:0;top:0;cursor:grab}
#canvas.dragging{cursor:grabbing}
#tip{position:fixed;pointer-events:none;background:#fffef5;border:1px solid #999;border-radius:4px;
padding:6px 9px;white-space:pre;font:12px ui-monospace,'DejaVu Sans Mono',monospace;box-shadow:0 2px 6px #0003}
)";

/// Search, colouring, zoom buttons and the legend the script fills.
constexpr std::string_view kControls =
    R"HTML(<div id="controls">
<input type="search" id="search" placeholder="Search units (label, shard, node); Enter: next match" aria-label="search units">
<span id="matches" class="muted"></span>
<label>Colour by <select id="color-by"><option value="package">package</option><option value="size">size</option></select></label>
<button id="zoom-in" title="zoom in (+)">+</button><button id="zoom-out" title="zoom out (-)">&minus;</button>
<button id="fit" title="fit the plan into the window (0)">Fit</button>
<span class="muted">Drag to pan · Ctrl+wheel zooms time · Shift+wheel zooms lanes · wheel scrolls</span>
</div>
<ul id="legend"></ul>
)HTML";

/// Draws the plan data on the canvas. Marks <body> with data-units (units in the data), data-nodes,
/// data-drawn (units painted in the current view), data-matches (units the search matches)
/// and data-ready; the integration test reads them. "#q=TEXT" in the address searches on load.
constexpr std::string_view kPageScript = R"JS((function () {
  "use strict";
  var data = JSON.parse(document.getElementById("plan-data").textContent);
  var units = data.units, nodes = data.nodes, strings = data.strings;
  var START = 0, END = 1, NODE = 2, PACKAGE = 3, SIZE = 4, ID = 5, NAME = 6, GPUS = 7, NEEDS = 8,
      SOURCE = 9, VRAM = 10, FLAKY = 11, SHARD = 12, SEGMENTS = 13, HELD = 14;
  var GUTTER = 150, AXIS = 46, RIGHT = 12, MAX_ROW = 22;
  var SIZE_COLORS = {small: "#9ad0f5", medium: "#8fd19e", large: "#f7c873", enormous: "#f08a7e"};
  var box = document.getElementById("chart"), canvas = document.getElementById("canvas");
  var ctx = canvas.getContext("2d"), tip = document.getElementById("tip");
  var search = document.getElementById("search"), colorBy = document.getElementById("color-by");
  var width = 0, height = 0;
  var view = {t0: 0, t1: data.end, row: MAX_ROW, scroll: 0};
  var matches = null, matchCount = 0, nextMatch = 0;
  var fitted = true;  // the whole plan is in view: a resized window fits it again

  // Each row's units in start order, for finding the unit under the mouse.
  var rowUnits = [];
  for (var r = 0; r < data.rows; ++r) rowUnits.push([]);
  units.forEach(function (u, i) {
    [u[SEGMENTS], u[HELD] || []].forEach(function (s) {
      for (var k = 0; k < s.length; k += 2)
        for (var row = s[k]; row < s[k] + s[k + 1]; ++row) rowUnits[row].push(i);
    });
  });
  rowUnits.forEach(function (list) { list.sort(function (a, b) { return units[a][START] - units[b][START]; }); });
  var rowNode = new Int32Array(data.rows), rowGpu = new Int32Array(data.rows).fill(-1);
  nodes.forEach(function (n, i) {
    var last = i + 1 < nodes.length ? nodes[i + 1].row : data.rows;
    for (var row = n.row; row < last; ++row) rowNode[row] = i;
    n.lanes.forEach(function (lane) { rowGpu[lane[1]] = lane[0]; });
  });

  function seconds(s) {
    if (!isFinite(s)) return "?";
    if (s < 0) return "-" + seconds(-s);
    if (s < 10 && Math.round(s) !== s) return s.toFixed(1) + "s";
    var t = Math.round(s);
    if (t < 60) return t + "s";
    if (t < 3600) { var m = Math.floor(t / 60), r = t % 60; return m + "m" + (r ? String(r).padStart(2, "0") + "s" : ""); }
    var mins = Math.floor((t + 30) / 60), h = Math.floor(mins / 60), mm = mins % 60;
    return h + "h" + (mm ? String(mm).padStart(2, "0") + "m" : "");
  }
  function tickStep(span, ticks) {
    var steps = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
    for (var i = 0; i < steps.length; ++i) if (span / steps[i] <= ticks) return steps[i];
    return Math.ceil(span / ticks / 86400) * 86400;
  }
  function unitColor(u) {
    if (colorBy.value === "size") return SIZE_COLORS[strings[u[SIZE]]] || "#c8c8c8";
    return data.packages[u[PACKAGE]].color;
  }
  function x(t) { return GUTTER + (t - view.t0) / (view.t1 - view.t0) * (width - GUTTER - RIGHT); }
  function timeAt(px) { return view.t0 + (px - GUTTER) / (width - GUTTER - RIGHT) * (view.t1 - view.t0); }
  function y(row) { return AXIS + row * view.row - view.scroll; }
  function maxScroll() { return Math.max(0, data.rows * view.row - (height - AXIS)); }
  function clamp() {
    var span = Math.min(Math.max(view.t1 - view.t0, 0.05), data.end * 1.5);
    var pad = data.end * 0.25;
    var t0 = Math.min(Math.max(view.t0, -pad), data.end + pad - span);
    view.t0 = t0; view.t1 = t0 + span;
    view.row = Math.min(Math.max(view.row, (height - AXIS) / Math.max(data.rows, 1) * 0.5), 200);
    view.scroll = Math.min(Math.max(view.scroll, 0), maxScroll());
  }
  function fit() {
    fitted = true;
    view.t0 = 0; view.t1 = data.end * 1.02;
    view.row = Math.min(MAX_ROW, (height - AXIS - 2) / Math.max(data.rows, 1));
    view.scroll = 0;
  }
  function resize() {
    var ratio = window.devicePixelRatio || 1;
    width = Math.max(box.clientWidth, GUTTER + 100); height = Math.max(box.clientHeight, AXIS + 40);
    canvas.width = Math.round(width * ratio); canvas.height = Math.round(height * ratio);
    canvas.style.width = width + "px"; canvas.style.height = height + "px";
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  }

  function draw() {
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, width, height);
    var firstRow = Math.max(0, Math.floor(view.scroll / view.row));
    var lastRow = Math.min(data.rows - 1, Math.floor((view.scroll + height - AXIS) / view.row));
    ctx.save();
    ctx.beginPath(); ctx.rect(GUTTER, AXIS, width - GUTTER, height - AXIS); ctx.clip();
    for (var row = firstRow; row <= lastRow; ++row) {  // node headers shaded, lanes striped
      var gpu = rowGpu[row];
      if (gpu < 0 && nodes[rowNode[row]].row === row) ctx.fillStyle = "#e9edf2";
      else if ((rowGpu[row] >= 0 ? gpu : 0) % 2) ctx.fillStyle = "#f6f8fa";
      else continue;
      ctx.fillRect(GUTTER, y(row), width - GUTTER, Math.max(view.row, 0.5));
    }
    var step = tickStep(view.t1 - view.t0, Math.max(2, Math.floor((width - GUTTER) / 90)));
    ctx.strokeStyle = "#ddd"; ctx.lineWidth = 1; ctx.beginPath();
    for (var t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
      var gx = Math.round(x(t)) + 0.5; ctx.moveTo(gx, AXIS); ctx.lineTo(gx, height);
    }
    ctx.stroke();

    var drawn = 0, left = GUTTER, right = width;
    var top = AXIS, bottom = height, labels = view.row >= 11;
    ctx.font = "11px system-ui,'DejaVu Sans',sans-serif"; ctx.textBaseline = "middle";
    for (var i = 0; i < units.length; ++i) {
      var u = units[i];
      if (u[END] < view.t0 || u[START] > view.t1) continue;
      var x0 = x(u[START]), w = Math.max(1, x(u[END]) - x0 - 1);
      if (x0 > right || x0 + w < left) continue;
      var segments = u[SEGMENTS], painted = false;
      var dim = matches && !matches[i];
      // GPUs the unit holds without running on them (it has the whole node): its colour, faint.
      var held = u[HELD] || [];
      for (var m = 0; m < held.length; m += 2) {
        var hy = y(held[m]), hh = held[m + 1] * view.row;
        if (hy > bottom || hy + hh < top) continue;
        var hgap = hh >= 6 ? 2 : 0;
        ctx.globalAlpha = 0.3; ctx.fillStyle = dim ? "#e3e3e3" : unitColor(u);
        ctx.fillRect(x0, hy + hgap / 2, w, Math.max(1, hh - hgap));
        ctx.globalAlpha = 1;
      }
      for (var k = 0; k < segments.length; k += 2) {
        var y0 = y(segments[k]), h = segments[k + 1] * view.row;
        if (y0 > bottom || y0 + h < top) continue;
        var gap = h >= 6 ? 2 : 0;
        ctx.fillStyle = dim ? "#e3e3e3" : unitColor(u);
        ctx.fillRect(x0, y0 + gap / 2, w, Math.max(1, h - gap));
        if (gap && (!matches || !dim)) {
          ctx.strokeStyle = matches ? "#000" : "rgba(0,0,0,.35)";
          ctx.strokeRect(x0 + 0.5, y0 + gap / 2 + 0.5, Math.max(0, w - 1), Math.max(0, h - gap - 1));
        }
        if (labels && w > 30) {
          ctx.save(); ctx.beginPath(); ctx.rect(x0, y0, w - 2, h); ctx.clip();
          ctx.fillStyle = dim ? "#999" : "#222";
          ctx.fillText(u[NAME], Math.max(x0, GUTTER) + 4, y0 + h / 2);
          ctx.restore();
        }
        painted = true;
      }
      if (painted) ++drawn;
    }
    function mark(t, color, dash) {
      var mx = Math.round(x(t)) + 0.5;
      ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.setLineDash(dash);
      ctx.beginPath(); ctx.moveTo(mx, AXIS); ctx.lineTo(mx, height); ctx.stroke();
      ctx.setLineDash([]); ctx.lineWidth = 1;
    }
    if (data.bound > 0) mark(data.bound, "#1e8449", [2, 3]);
    mark(data.makespan, "#c0392b", [6, 3]);
    ctx.restore();

    // Left gutter: node names on their header rows, GPU numbers on their lanes.
    ctx.fillStyle = "#fff"; ctx.fillRect(0, AXIS, GUTTER, height - AXIS);
    ctx.strokeStyle = "#ccc"; ctx.beginPath(); ctx.moveTo(GUTTER - 0.5, AXIS); ctx.lineTo(GUTTER - 0.5, height); ctx.stroke();
    ctx.textBaseline = "middle";
    var shown = -1;
    for (var row2 = firstRow; row2 <= lastRow; ++row2) {
      var n = nodes[rowNode[row2]], yy = y(row2) + view.row / 2;
      var nodeRows = (rowNode[row2] + 1 < nodes.length ? nodes[rowNode[row2] + 1].row : data.rows) - n.row;
      if (rowNode[row2] !== shown && (n.row === row2 || row2 === firstRow) && nodeRows * view.row >= 8) {
        shown = rowNode[row2];
        ctx.font = (nodeRows * view.row >= 13 ? "bold 12px" : "bold 9px") + " system-ui,'DejaVu Sans',sans-serif";
        ctx.fillStyle = "#222"; ctx.textAlign = "left";
        var nameY = Math.max(yy, AXIS + 8);
        ctx.fillText(n.name.length > 20 ? n.name.slice(0, 19) + "…" : n.name, 8, nameY);
        if (view.row >= 11) {
          ctx.font = "11px system-ui,'DejaVu Sans',sans-serif"; ctx.fillStyle = "#666"; ctx.textAlign = "left";
          ctx.fillText(n.units ? n.units + " units, busy until " + seconds(n.busy) : "idle", GUTTER + 6, nameY);
        }
      } else if (rowGpu[row2] >= 0 && view.row >= 9) {
        ctx.font = "11px system-ui,'DejaVu Sans',sans-serif"; ctx.fillStyle = "#555"; ctx.textAlign = "right";
        ctx.fillText("GPU " + rowGpu[row2], GUTTER - 8, yy);
      }
    }
    ctx.textAlign = "left";

    // The time axis stays on top while the lanes scroll under it.
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, width, AXIS);
    ctx.strokeStyle = "#bbb"; ctx.beginPath(); ctx.moveTo(0, AXIS - 0.5); ctx.lineTo(width, AXIS - 0.5); ctx.stroke();
    ctx.font = "11px system-ui,'DejaVu Sans',sans-serif"; ctx.fillStyle = "#555"; ctx.textAlign = "center"; ctx.textBaseline = "alphabetic";
    for (var t2 = Math.ceil(view.t0 / step) * step; t2 <= view.t1; t2 += step) {
      var tx = x(t2);
      if (tx >= GUTTER) ctx.fillText(t2 === 0 ? "0" : seconds(t2), tx, 14);
    }
    function axisMark(t, color, text, row) {
      var mx = x(t);
      if (mx < GUTTER || mx > width) return;
      ctx.fillStyle = color; ctx.beginPath(); ctx.moveTo(mx - 5, AXIS - 7); ctx.lineTo(mx + 5, AXIS - 7); ctx.lineTo(mx, AXIS - 1); ctx.fill();
      ctx.font = "bold 11px system-ui,'DejaVu Sans',sans-serif"; ctx.textAlign = mx > width - 120 ? "right" : "left";
      ctx.fillText(text, mx + (ctx.textAlign === "right" ? -7 : 7), AXIS - 3 - row * 13);
    }
    if (data.bound > 0) axisMark(data.bound, "#1e8449", "lower bound " + seconds(data.bound), 1);
    axisMark(data.makespan, "#c0392b", "makespan " + seconds(data.makespan), 0);
    ctx.textAlign = "left";
    ctx.fillStyle = "#222"; ctx.font = "bold 12px system-ui,'DejaVu Sans',sans-serif";
    ctx.fillText(nodes.length + " nodes", 8, AXIS - 6);

    document.body.setAttribute("data-drawn", String(drawn));
  }

  var pending = false;
  function redraw(keepFit) {
    if (!keepFit) fitted = false;
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; clamp(); draw(); });
  }

  function unitAt(px, py) {
    if (px < GUTTER || py < AXIS) return -1;
    var row = Math.floor((py - AXIS + view.scroll) / view.row);
    if (row < 0 || row >= data.rows) return -1;
    var t = timeAt(px), list = rowUnits[row], lo = 0, hi = list.length - 1, found = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (units[list[mid]][START] <= t) { found = mid; lo = mid + 1; } else hi = mid - 1;
    }
    var slack = (view.t1 - view.t0) / (width - GUTTER) * 2;  // bars are at least a pixel wide
    return found >= 0 && units[list[found]][END] + slack >= t ? list[found] : -1;
  }
  function tooltip(u) {
    var lines = [u[ID]];
    if (u[SHARD]) lines.push(u[SHARD]);
    lines.push(nodes[u[NODE]].name + " · GPU" + (u[GPUS].indexOf(",") >= 0 ? "s " : " ") + u[GPUS]);
    lines.push(seconds(u[START]) + " → " + seconds(u[END]) + " (" + seconds(u[END] - u[START]) + ", " + strings[u[SOURCE]] + ")");
    lines.push("needs " + strings[u[NEEDS]] + " · size " + strings[u[SIZE]]);
    if (u[VRAM] !== null) lines.push("reserves " + u[VRAM] + " MiB per GPU");
    if (u[HELD]) lines.push("holds the whole node: its other GPUs are held, not used");
    if (u[FLAKY]) lines.push("flaky");
    return lines.join("\n");
  }

  function applySearch() {
    var q = search.value.trim().toLowerCase();
    nextMatch = 0;
    if (!q) { matches = null; matchCount = 0; document.getElementById("matches").textContent = ""; }
    else {
      matches = new Uint8Array(units.length); matchCount = 0;
      for (var i = 0; i < units.length; ++i) {
        var u = units[i];
        if (u[ID].toLowerCase().indexOf(q) >= 0 || nodes[u[NODE]].name.toLowerCase().indexOf(q) >= 0) {
          matches[i] = 1; ++matchCount;
        }
      }
      document.getElementById("matches").textContent = matchCount + " of " + units.length + " units match";
    }
    document.body.setAttribute("data-matches", String(matches ? matchCount : units.length));
    redraw(true);
  }
  function showNextMatch() {
    if (!matches || !matchCount) return;
    for (var k = 0; k < units.length; ++k) {
      var i = (nextMatch + k) % units.length;
      if (!matches[i]) continue;
      nextMatch = i + 1;
      var u = units[i], span = Math.min(view.t1 - view.t0, Math.max((u[END] - u[START]) * 8, 10));
      view.t0 = (u[START] + u[END]) / 2 - span / 2; view.t1 = view.t0 + span;
      view.row = Math.max(view.row, 16);
      view.scroll = u[SEGMENTS][0] * view.row - (height - AXIS) / 2;
      redraw();
      return;
    }
  }

  function zoomTime(factor, px) {
    var t = timeAt(px);
    view.t0 = t - (t - view.t0) * factor; view.t1 = t + (view.t1 - t) * factor;
    redraw();
  }
  function zoomRows(factor, py) {
    var anchor = (py - AXIS + view.scroll) / view.row;
    view.row = view.row / factor;
    view.scroll = anchor * view.row - (py - AXIS);
    redraw();
  }

  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    var rect = canvas.getBoundingClientRect(), px = e.clientX - rect.left, py = e.clientY - rect.top;
    var factor = Math.exp(e.deltaY * 0.002);
    if (e.ctrlKey || e.metaKey) zoomTime(factor, px);
    else if (e.shiftKey) zoomRows(factor, py);
    else {
      view.scroll += e.deltaY;
      view.t0 += e.deltaX / (width - GUTTER) * (view.t1 - view.t0);
      view.t1 += e.deltaX / (width - GUTTER) * (view.t1 - view.t0);
      redraw();
    }
  }, {passive: false});
  var drag = null;
  canvas.addEventListener("mousedown", function (e) {
    drag = {x: e.clientX, y: e.clientY, t0: view.t0, t1: view.t1, scroll: view.scroll};
    canvas.classList.add("dragging"); tip.hidden = true;
  });
  window.addEventListener("mouseup", function () { drag = null; canvas.classList.remove("dragging"); });
  window.addEventListener("mousemove", function (e) {
    if (drag) {
      var dt = (e.clientX - drag.x) / (width - GUTTER - RIGHT) * (drag.t1 - drag.t0);
      view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt; view.scroll = drag.scroll - (e.clientY - drag.y);
      redraw();
      return;
    }
    var rect = canvas.getBoundingClientRect();
    var i = e.target === canvas ? unitAt(e.clientX - rect.left, e.clientY - rect.top) : -1;
    if (i < 0) { tip.hidden = true; return; }
    tip.textContent = tooltip(units[i]); tip.hidden = false;
    tip.style.left = Math.max(0, Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8)) + "px";
    tip.style.top = Math.max(0, Math.min(e.clientY + 14, window.innerHeight - tip.offsetHeight - 8)) + "px";
  });
  canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
  window.addEventListener("keydown", function (e) {
    if (e.target === search) { if (e.key === "Enter") showNextMatch(); return; }
    var step = (view.t1 - view.t0) / 10;
    if (e.key === "+" || e.key === "=") zoomTime(0.7, (GUTTER + width) / 2);
    else if (e.key === "-") zoomTime(1 / 0.7, (GUTTER + width) / 2);
    else if (e.key === "0") { fit(); redraw(true); }
    else if (e.key === "ArrowLeft") { view.t0 -= step; view.t1 -= step; redraw(); }
    else if (e.key === "ArrowRight") { view.t0 += step; view.t1 += step; redraw(); }
    else if (e.key === "ArrowUp") { view.scroll -= 3 * view.row; redraw(); }
    else if (e.key === "ArrowDown") { view.scroll += 3 * view.row; redraw(); }
    else if (e.key === "/") { e.preventDefault(); search.focus(); }
  });
  document.getElementById("zoom-in").addEventListener("click", function () { zoomTime(0.7, (GUTTER + width) / 2); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoomTime(1 / 0.7, (GUTTER + width) / 2); });
  document.getElementById("fit").addEventListener("click", function () { fit(); redraw(true); });
  search.addEventListener("input", applySearch);

  // The legend: the packages with the most units (a click searches for one), or the sizes.
  var legend = document.getElementById("legend");
  function fillLegend() {
    legend.textContent = "";
    function item(color, text, query) {
      var li = document.createElement("li"), swatch = document.createElement("span");
      swatch.className = "swatch"; swatch.style.background = color;
      li.appendChild(swatch); li.appendChild(document.createTextNode(text));
      if (query) li.addEventListener("click", function () { search.value = query; applySearch(); });
      legend.appendChild(li);
    }
    if (colorBy.value === "size") {
      var counts = {};
      units.forEach(function (u) { counts[strings[u[SIZE]]] = (counts[strings[u[SIZE]]] || 0) + 1; });
      Object.keys(counts).sort().forEach(function (s) { item(SIZE_COLORS[s] || "#c8c8c8", s + " (" + counts[s] + ")"); });
      return;
    }
    var order = data.packages.slice().sort(function (a, b) { return b.units - a.units || a.name.localeCompare(b.name, undefined, {numeric: true}); });
    var shown = order.slice(0, 12), rest = order.slice(12), restUnits = 0;
    shown.forEach(function (p) { item(p.color, p.name + " (" + p.units + ")", p.name + ":"); });
    rest.forEach(function (p) { restUnits += p.units; });
    if (rest.length) {
      var li = document.createElement("li");
      li.className = "muted"; li.textContent = "and " + rest.length + " more packages (" + restUnits + " units): search to find one";
      legend.appendChild(li);
    }
  }
  colorBy.addEventListener("change", function () { fillLegend(); redraw(true); });
  window.addEventListener("resize", function () {
    resize();
    if (fitted) fit();
    redraw(fitted);
  });

  fillLegend();
  resize();
  fit();
  var hash = /[#&]q=([^&]*)/.exec(location.hash);
  if (hash) search.value = decodeURIComponent(hash[1]);
  applySearch();
  clamp();
  draw();
  document.body.setAttribute("data-units", String(units.length));
  document.body.setAttribute("data-nodes", String(nodes.length));
  document.body.setAttribute("data-ready", "true");
})();
)JS";

}  // namespace gpuplan::emit
