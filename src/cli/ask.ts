import { createInterface } from 'node:readline';

/** Asks one question on stderr and reads one line of stdin; end of input is the empty answer. */
export function ask(question: string): Promise<string> {
  process.stderr.write(question);
  const rl = createInterface({ input: process.stdin, terminal: false });
  return new Promise((res) => {
    let answered = false;
    rl.once('line', (line) => {
      answered = true;
      rl.close();
      res(line);
    });
    rl.once('close', () => {
      if (!answered) res('');
    });
  });
}
