// A bar chart of benchmark ratios as plain SVG: one bar per row, a log scale, a line at 1×.

export interface ChartRow {
  label: string;
  group: string;
  ratio: number;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const COLORS: Record<string, string> = { 'UTF-8': '#3b6ea8', sse: '#c2571a', text: '#3d8b48' };
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** Character width estimate for a 11 px sans-serif label (the chart sizes its label column by it). */
const textWidth = (s: string, px: number) => Math.ceil(s.length * px * 0.58);

export function ratioChart(rows: readonly ChartRow[], title: string, subtitle: string): string {
  const bar = 16;
  const gap = 4;
  const labelPx = 11;
  const labelW = Math.max(200, ...rows.map((r) => textWidth(r.label, labelPx))) + 24;
  const plotW = 520;
  const top = 64;
  const left = labelW;
  const height = top + rows.length * (bar + gap) + 40;
  const width = left + plotW + 70;
  const ratios = rows.map((r) => r.ratio).filter((r) => r > 0 && Number.isFinite(r));
  const lo = Math.min(0.25, ...ratios.map((r) => r / 1.2));
  const hi = Math.max(4, ...ratios.map((r) => r * 1.15));
  const lmin = Math.log10(lo);
  const lmax = Math.log10(hi);
  const x = (v: number) => left + ((Math.log10(v) - lmin) / (lmax - lmin)) * plotW;
  const ticks = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].filter((t) => t >= lo && t <= hi);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif">`);
  out.push(`<title>${esc(title)}</title>`);
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="16" y="24" font-size="15" font-weight="600" fill="#111">${esc(title)}</text>`);
  out.push(`<text x="16" y="43" font-size="11" fill="#555">${esc(subtitle)}</text>`);
  const bottom = top + rows.length * (bar + gap);
  for (const t of ticks) {
    const tx = x(t).toFixed(1);
    out.push(`<line x1="${tx}" y1="${top - 6}" x2="${tx}" y2="${bottom}" stroke="${t === 1 ? '#222' : '#ddd'}" stroke-width="${t === 1 ? 1.5 : 1}"/>`);
    out.push(`<text x="${tx}" y="${bottom + 16}" font-size="11" fill="#444" text-anchor="middle">${t}×</text>`);
  }
  out.push(`<text x="${(left + plotW / 2).toFixed(0)}" y="${bottom + 32}" font-size="11" fill="#444" text-anchor="middle">seam ÷ the peer, same run (log scale; right of the 1× line: seam is faster)</text>`);
  rows.forEach((r, i) => {
    const y = top + i * (bar + gap);
    const v = r.ratio > 0 && Number.isFinite(r.ratio) ? r.ratio : lo;
    const x0 = x(1);
    const x1 = x(v);
    const color = COLORS[r.group] ?? '#777';
    out.push(`<text x="${left - 8}" y="${y + bar - 4}" font-size="${labelPx}" fill="#222" text-anchor="end">${esc(r.label)}</text>`);
    out.push(`<rect x="${Math.min(x0, x1).toFixed(1)}" y="${y}" width="${Math.max(1, Math.abs(x1 - x0)).toFixed(1)}" height="${bar}" fill="${color}" opacity="${v >= 1 ? 0.9 : 0.55}"><title>${esc(`${r.label}: ${fmt(r.ratio)}×`)}</title></rect>`);
    out.push(`<text x="${(Math.max(x0, x1) + 4).toFixed(1)}" y="${y + bar - 4}" font-size="11" fill="#222">${fmt(r.ratio)}×</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
