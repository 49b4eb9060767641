// The user's color_scheme (Zulip's: 1 automatic, 2 dark, 3 light). The stylesheets keep their
// dark palette under `prefers-color-scheme: dark`, which server-rendered pages use as it is; here
// those rules' condition is set to always or never when the user chose a theme, so the palette
// is written once.
const AUTOMATIC = '(prefers-color-scheme: dark)';
export const COLOR_SCHEMES: [value: number, label: string][] = [
  [1, 'Automatic (as the system)'],
  [2, 'Dark'],
  [3, 'Light'],
];

/** The dark palette's rules, found once (they are the page's own stylesheets, so readable). */
let darkRules: CSSMediaRule[] | null = null;

function findDarkRules(): CSSMediaRule[] {
  const rules: CSSMediaRule[] = [];
  for (const sheet of document.styleSheets) {
    for (const rule of sheet.cssRules) if (rule instanceof CSSMediaRule && rule.media.mediaText.replace(/\s+/g, ' ') === AUTOMATIC) rules.push(rule);
  }
  return rules;
}

export function applyColorScheme(scheme: number): void {
  darkRules ??= findDarkRules();
  const condition = scheme === 2 ? 'all' : scheme === 3 ? 'not all' : AUTOMATIC;
  for (const rule of darkRules) rule.media.mediaText = condition;
  // Form controls and scrollbars follow too.
  document.documentElement.style.colorScheme = scheme === 2 ? 'dark' : scheme === 3 ? 'light' : '';
}
