import { existsSync, rmSync } from 'node:fs';
import { audit } from '../audit/audit.js';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import type { SecretGrantView } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { startedByHarness } from '../lifecycle/tool-groups.js';
import { recordSecretDigests } from '../secrets/digests.js';
import { endHolders } from '../secrets/holders.js';
import { secretVarName } from '../secrets/keys.js';
import { holdForRedaction } from '../secrets/redact.js';
import type { SecretRequestOutcome } from '../tools/request-secret.js';
import type { SessionEvent } from './session-types.js';

/**
 * The secrets one harness holds (§11): each granted value in a Buffer for its TTL, lent to
 * shell commands as one environment variable, and wiped on expiry, on `flotilla deny`, or
 * when the agent ends — once no running command holds it. The processes this agent started
 * that still hold it are ended; the audit trail gets key names only.
 */
export interface SecretGrantsOptions {
  layout: Layout;
  config: Pick<Config, 'security'>;
  agentId: string;
  emit: (e: SessionEvent) => void;
  /** The live grants changed (for the registry record). */
  onGrants: (grants: SecretGrantView[]) => void;
  log: Log;
}

interface Grant {
  key: string;
  requestId: string;
  varName: string;
  value: Buffer;
  expiresAt: number;
  timer: NodeJS.Timeout;
  leases: number;
  expired: boolean;
  unhold: () => void;
}

export class SecretGrants {
  private readonly grants = new Map<string, Grant>();
  private revokePoll: NodeJS.Timeout | undefined;

  constructor(private readonly o: SecretGrantsOptions) {}

  /** The live grant of `key` as a request's outcome (`already`), or undefined when none lives. */
  live(key: string): SecretRequestOutcome | undefined {
    const g = this.grants.get(key);
    return g && !g.expired ? this.outcome(g, true) : undefined;
  }

  /**
   * A person approved: holds a copy of the value for `ttlSecs`, or denies when it cannot be registered for redaction.
   */
  add(requestId: string, key: string, a: { value: Buffer; ttlSecs: number; by: string }): SecretRequestOutcome {
    const { o } = this;
    const value = Buffer.alloc(a.value.length);
    a.value.copy(value);
    // Before any command sees it: the fleet redacts it by digest from now on, in every agent,
    // after expiry and in a resumed agent (docs/security-trust.md "Redaction").
    try {
      recordSecretDigests(o.layout, key, value.toString('utf8'));
    } catch (err) {
      value.fill(0);
      audit(o.layout, {
        event: 'secret_denied',
        agent: o.agentId,
        key,
        request: requestId,
        rule: 'digest',
        reason: errorMessage(err),
      });
      return { granted: false, key, reason: `the value could not be registered for redaction: ${errorMessage(err)}` };
    }
    const ttlMs = Math.round(a.ttlSecs * 1000);
    const g: Grant = {
      key,
      requestId,
      varName: secretVarName(key, o.config),
      value,
      expiresAt: Date.now() + ttlMs,
      timer: setTimeout(() => this.end(g, 'secret_expired', `ttl of ${a.ttlSecs} s passed`), ttlMs),
      leases: 0,
      expired: false,
      unhold: holdForRedaction(key, value.toString('utf8')),
    };
    g.timer.unref();
    this.grants.set(key, g);
    audit(o.layout, {
      event: 'secret_granted',
      agent: o.agentId,
      key,
      request: requestId,
      by: a.by,
      ttl_secs: a.ttlSecs,
      var: g.varName,
    });
    o.emit({ type: 'notice', text: `secret '${key}' granted for ${a.ttlSecs} s as $${g.varName} (value hidden)` });
    this.publish();
    this.watchRevokes();
    return this.outcome(g, false);
  }

  /**
   * The live grants as environment variables for one command. Release after the command
   * and its output's redaction: an expired grant is wiped only when no command holds it.
   */
  lease(): { env: Record<string, string>; release: () => void } {
    const held = [...this.grants.values()].filter((g) => !g.expired);
    if (held.length === 0) return { env: {}, release: () => undefined };
    const env: Record<string, string> = {};
    for (const g of held) {
      g.leases++;
      env[g.varName] = g.value.toString('utf8');
    }
    let done = false;
    return {
      env,
      release: () => {
        if (done) return;
        done = true;
        for (const g of held) {
          g.leases--;
          if (g.expired) this.wipe(g);
        }
      },
    };
  }

  /** The agent is ending: every grant is revoked and wiped. */
  revokeAll(why: string): void {
    for (const g of [...this.grants.values()]) this.end(g, 'secret_revoked', why);
    clearInterval(this.revokePoll);
  }

  private outcome(g: Grant, already: boolean): SecretRequestOutcome {
    return {
      granted: true,
      key: g.key,
      varName: g.varName,
      expiresAt: new Date(g.expiresAt).toISOString(),
      ttlSecs: Math.max(0, Math.round((g.expiresAt - Date.now()) / 1000)),
      ...(already ? { already: true } : {}),
    };
  }

  /** Ends a grant: no later command gets it; the buffer is wiped once no running command holds it. */
  private end(g: Grant, event: 'secret_expired' | 'secret_revoked', why: string): void {
    if (g.expired) return;
    g.expired = true;
    clearTimeout(g.timer);
    if (this.grants.get(g.key) === g) this.grants.delete(g.key);
    // Expiry stops handing the value out. A process this agent started that still holds it
    // in its environment (a server started during the grant, a command still running) is
    // ended; anything else holding the same VAR=value (the person's own shells or tmux server
    // when the value came from their environment, another agent) is reported, never signalled.
    const { ended, left } = endHolders(g.varName, g.value, (pid) =>
      startedByHarness(this.o.layout, this.o.agentId, pid),
    );
    for (const h of ended) {
      audit(this.o.layout, {
        event: 'secret_holder_ended',
        agent: this.o.agentId,
        key: g.key,
        request: g.requestId,
        holder_pid: h.pid,
        command: h.command,
      });
      this.o.emit({
        type: 'notice',
        text: `secret '${g.key}': ended process ${h.pid} (${h.command}), which still held it in its environment`,
      });
    }
    for (const h of left) {
      audit(this.o.layout, {
        event: 'secret_holder_left',
        agent: this.o.agentId,
        key: g.key,
        request: g.requestId,
        holder_pid: h.pid,
        command: h.command,
      });
      this.o.emit({
        type: 'notice',
        text: `secret '${g.key}': process ${h.pid} (${h.command}) still holds it in its environment; not started by this agent, so left running`,
      });
    }
    this.wipe(g);
    // The record first: whoever reads the audit line finds the grant already gone.
    this.publish();
    audit(this.o.layout, { event, agent: this.o.agentId, key: g.key, request: g.requestId, reason: why });
    this.o.emit({
      type: 'notice',
      text: `secret '${g.key}' ${event === 'secret_expired' ? 'expired' : 'revoked'}: ${why}`,
    });
  }

  private wipe(g: Grant): void {
    if (!g.expired || g.leases > 0) return;
    g.value.fill(0);
    g.unhold();
  }

  private publish(): void {
    const views = [...this.grants.values()].map((g) => ({
      key: g.key,
      requestId: g.requestId,
      expiresAt: new Date(g.expiresAt).toISOString(),
    }));
    try {
      this.o.onGrants(views);
    } catch (err) {
      this.o.log.warn({ err: errorMessage(err) }, 'could not record secret grants');
    }
    if (views.length === 0) {
      clearInterval(this.revokePoll);
      this.revokePoll = undefined;
    }
  }

  /** While a grant lives, `flotilla deny <request>` revokes it by leaving an empty marker file. */
  private watchRevokes(): void {
    if (this.revokePoll) return;
    this.revokePoll = setInterval(() => {
      for (const g of [...this.grants.values()]) {
        const marker = this.o.layout.secretRevoke(g.requestId);
        if (!existsSync(marker)) continue;
        rmSync(marker, { force: true });
        this.end(g, 'secret_revoked', 'revoked by a person (flotilla deny)');
      }
    }, 200);
    this.revokePoll.unref();
  }
}
