import {
  access,
  close,
  fsync,
  link as fsLink,
  mkdir,
  open,
  rename as fsRename,
  unlink as fsUnlink,
  write,
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
export const openExcl = (path: string): Promise<number> => call<number>((done) => open(path, 'wx', 0o644, done));
export const openRead = (path: string): Promise<number> => call<number>((done) => open(path, 'r', done));
export const fsyncFd = (fd: number): Promise<void> => call((done) => fsync(fd, done));
export const closeFd = (fd: number): Promise<void> => call((done) => close(fd, done));
export const link = (from: string, to: string): Promise<void> => call((done) => fsLink(from, to, done));
export const unlink = (path: string): Promise<void> => call((done) => fsUnlink(path, done));
export const rename = (from: string, to: string): Promise<void> => call((done) => fsRename(from, to, done));
export const mkdirp = (path: string): Promise<void> =>
  call((done) => mkdir(path, { recursive: true }, (err) => done(err)));
export const exists = (path: string): Promise<boolean> =>
  new Promise((resolve) => access(path, (err) => resolve(!err)));

export async function writeAll(fd: number, data: Buffer): Promise<void> {
  for (let off = 0; off < data.length;)
    off += await call<number>((done) => write(fd, data, off, data.length - off, null, done));
}
