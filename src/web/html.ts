// HTML built from tagged templates: every interpolated value is escaped unless it is already Html.

export class Html {
  constructor(readonly text: string) {}
  toString(): string { return this.text; }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML element body or a quoted attribute value. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

type Part = Html | string | number | null | undefined | readonly Part[];

function render(value: Part): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value);
}

/** `html\`<p>${name}</p>\`` escapes `name`; nested html`` fragments and arrays of them are kept as they are. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}
