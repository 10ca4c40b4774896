// The Gantt chart as one self-contained HTML page: the SVG chart, hover tooltips, the diagnostics.
#include <fmt/format.h>

#include "emit/chart.hpp"
#include "emit/gantt.hpp"
#include "gpuplan/emit.hpp"

namespace gpuplan {

namespace {

constexpr std::string_view kStyle =
    R"(body{font-family:system-ui,'DejaVu Sans',sans-serif;margin:16px;color:#222;background:#fff}
.chart{overflow-x:auto}
h2{font-size:15px;margin:18px 0 6px 12px}
table{border-collapse:collapse;margin-left:12px;font-size:13px}
td{padding:3px 10px 3px 0;vertical-align:top}
.error{color:#c0392b}.warning{color:#b9770e}.note{color:#2471a3}
#tip{position:fixed;pointer-events:none;background:#fffef5;border:1px solid #999;border-radius:4px;
padding:6px 9px;white-space:pre;font:12px ui-monospace,'DejaVu Sans Mono',monospace;box-shadow:0 2px 6px #0003}
)";

// Moves each bar's <title> into a tooltip that follows the mouse, then marks the page as
// ready with the number of bars (the integration test reads both).
constexpr std::string_view kScript = R"((function () {
  "use strict";
  var tip = document.getElementById("tip");
  var bars = document.querySelectorAll("svg g.bar");
  bars.forEach(function (bar) {
    var title = bar.querySelector("title");
    var text = title ? title.textContent : "";
    if (title) title.remove();
    bar.addEventListener("mousemove", function (event) {
      tip.textContent = text;
      tip.hidden = false;
      var left = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
      tip.style.left = Math.max(0, left) + "px";
      tip.style.top = (event.clientY + 14) + "px";
    });
    bar.addEventListener("mouseleave", function () { tip.hidden = true; });
  });
  document.body.setAttribute("data-bars", String(bars.length));
  document.body.setAttribute("data-ready", "true");
})();
)";

std::string diagnostics(const Plan& plan) {
  if (plan.diagnostics.empty()) return "";
  std::string rows;
  for (const auto& d : plan.diagnostics)
    rows += fmt::format("<tr><td class=\"{0}\">{0}</td><td>{1}</td><td>{2}</td><td>{3}</td></tr>\n",
                        to_string(d.severity), emit::escape(d.label), emit::escape(d.source),
                        emit::escape(d.message));
  return fmt::format("<h2>Diagnostics ({})</h2>\n<table>\n{}</table>\n", plan.diagnostics.size(), rows);
}

}  // namespace

std::string render_html(const Plan& plan) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>gpuplan: {}</title>\n"
      "<style>\n{}</style>\n</head>\n<body>\n<div class=\"chart\">\n{}</div>\n{}"
      "<div id=\"tip\" hidden></div>\n<script>\n{}</script>\n</body>\n</html>\n",
      emit::escape(emit::summary_line(plan)), kStyle, emit::chart_svg(plan), diagnostics(plan), kScript);
}

}  // namespace gpuplan
