#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trail::report {
namespace {

constexpr double kWidth = 860, kHeight = 300;
constexpr double kLeft = 70, kRight = 250, kTop = 30, kBottom = 45;  // margins; legend on the right

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string TickLabel(double v, bool log) {
  char buf[32];
  if (log) {
    std::snprintf(buf, sizeof buf, "%g", std::pow(10.0, v));
  } else {
    std::snprintf(buf, sizeof buf, "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
  }
  return buf;
}

struct Range {
  double lo = INFINITY, hi = -INFINITY;
  void Add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
  void Pad() {  // a flat range gets some height; a range gets 5% headroom
    if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) lo -= 0.5, hi += 0.5;
    const double pad = 0.05 * (hi - lo);
    lo -= pad, hi += pad;
  }
};

double AxisY(double y, bool log) { return log ? (y > 0 ? std::log10(y) : NAN) : y; }

struct Frame {
  Range x, y;
  double X(double v) const {
    return kLeft + (v - x.lo) / (x.hi - x.lo) * (kWidth - kLeft - kRight);
  }
  double Y(double v) const {
    return kHeight - kBottom - (v - y.lo) / (y.hi - y.lo) * (kHeight - kTop - kBottom);
  }
};

// Ticks of a log10 axis over [lo, hi] (in decades): 1, 2 and 5 × 10^k while that gives at most
// ten, else whole decades.
std::vector<double> LogTicks(double lo, double hi) {
  std::vector<double> out;
  for (double k = std::floor(lo); k <= std::ceil(hi); k += 1) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double t = k + std::log10(m);
      if (t >= lo && t <= hi) out.push_back(t);
    }
  }
  if (out.size() <= 10) return out;
  out.clear();
  for (double k = std::ceil(lo); k <= hi; k += 1) out.push_back(k);
  return out;
}

std::string Axes(const Chart& c, const Frame& f) {
  std::string s = "<g class=\"axes\" font-size=\"11\" fill=\"#333\">";
  const double x0 = kLeft, x1 = kWidth - kRight, y0 = kHeight - kBottom, y1 = kTop;
  s += "<rect x=\"" + Px(x0) + "\" y=\"" + Px(y1) + "\" width=\"" + Px(x1 - x0) + "\" height=\"" +
       Px(y0 - y1) + "\" fill=\"none\" stroke=\"#ccc\"/>";
  for (double t : NiceTicks(f.x.lo, f.x.hi, 6)) {
    s += "<text x=\"" + Px(f.X(t)) + "\" y=\"" + Px(y0 + 16) + "\" text-anchor=\"middle\">" +
         TickLabel(t, false) + "</text>";
  }
  const bool log_ticks = c.log_y;
  const std::vector<double> yt =
      log_ticks ? LogTicks(f.y.lo, f.y.hi) : NiceTicks(f.y.lo, f.y.hi, 5);
  for (double t : yt) {
    if (t < f.y.lo || t > f.y.hi) continue;
    s += "<line x1=\"" + Px(x0) + "\" x2=\"" + Px(x1) + "\" y1=\"" + Px(f.Y(t)) + "\" y2=\"" +
         Px(f.Y(t)) + "\" stroke=\"#eee\"/>";
    s += "<text x=\"" + Px(x0 - 6) + "\" y=\"" + Px(f.Y(t) + 4) + "\" text-anchor=\"end\">" +
         TickLabel(t, log_ticks) + "</text>";
  }
  s += "<text x=\"" + Px((x0 + x1) / 2) + "\" y=\"" + Px(kHeight - 8) +
       "\" text-anchor=\"middle\">" + EscapeHtml(c.x_label) + "</text>";
  s += "<text transform=\"translate(14," + Px((y0 + y1) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" +
       EscapeHtml(c.y_label + (c.log_y ? " (log)" : "")) + "</text>";
  return s + "</g>";
}

std::string SeriesPath(const Series& se, const Frame& f, bool log) {
  std::string d, xs, ys, marks;
  bool pen_down = false;
  for (size_t i = 0; i < se.x.size() && i < se.y.size(); ++i) {
    xs += (i ? " " : "") + Num(se.x[i]);
    ys += (i ? " " : "") + Num(se.y[i]);
    const double ay = AxisY(se.y[i], log);
    if (!std::isfinite(se.x[i]) || !std::isfinite(ay)) {
      pen_down = false;
      continue;
    }
    const std::string px = Px(f.X(se.x[i])), py = Px(f.Y(ay));
    if (se.markers) {
      marks += "<circle cx=\"" + px + "\" cy=\"" + py + "\" r=\"3.5\" fill=\"" + se.color + "\"/>";
      d += "M" + px + " " + py;  // the path carries the points too, so it is never empty
    } else {
      d += (pen_down ? "L" : "M") + px + " " + py;
      pen_down = true;
    }
  }
  std::string s = "<path class=\"series\" data-name=\"" + EscapeHtml(se.name) + "\" data-x=\"" +
                  xs + "\" data-y=\"" + ys + "\" d=\"" + d + "\" fill=\"none\" stroke=\"" +
                  se.color + "\" stroke-width=\"" + (se.markers ? "0" : "1.5") + "\"" +
                  (se.dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>";
  return s + marks;
}

bool HasPoint(const Series& se, bool log) {
  for (size_t i = 0; i < se.x.size() && i < se.y.size(); ++i) {
    if (std::isfinite(se.x[i]) && std::isfinite(AxisY(se.y[i], log))) return true;
  }
  return false;
}

std::string Legend(const Chart& c) {
  std::string s = "<g class=\"legend\" font-size=\"11\">";
  double y = kTop + 10;
  auto entry = [&](const std::string& name, const std::string& color, bool dashed) {
    s += "<line x1=\"" + Px(kWidth - kRight + 12) + "\" x2=\"" + Px(kWidth - kRight + 32) +
         "\" y1=\"" + Px(y - 4) + "\" y2=\"" + Px(y - 4) + "\" stroke=\"" + color +
         "\" stroke-width=\"2\"" + (dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>";
    s += "<text x=\"" + Px(kWidth - kRight + 36) + "\" y=\"" + Px(y) + "\">" + EscapeHtml(name) +
         "</text>";
    y += 16;
  };
  for (const Series& se : c.series) {
    if (HasPoint(se, c.log_y)) entry(se.name, se.color, se.dashed);
  }
  for (const ReferenceLine& l : c.lines) entry(l.name, l.color, true);
  return s + "</g>";
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int target) {
  std::vector<double> out;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || target < 1) return out;
  const double raw = (hi - lo) / target;
  const int exponent = static_cast<int>(std::floor(std::log10(raw)));
  const double norm = raw / std::pow(10.0, exponent);
  const double mult = norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10;
  // Tick k is k·mult·10^e, computed as an integer over 10^-e for e < 0 so that it is the
  // double nearest the decimal (0.6, not 3 × 0.2 = 0.6000000000000001).
  const double scale = std::pow(10.0, std::abs(exponent));
  auto tick = [&](double k) { return exponent < 0 ? k * mult / scale : k * mult * scale; };
  const double step = tick(1);
  for (double k = std::ceil(lo / step); tick(k) <= hi + step * 1e-9; k += 1) {
    out.push_back(k == 0 ? 0.0 : tick(k));
  }
  return out;
}

std::string EscapeHtml(const std::string& text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

const char* SeriesColor(size_t index) {
  static const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kPalette[index % (sizeof kPalette / sizeof kPalette[0])];
}

std::string RenderSvg(const Chart& c) {
  Frame f;
  for (const Series& se : c.series) {
    for (size_t i = 0; i < se.x.size() && i < se.y.size(); ++i) {
      if (!std::isfinite(AxisY(se.y[i], c.log_y))) continue;
      f.x.Add(se.x[i]);
      f.y.Add(AxisY(se.y[i], c.log_y));
    }
  }
  for (const ReferenceLine& l : c.lines) f.y.Add(AxisY(l.y, c.log_y));
  std::string s = "<svg id=\"chart-" + EscapeHtml(c.id) +
                  "\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
                  "width=\"" +
                  Px(kWidth) + "\" height=\"" + Px(kHeight) + "\" viewBox=\"0 0 " + Px(kWidth) +
                  " " + Px(kHeight) + "\" role=\"img\">";
  s += "<title>" + EscapeHtml(c.title) + "</title>";
  s += "<text x=\"" + Px(kLeft) + "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" +
       EscapeHtml(c.title) + "</text>";
  if (f.x.empty() || f.y.empty()) {
    return s + "<text x=\"" + Px(kWidth / 2) + "\" y=\"" + Px(kHeight / 2) +
           "\" text-anchor=\"middle\" fill=\"#888\">no data</text></svg>";
  }
  f.x.Pad(), f.y.Pad();
  s += Axes(c, f);
  for (const ReferenceLine& l : c.lines) {
    const double y = f.Y(AxisY(l.y, c.log_y));
    s += "<line class=\"reference\" data-name=\"" + EscapeHtml(l.name) + "\" data-y=\"" + Num(l.y) +
         "\" x1=\"" + Px(kLeft) + "\" x2=\"" + Px(kWidth - kRight) + "\" y1=\"" + Px(y) +
         "\" y2=\"" + Px(y) + "\" stroke=\"" + l.color + "\" stroke-dasharray=\"6 4\"/>";
  }
  for (const Series& se : c.series) {
    if (HasPoint(se, c.log_y)) s += SeriesPath(se, f, c.log_y);
  }
  return s + Legend(c) + "</svg>";
}

}  // namespace trail::report
