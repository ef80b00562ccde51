// Line charts as inline SVG for self-contained HTML reports: no script, no external file.
//
// A chart maps x and y (linear, or log10 on y) onto a fixed plot area with "nice" ticks (1, 2 or
// 5 × 10^k steps). Every series becomes one <path class="series"> whose d holds its points in
// order (a gap — a non-finite y — starts a new subpath), with the exact values it was drawn from
// in data-x and data-y ("%.17g", space-separated), so a reader (or a test) can check the numbers
// against their source. Marker series draw a circle per point instead of a line; horizontal
// reference lines (e.g. an entropy floor) are dashed and labelled. A series without a point to
// draw is left out, legend included, so no path is empty.
#pragma once

#include <string>
#include <vector>

namespace trail::report {

struct Series {
  std::string name;
  std::vector<double> x, y;
  std::string color = "#1f77b4";
  bool markers = false;  // circles at the points instead of a line
  bool dashed = false;
};

struct ReferenceLine {
  std::string name;
  double y = 0;
  std::string color = "#888888";
};

struct Chart {
  std::string id;  // the <svg> id: chart-<id>
  std::string title, x_label, y_label;
  bool log_y = false;  // non-positive values are left out on a log axis
  std::vector<Series> series;
  std::vector<ReferenceLine> lines;
};

// Tick values covering [lo, hi] with about `target` steps of 1, 2 or 5 × 10^k.
std::vector<double> NiceTicks(double lo, double hi, int target);

// The chart as an <svg> element (width 860, height 300). A chart without any finite point
// renders its frame and the text "no data".
std::string RenderSvg(const Chart& chart);

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string EscapeHtml(const std::string& text);

// A palette of distinguishable colours, cycled by index.
const char* SeriesColor(size_t index);

}  // namespace trail::report
