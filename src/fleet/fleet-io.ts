import { existsSync, readdirSync, readFileSync } from 'node:fs';

/**
 * The file reads the registry and its indexes make, passed in so a test can count them
 * (the budget check and admission must not read finished agents' records). Writes go
 * straight to node:fs: they are few and not what grows with the fleet's history.
 */
export interface FleetIo {
  readFile(path: string): string;
  readdir(path: string): string[];
  exists(path: string): boolean;
}

export const nodeIo: FleetIo = {
  readFile: (path) => readFileSync(path, 'utf8'),
  readdir: (path) => readdirSync(path),
  exists: (path) => existsSync(path),
};
