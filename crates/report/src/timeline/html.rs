//! A [`Scene`] as one self-contained HTML page: the SVG of [`super::svg`] inline and a small
//! script that zooms the time axis with the wheel (around the pointer), pans by dragging,
//! resets on a double click, and redraws the tick labels for the window shown. No server,
//! no external URL: the file opens from disk in any browser.
//!
//! A link may open it on a window: `page.html#from=100&to=140` (ms).
//!
//! The script also writes what it drew into `<pre id="summary">` (lanes, legend entries,
//! window shown) so a headless browser's `--dump-dom` can check that the page came alive.

use super::layout::Scene;
use super::svg::{escape, to_svg};

/// The page's script. Screen x of an element at unzoomed x is `X + (x - X) * k + off`.
const SCRIPT: &str = r#"
(function () {
  const svg = document.querySelector('svg');
  const X = +svg.dataset.plotX, W = +svg.dataset.plotW;
  // Absolute ns lose precision in a double past 2^53 (104 days of uptime): fine for a view.
  const F = +svg.dataset.fromNs, T = +svg.dataset.toNs, O = +svg.dataset.originNs;
  const axes = svg.dataset.axes.split(';').map(a => a.split(',').map(Number));
  const time = document.getElementById('time');
  const fixed = document.getElementById('fixed');
  const texts = Array.from(document.querySelectorAll('#time-text text'));
  const NS = 'http://www.w3.org/2000/svg';
  let k = 1, off = 0, drag = null;
  const nsAt = sx => F + ((X + (sx - X - off) / k) - X) / W * (T - F);
  const xAt = ns => X + ((ns - F) / (T - F) * W) * k + off;
  function clamp() { off = Math.min(0, Math.max(W * (1 - k), off)); }
  function ticks() {
    fixed.querySelectorAll('.tick').forEach(e => e.remove());
    const a = nsAt(X) - O, b = nsAt(X + W) - O, raw = (b - a) / 1e6 / 10;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw * 0.999);
    const digits = step >= 1 ? 0 : Math.ceil(-Math.log10(step) - 1e-9);
    for (let ms = Math.ceil(a / 1e6 / step) * step; ms * 1e6 <= b && ms < 1e15; ms += step) {
      const x = xAt(ms * 1e6 + O);
      for (const [top, bottom] of axes) {
        const line = document.createElementNS(NS, 'line');
        for (const [n, v] of [['x1', x], ['x2', x], ['y1', top], ['y2', bottom]]) line.setAttribute(n, v);
        line.setAttribute('stroke', '#d7d7d7'); line.setAttribute('class', 'tick');
        fixed.appendChild(line);
        const label = document.createElementNS(NS, 'text');
        label.setAttribute('x', x); label.setAttribute('y', bottom + 12);
        label.setAttribute('font-size', 11); label.setAttribute('text-anchor', 'middle');
        label.setAttribute('dominant-baseline', 'central'); label.setAttribute('class', 'tick');
        label.textContent = ms.toFixed(digits);
        fixed.appendChild(label);
      }
    }
  }
  function summary() {
    const lanes = JSON.parse(document.getElementById('lanes').textContent);
    const legend = Array.from(document.querySelectorAll('rect.legend')).map(r => r.textContent);
    document.getElementById('summary').textContent = JSON.stringify({
      lanes: lanes, lane_rects: document.querySelectorAll('rect.lane').length, legend: legend,
      from_ms: (nsAt(X) - O) / 1e6, to_ms: (nsAt(X + W) - O) / 1e6, zoom: k });
  }
  function apply() {
    clamp();
    time.setAttribute('transform', 'translate(' + (X * (1 - k) + off) + ' 0) scale(' + k + ' 1)');
    for (const t of texts) t.setAttribute('x', X + (+t.dataset.x - X) * k + off);
    ticks(); summary();
  }
  const svgX = e => { const p = svg.createSVGPoint(); p.x = e.clientX; p.y = e.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse()).x; };
  svg.addEventListener('wheel', e => {
    e.preventDefault();
    const p = svgX(e), nk = Math.min(1e5, Math.max(1, k * (e.deltaY < 0 ? 1.25 : 0.8)));
    off = p - X - (p - X - off) * nk / k; k = nk; apply();
  }, { passive: false });
  svg.addEventListener('mousedown', e => { drag = svgX(e); });
  window.addEventListener('mousemove', e => { if (drag !== null) { const p = svgX(e); off += p - drag; drag = p; apply(); } });
  window.addEventListener('mouseup', () => { drag = null; });
  svg.addEventListener('dblclick', () => { k = 1; off = 0; apply(); });
  // A link may name the window: page.html#from=100&to=140 (ms).
  const want = new URLSearchParams(location.hash.slice(1));
  const a = O + parseFloat(want.get('from')) * 1e6, b = O + parseFloat(want.get('to')) * 1e6;
  if (a >= F && b <= T && a < b) { k = (T - F) / (b - a); off = -(a - F) / (T - F) * W * k; }
  apply();
})();
"#;

/// The HTML page of `scene`, titled `title`.
pub fn to_html(scene: &Scene, title: &str) -> String {
    let lanes = serde_json::to_string(&scene.lanes).unwrap_or_else(|_| "[]".into());
    // A lane name cannot close the script element it sits in.
    let lanes = lanes.replace("</", "<\\/");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>body{{margin:0;font-family:'DejaVu Sans',sans-serif}}svg{{display:block;cursor:grab;user-select:none}}\
         #summary{{font-size:11px;color:#666;margin:4px 16px;white-space:pre-wrap;word-break:break-all}}</style>\n</head>\n<body>\n{}\
         <pre id=\"summary\"></pre>\n<script type=\"application/json\" id=\"lanes\">{lanes}</script>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        escape(title),
        to_svg(scene),
    )
}
