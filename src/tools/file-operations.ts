import { lstat, mkdir, readFile, readlink, realpath, stat, writeFile } from 'node:fs/promises';

/**
 * The file-system operations the file tools need, injected (CONTRIBUTING.md, "A tool")
 * so a tool can be pointed at another back-end (a container, a remote host) without changing it.
 * Errors are Node errors (`code: 'ENOENT'`, …); tools turn them into messages for the model.
 */
export interface FileOperations {
  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, content: string): Promise<void>;
  /** Creates the directory and its parents; no error when it exists. */
  mkdirp(path: string): Promise<void>;
  /** Follows symlinks. */
  stat(path: string): Promise<FileStat>;
  /** Does not follow symlinks. */
  lstat(path: string): Promise<FileStat>;
  realpath(path: string): Promise<string>;
  readlink(path: string): Promise<string>;
  /**
   * Files (not directories) matching `pattern` under `cwd`, as absolute paths, in no set order.
   * Symbolic links are neither followed nor listed: the read scope is checked at the search's
   * root, and a link inside could lead anywhere (docs/security.md, "What reads may touch").
   */
  glob(pattern: string, opts: { cwd: string; ignore: readonly string[] }): Promise<string[]>;
}

export interface FileStat {
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
  size: number;
  mtimeMs: number;
  /** Hard links to the file (default 1 where a back-end cannot tell). */
  nlink?: number;
}

function toStat(s: import('node:fs').Stats): FileStat {
  return {
    isFile: s.isFile(),
    isDirectory: s.isDirectory(),
    isSymbolicLink: s.isSymbolicLink(),
    size: s.size,
    mtimeMs: s.mtimeMs,
    nlink: s.nlink,
  };
}

/** The local file system. */
export const nodeFileOperations: FileOperations = {
  readFile: (path) => readFile(path),
  writeFile: (path, content) => writeFile(path, content, 'utf8'),
  mkdirp: async (path) => {
    await mkdir(path, { recursive: true });
  },
  stat: async (path) => toStat(await stat(path)),
  lstat: async (path) => toStat(await lstat(path)),
  realpath: (path) => realpath(path),
  readlink: (path) => readlink(path),
  // tinyglobby (and picomatch, CommonJS) load on the first search, not at every harness start (§14).
  glob: async (pattern, opts) =>
    (await import('tinyglobby')).glob(pattern, {
      cwd: opts.cwd,
      ignore: [...opts.ignore],
      absolute: true,
      onlyFiles: true,
      dot: true,
      followSymbolicLinks: false,
    }),
};

/** True when the first 8 KiB hold a NUL byte: the heuristic git and ripgrep use for binary files. */
export function looksBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8192).includes(0);
}
