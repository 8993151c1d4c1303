import {
  access,
  close,
  closeSync,
  existsSync,
  fsync,
  fsyncSync,
  link as fsLink,
  linkSync,
  mkdir,
  mkdirSync,
  open,
  openSync,
  rename as fsRename,
  unlink as fsUnlink,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';

/**
 * The file calls delivery and claiming make, through fs's callback API rather than fs/promises:
 * a FileHandle costs an fstat and extra promise hops per message, which at thousands of
 * messages a second is most of the user-space time; and loading fs/promises costs every
 * `flotilla send` ~2 ms of its start (§14).
 */
type Callback<T> = (err: NodeJS.ErrnoException | null, value?: T) => void;

function call<T = void>(start: (done: Callback<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => start((err, value) => (err ? reject(err) : resolve(value as T))));
}

/** Opens with O_CREAT|O_EXCL (mode 0644): fails with EEXIST rather than reuse a name. */
const openExcl = (path: string): Promise<number> => call<number>((done) => open(path, 'wx', 0o644, done));
const openRead = (path: string): Promise<number> => call<number>((done) => open(path, 'r', done));
const fsyncFd = (fd: number): Promise<void> => call((done) => fsync(fd, done));
const closeFd = (fd: number): Promise<void> => call((done) => close(fd, done));
export const link = (from: string, to: string): Promise<void> => call((done) => fsLink(from, to, done));
export const unlink = (path: string): Promise<void> => call((done) => fsUnlink(path, done));
export const rename = (from: string, to: string): Promise<void> => call((done) => fsRename(from, to, done));
const mkdirp = (path: string): Promise<void> => call((done) => mkdir(path, { recursive: true }, (err) => done(err)));
export const exists = (path: string): Promise<boolean> =>
  new Promise((resolve) => access(path, (err) => resolve(!err)));

async function writeAll(fd: number, data: Buffer): Promise<void> {
  for (let off = 0; off < data.length;)
    off += await call<number>((done) => write(fd, data, off, data.length - off, null, done));
}

/** The calls a delivery makes (inbox/deliver.ts), passed in: the pool's by default, or blockingCalls. */
export interface FileCalls {
  openExcl(path: string): Promise<number>;
  openRead(path: string): Promise<number>;
  fsyncFd(fd: number): Promise<void>;
  closeFd(fd: number): Promise<void>;
  link(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  mkdirp(path: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  writeAll(fd: number, data: Buffer): Promise<void>;
}

/** Through libuv's thread pool: what a process that does other work meanwhile (a harness) uses. */
export const poolCalls: FileCalls = { openExcl, openRead, fsyncFd, closeFd, link, unlink, mkdirp, exists, writeAll };

/**
 * The same calls, blocking, for a process that waits for its one delivery and does nothing else (`flotilla send`):
 * the thread pool is never started, and no call hops to it and back (~0.5–0.9 ms of CPU of a send, §14).
 */
export const blockingCalls: FileCalls = {
  openExcl: async (path) => openSync(path, 'wx', 0o644),
  openRead: async (path) => openSync(path, 'r'),
  fsyncFd: async (fd) => fsyncSync(fd),
  closeFd: async (fd) => closeSync(fd),
  link: async (from, to) => linkSync(from, to),
  unlink: async (path) => unlinkSync(path),
  mkdirp: async (path) => {
    mkdirSync(path, { recursive: true });
  },
  exists: async (path) => existsSync(path),
  writeAll: async (fd, data) => {
    for (let off = 0; off < data.length;) off += writeSync(fd, data, off, data.length - off, null);
  },
};
