// Dependency-free SVG: vertically stacked grouped bar charts, one group per category.

export interface BarPanel {
  title: string;
  categories: string[];
  series: { name: string; values: (number | undefined)[] }[];
}

const WIDTH = 900;
const PANEL_HEIGHT = 300;
const MARGIN = { top: 50, right: 20, bottom: 40, left: 80 };
const COLORS = ['#4e79a7', '#a0cbe8', '#f28e2b', '#ffbe7d', '#59a14f', '#8cd17d', '#e15759', '#ff9d9a'];

const escapeXml = (s: string) => s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);

function label(v: number): string {
  if (v >= 10_000) return `${(v / 1000).toFixed(0)}k`;
  if (v >= 100) return v.toFixed(0);
  return v >= 10 ? v.toFixed(1) : v.toFixed(2);
}

/** Rounds up to 1, 2 or 5 times a power of ten, so gridlines land on round numbers. */
function niceMax(v: number): number {
  if (v <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].find((m) => m * power >= v) ?? 10) * power;
}

function panel(p: BarPanel, offsetY: number): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
  const top = offsetY + MARGIN.top;
  const max = niceMax(Math.max(0, ...p.series.flatMap((s) => s.values.filter((v): v is number => v !== undefined && Number.isFinite(v)))));
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const out: string[] = [`<text x="${MARGIN.left}" y="${offsetY + 20}" font-size="15" font-weight="bold">${escapeXml(p.title)}</text>`];
  p.series.forEach((s, i) => {
    const lx = MARGIN.left + i * 140;
    out.push(
      `<rect x="${lx}" y="${offsetY + 28}" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/>`,
      `<text x="${lx + 14}" y="${offsetY + 37}" font-size="11">${escapeXml(s.name)}</text>`,
    );
  });
  for (let g = 0; g <= 4; g++) {
    const v = (max * g) / 4;
    out.push(
      `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end">${label(v)}</text>`,
    );
  }
  const groupW = plotW / Math.max(1, p.categories.length);
  const barW = (groupW * 0.8) / Math.max(1, p.series.length);
  p.categories.forEach((cat, c) => {
    const gx = MARGIN.left + c * groupW + groupW * 0.1;
    out.push(`<text x="${gx + groupW * 0.4}" y="${top + plotH + 18}" font-size="12" text-anchor="middle">${escapeXml(cat)}</text>`);
    p.series.forEach((s, i) => {
      const v = s.values[c];
      if (v === undefined || !Number.isFinite(v)) return;
      const x = gx + i * barW;
      out.push(
        `<rect x="${x}" y="${y(v)}" width="${barW - 2}" height="${top + plotH - y(v)}" fill="${COLORS[i % COLORS.length]}"><title>${escapeXml(`${s.name} ${cat}: ${v}`)}</title></rect>`,
        `<text x="${x + barW / 2 - 1}" y="${y(v) - 3}" font-size="10" text-anchor="middle">${label(v)}</text>`,
      );
    });
  });
  return out.join('\n');
}

export function renderSvg(title: string, subtitle: string, panels: BarPanel[]): string {
  const head = 50;
  const height = head + panels.length * PANEL_HEIGHT;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${MARGIN.left}" y="22" font-size="18" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${MARGIN.left}" y="40" font-size="11" fill="#555">${escapeXml(subtitle)}</text>`,
    ...panels.map((p, i) => panel(p, head + i * PANEL_HEIGHT)),
    '</svg>',
  ].join('\n');
}
