/**
 * The NATS client's parts a writer uses (§18), imported only through `await import('./client.js')`: a look that
 * writes nothing reads the bus without loading the client (wire.ts, reads.ts). An import of the packages themselves
 * would not do: in the full CLI's bundle a dynamic import of a CommonJS package holds only its `default`.
 */
export { headers } from '@nats-io/transport-node';
export { jetstream, jetstreamManager } from '@nats-io/jetstream';
export { Kvm } from '@nats-io/kv';
