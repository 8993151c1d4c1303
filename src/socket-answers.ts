import { createConnection } from 'node:net';

/** Whether a process listens at the Unix socket `address` (a path, or an abstract name starting with NUL). */
export function answers(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection(address);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}
