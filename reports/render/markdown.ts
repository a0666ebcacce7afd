import type { Block } from './document.ts';

/**
 * Writes the document as GitHub-flavoured markdown. Text outside `code`
 * spans has markdown's active characters escaped, so a queue named
 * `a_b_c` or an error with `*` in it prints as written.
 */
function inline(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/([\\*_<>[\]#|])/g, '\\$1')))
    .join('');
}

function cell(text: string): string {
  // Inside a table a pipe ends the cell even within a code span, and newlines end the row.
  return inline(text).replace(/(?<!\\)\|/g, '\\|').replace(/\n/g, ' ');
}

export function toMarkdown(blocks: Block[]): string {
  const out: string[] = [];
  for (const b of blocks) {
    switch (b.kind) {
      case 'h1':
        out.push(`# ${inline(b.text)}`);
        break;
      case 'h2':
        out.push(`## ${inline(b.text)}`);
        break;
      case 'p':
        out.push(inline(b.text));
        break;
      case 'ul':
        out.push(b.items.map((i) => `- ${inline(i)}`).join('\n'));
        break;
      case 'table': {
        const align = b.header.map((_, i) => (b.numeric?.[i] ? '---:' : '---'));
        out.push([`| ${b.header.map(cell).join(' | ')} |`, `| ${align.join(' | ')} |`, ...b.rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n'));
        break;
      }
      case 'chart':
        out.push(`![${b.chart.title.replace(/[[\]]/g, '')}](${b.chart.file})\n\n${inline(b.chart.caption)}`);
        break;
    }
  }
  return out.join('\n\n') + '\n';
}
