/**
 * Head-and-tail truncation of tool output (§6; CONTRIBUTING.md, "How the code reads" 5). The start of an output says
 * what ran
 * and the end says how it finished, so both are kept and the middle is replaced by one marked
 * line that tells the model how much was cut and how to see it.
 */

export interface Truncated {
  text: string;
  truncated: boolean;
  /** Bytes of UTF-8 in the original text. */
  originalBytes: number;
  omittedBytes: number;
  omittedLines: number;
}

/**
 * Keeps at most about `maxBytes` of `text` (UTF-8), half from the head and half from the tail,
 * cutting at line ends when one is near. `hint` goes into the marker line.
 */
export function truncateHeadTail(text: string, maxBytes: number, hint: string): Truncated {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) {
    return { text, truncated: false, originalBytes: buf.length, omittedBytes: 0, omittedLines: 0 };
  }
  const half = Math.max(1, Math.floor(maxBytes / 2));
  let headEnd = charBoundary(buf, half);
  // Prefer whole lines, unless that would throw away most of the head.
  const nl = buf.lastIndexOf(0x0a, headEnd - 1);
  if (nl >= half / 2) headEnd = nl + 1;

  let tailStart = charBoundary(buf, buf.length - half);
  const nlTail = buf.indexOf(0x0a, tailStart);
  if (nlTail !== -1 && nlTail + 1 <= buf.length - half / 2) tailStart = nlTail + 1;
  if (tailStart < headEnd) tailStart = headEnd;

  const middle = buf.subarray(headEnd, tailStart);
  const omittedLines = countNewlines(middle);
  const head = buf.subarray(0, headEnd).toString('utf8');
  const tail = buf.subarray(tailStart).toString('utf8');
  const sep = head.endsWith('\n') || head === '' ? '' : '\n';
  const marker = `${sep}[… ${middle.length} bytes (${omittedLines} lines) cut from the middle of ${buf.length} bytes. ${hint} …]\n`;
  return {
    text: head + marker + tail,
    truncated: true,
    originalBytes: buf.length,
    omittedBytes: middle.length,
    omittedLines,
  };
}

/** Moves `i` back to the start of a UTF-8 character so no character is split. */
function charBoundary(buf: Buffer, i: number): number {
  let j = Math.min(Math.max(0, i), buf.length);
  while (j > 0 && j < buf.length && ((buf[j] ?? 0) & 0xc0) === 0x80) j--;
  return j;
}

function countNewlines(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n++;
  return n;
}
