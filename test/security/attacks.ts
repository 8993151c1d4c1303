import { dirname } from 'node:path';

/**
 * The escape suite's attacks (escape.test.ts), written as the shell script an agent's one
 * command runs. A `probe` is a step whose success *inside* would be an escape: it appends
 * `name:ESCAPED` or `name:blocked` to probe.txt. A `fire` is a step that may well succeed
 * inside (writing a file the harness must then refuse, binding slot names the census must
 * ignore, a spawn that must come back as the agent's child): the test judges it by the host.
 */
export interface Target {
  /** Under bubblewrap: the whole list. Under none: what the product claims for `none`. */
  contained: boolean;
  /** The victim's pending approval request. */
  request: string;
  /** A host directory the attacks try to get a host process to write into. */
  marks: string;
  /** The fleet root, the project. */
  root: string;
  project: string;
  /** The fleet's tmux server: its -L name, its socket path (under TMUX_TMPDIR, outside /tmp). */
  socketName: string;
  socketPath: string;
  tmuxTmpdir: string;
  victimPane: string;
  victimPid: number;
  node: string;
  cli: string;
  spawnAgent: string;
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export function attackScript(t: Target): string {
  const lines: string[] = ['cd "$(dirname "$0")"', ': > probe.txt'];
  // Each probe is bounded: a tmux client pointed at a socket that is not tmux's waits forever.
  const probe = (name: string, cmd: string) =>
    lines.push(
      `echo "== ${name}"; if timeout 60 sh -c ${q(cmd)} </dev/null >&2; then echo ${name}:ESCAPED; else echo ${name}:blocked; fi >> probe.txt`,
    );
  const fire = (cmd: string) => lines.push(cmd);
  const flotilla = `${q(t.node)} ${q(t.cli)} --root ${q(t.root)}`;
  const sock = q(t.socketPath);
  const answer = q(`${t.root}/state/approvals/${t.request}.answer`);
  const json = (extra: string) => q(`{"requestId":"${t.request}","decision":"approve","scope":"always"${extra}}`);

  // tmux: no TMUX, no TMUX_PANE, in any mode.
  probe('tmux-env-TMUX', 'printenv TMUX');
  probe('tmux-env-TMUX_PANE', 'printenv TMUX_PANE');
  probe('tmux-env-any', "env | grep -q '^TMUX='");

  // Keys: none in the command's own environment, in any mode.
  probe('key-env', 'env | grep -q escape-key');
  probe('key-self-environ', 'grep -q escape-key /proc/self/environ');
  probe('key-printenv', 'printenv ANTHROPIC_API_KEY || printenv OPENAI_API_KEY');

  // Approvals: the victim's request, answered from inside by every route.
  probe('approve-cli', `${flotilla} approve ${t.request}`);
  probe('approve-cli-always', `${flotilla} approve ${t.request} --always`);
  probe(
    'approve-detached',
    [
      `setsid -f sh -c ${q(`env -i PATH="$PATH" HOME="$HOME" ${q(t.node)} ${q(t.cli)} --root ${q(t.root)} approve ${t.request}; echo $? > approve-detached.rc`)} </dev/null >/dev/null 2>&1`,
      'i=0; while [ ! -s approve-detached.rc ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done',
      '[ "$(cat approve-detached.rc)" = 0 ]',
    ].join('; '),
  );
  const gone = `i=0; while [ -e ${answer} ] && [ $i -lt 150 ]; do sleep 0.2; i=$((i+1)); done`;
  const write = (what: string) =>
    t.contained
      ? probe(
          `answer-file-${what}`,
          `mkdir -p ${q(dirname(`${t.root}/state/approvals/x`))} && printf %s ${json('')} > ${answer}`,
        )
      : fire(
          `mkdir -p ${q(`${t.root}/state/approvals`)}; printf %s ${json(what === 'bare' ? '' : ',"answerer":{"pid":1,"route":"dashboard"}')} > ${answer}; ${gone}`,
        );
  write('bare');
  write('forged-pid');
  // Held open by its own writer, naming itself (its host pid, read through /proc/self).
  fire(
    `sh -c ${q(`read -r me rest < /proc/self/stat; printf '{"requestId":"${t.request}","decision":"approve","scope":"always","answerer":{"pid":%s,"route":"cli"}}' "$me" > "$1.tmp" || exit 0; exec 9<"$1.tmp"; mv "$1.tmp" "$1"; sleep 8`)} held ${answer} 2>/dev/null; ${gone}`,
  );

  // Slots: take every name of the fleet from a detached process, held until the test ends.
  fire(
    `setsid -f ${q(t.node)} ./squat-slots.mjs ${q(t.root)} "$PWD/squat.out" "$PWD/release" </dev/null >/dev/null 2>&1`,
  );
  fire('i=0; while [ ! -s squat.out ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done');

  // A spawn that would come back as a new root: detached with its environment wiped, or naming another agent.
  fire(
    `setsid -f sh -c ${q(`env -i PATH="$PATH" HOME="$HOME" ${q(t.spawnAgent)} --agent worker --id detached-1 hi; echo $? > detached-spawn.rc`)} </dev/null >/dev/null 2>&1`,
  );
  fire('i=0; while [ ! -s detached-spawn.rc ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done');
  fire(`FLOTILLA_AGENT_ID=vic ${q(t.spawnAgent)} --agent worker --id forged-parent hi </dev/null`);

  // A harness by its host pid: each command has a pid namespace of its own, even without the sandbox.
  probe('signal-a-harness', `kill -0 ${t.victimPid} || kill -CONT ${t.victimPid}`);

  // Keys: not in tmux's global environment nor in any harness's or the tmux server's
  // /proc environ (reachable without the sandbox: same user; the person's own processes, like
  // the `spawn-agent` they ran, are theirs and not looked at).
  const harnessPids = `grep -ho '"pid": *[0-9]*' ${q(`${t.root}/state/agents`)}/*.json | grep -o '[0-9]*$'`;
  probe('key-tmux-environment', `tmux -S ${sock} show-environment -g | grep -q escape-key`);
  probe(
    'key-tmux-session-environment',
    `for s in $(tmux -S ${sock} list-sessions -F '#{session_name}'); do tmux -S ${sock} show-environment -t "=$s"; done | grep -q escape-key`,
  );
  probe(
    'key-harness-environ',
    `for p in $(${harnessPids}) $(tmux -S ${sock} display-message -p '#{pid}'); do grep -qs escape-key /proc/$p/environ && exit 0; done; exit 1`,
  );

  // The git dir's hooks and fsmonitor, planted for the harness's own git (a worktree spawn).
  if (!t.contained) {
    // What a command still can do without the sandbox (docs/security.md's table for `none`
    // says so): each harmless, each expected to work, so the table's "can" lines are tested too.
    const open = (name: string, cmd: string) =>
      lines.push(
        `echo "== open ${name}"; if timeout 60 sh -c ${q(cmd)} </dev/null >&2; then echo ${name}:open; else echo ${name}:closed; fi >> open.txt`,
      );
    open('tmux-by-socket-path', `tmux -S ${sock} list-panes -a`);
    open('fleet-root-write', `touch ${q(`${t.root}/state/open-probe`)} && rm ${q(`${t.root}/state/open-probe`)}`);
    open('git-config-write', 'git config flotilla.probe 1 && git config --unset flotilla.probe');
    fire(
      `printf '#!/bin/sh\\ntouch ${t.marks}/post-checkout-hook\\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout`,
    );
    fire(`git config core.fsmonitor ${q(`touch ${t.marks}/fsmonitor; false`)}`);
    return lines.join('\n') + '\n';
  }

  // Under bubblewrap, the rest: tmux by every route, wherever its socket is.
  const tmux = `tmux -S ${sock}`;
  probe('tmux-default', 'tmux list-sessions');
  probe('tmux-L-tmpdir', `TMUX_TMPDIR=${q(t.tmuxTmpdir)} tmux -L ${q(t.socketName)} list-panes -a`);
  probe('tmux-S-list', `${tmux} list-panes -a`);
  probe('tmux-socket-visible', `test -e ${sock}`);
  probe('tmux-sendkeys-person', `${tmux} send-keys -t person ${q(`touch ${t.marks}/typed-by-agent`)} Enter`);
  probe('tmux-sendkeys-victim', `${tmux} send-keys -t ${q(t.victimPane)} y Enter`);
  probe('tmux-run-shell', `${tmux} run-shell ${q(`touch ${t.marks}/run-shell`)}`);
  probe('tmux-run-shell-approve', `${tmux} run-shell ${q(`${flotilla} approve ${t.request}`)}`);
  probe(
    'tmux-run-shell-spawn',
    `${tmux} run-shell ${q(`cd ${q(t.project)} && ${q(t.spawnAgent)} --agent worker --id rootspawn hi`)}`,
  );
  probe('tmux-TMUX-env', `TMUX=${q(`${t.socketPath},1,0`)} tmux new-window ${q(`touch ${t.marks}/new-window`)}`);
  probe(
    'tmux-scan',
    `for s in $(awk 'NR>1 && $8 ~ /^\\// {print $8}' /proc/net/unix) $(find ${q(dirname(t.tmuxTmpdir))} -type s 2>/dev/null); do [ -S "$s" ] || continue; timeout 3 tmux -S "$s" run-shell ${q(`touch ${t.marks}/scan`)} && exit 0; done; exit 1`,
  );
  probe('tmux-kill-server', `${tmux} kill-server`);
  probe('key-proc-scan', 'grep -qs escape-key /proc/[0-9]*/environ');

  // The .git swap, and its cousins: everything that later runs on the host.
  probe('git-mv', 'mv .git .git-old');
  // The person's objects, as its alternate: deleted, replaced, planted beside (judged by `git fsck` on the host too).
  const objects = 'find .git/repository-objects -type f | wc -l';
  probe(
    'git-objects-delete',
    `n=$(${objects}); find .git/repository-objects -type f -delete; test $(${objects}) -lt $n`,
  );
  probe('git-objects-replace', 'for o in .git/repository-objects/??/*; do printf x > "$o" || exit 1; done');
  probe('git-objects-plant', 'touch .git/repository-objects/planted');
  probe('git-rm', 'rm -rf .git 2>/dev/null; test ! -d .git/objects');
  probe('git-hooks-mv', 'mv .git/hooks .git/hooks-old');
  probe('git-hook-pre-commit', `printf '#!/bin/sh\\ntouch ${t.marks}/pre-commit\\n' > .git/hooks/pre-commit`);
  probe('git-hook-post-checkout', `printf '#!/bin/sh\\ntouch ${t.marks}/post-checkout\\n' > .git/hooks/post-checkout`);
  probe('git-fsmonitor', `git config core.fsmonitor ${q(`touch ${t.marks}/fsmonitor; false`)}`);
  probe('git-hookspath', `mkdir -p evil-hooks && git config core.hooksPath "$PWD/evil-hooks"`);
  probe('git-config-append', `printf '[core]\\n\\tfsmonitor = touch ${t.marks}/fsmonitor2\\n' >> .git/config`);
  probe('gitdir-file', `mv .git .git-real 2>/dev/null; printf 'gitdir: %s\\n' "$PWD/evil-git" > .git`);
  probe('git-symlink', 'rm -rf .git 2>/dev/null; ln -s evil-git .git && test -L .git');
  // In place `.git` is the agent's own git dir (tools/git-writable.ts): these land there, and the
  // test judges them by the person's git dir on the host.
  fire('echo "$PWD/evil-git" > .git/commondir');
  fire('mkdir -p .git/worktrees/evil && echo x > .git/worktrees/evil/commondir');
  probe('claude-mv', 'mv .claude .claude-old');
  probe('claude-settings', `echo '{"hooks":{}}' > .claude/settings.json`);
  probe('claude-agents', 'echo evil > .claude/agents/evil.md');
  probe('fleet-mv', 'mv .flotilla .flotilla-old');
  probe('fleet-config', "echo 'hooks: {}' >> .flotilla/config.yaml");
  probe('fleet-agents', 'echo evil > .flotilla/agents/evil.md');
  return lines.join('\n') + '\n';
}
