import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from '../engine/dashboard/html.ts';
import { formatAge, link } from '../engine/dashboard/pages/layout.ts';
import { safeBack } from '../engine/dashboard/routes.ts';

describe('html templates escape by default', () => {
  it('escapes the five characters that matter in bodies and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
    expect(html`<td title="${'" onmouseover="x'}">${'<script>'}</td>`.text).toBe('<td title="&quot; onmouseover=&quot;x">&lt;script&gt;</td>');
  });

  it('does not escape twice what is already html, joins arrays, renders null, undefined and false as nothing', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}${[html`<br>`, '<', 1]}${null}${undefined}${false}</p>`.text).toBe('<p><b>&lt;i&gt;</b><br>&lt;1</p>');
    expect(html`${raw('<hr>')}`.text).toBe('<hr>');
    expect(html`${new Date('2026-12-01T02:00:00Z')}`.text).toBe('2026-12-01T02:00:00.000Z');
  });
});

describe('page helpers', () => {
  it('ages read at a glance', () => {
    expect([formatAge(12_345), formatAge(185_000), formatAge(3_725_000)]).toEqual(['12.3 s', '3 min 05 s', '1 h 02 min']);
  });

  it('links encode each parameter and drop empty ones', () => {
    expect(link('/jobs', { queue: 'a&b', state: '', id: undefined })).toBe('/jobs?queue=a%26b');
    expect(link('/queues', {})).toBe('/queues');
  });
});

describe('where an action returns to', () => {
  it('a path of this server only: never another host, a full URL, or a header-splitting character', () => {
    expect(safeBack('/dead-letters?queue=mail')).toBe('/dead-letters?queue=mail');
    for (const bad of ['//evil.example/', 'https://evil.example/', '/\\evil.example', '/x\r\nSet-Cookie: a=b', 'queues', null]) expect(safeBack(bad)).toBe('/queues');
  });
});
