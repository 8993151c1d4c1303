import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';

/**
 * The dashboard's config and definitions, live (config/live.ts, definitions/live.ts): a
 * change is acted on within a second, without a restart. What the dashboard shows of them is
 * a notice above its message line: a config file or definition that no longer loads (kept at
 * its last good version) for as long as it does not load, and what a reload added, changed or
 * removed for a few seconds.
 */
export interface LiveSources {
  config(): Config;
  close(): void;
}

const INFO_MS = 5_000;

export async function liveSources(
  layout: Layout,
  initial: Config,
  show: (notice: string[]) => void,
): Promise<LiveSources> {
  const [{ LiveConfig }, { LiveDefinitions }, { loadDefinitions }, { definitionDirs }] = await Promise.all([
    import('../config/live.js'),
    import('../definitions/live.js'),
    import('../definitions/load.js'),
    import('../definitions/locations.js'),
  ]);
  let info: string | undefined;
  let infoTimer: NodeJS.Timeout | null = null;
  const loaded: { defs?: import('../definitions/live.js').LiveDefinitions } = {};
  const render = (): void => {
    const kept = (loaded.defs?.current.errors ?? []).filter((e) => e.message.includes('— keeping the last good'));
    show([
      ...(config.error ? [`✗ ${config.error}`] : []),
      ...kept.map((e) => `✗ ${e.message.includes(e.path) ? e.message : `${e.path}: ${e.message}`}`),
      ...(info ? [info] : []),
    ]);
  };
  const flashInfo = (text: string): void => {
    info = text;
    if (infoTimer) clearTimeout(infoTimer);
    infoTimer = setTimeout(() => {
      info = undefined;
      render();
    }, INFO_MS);
    infoTimer.unref();
    render();
  };
  const config = new LiveConfig(layout, initial, {
    onChange: (c) => {
      if (c.error) render();
      else flashInfo('config reloaded');
      void loaded.defs?.reload();
    },
  });
  const definitions = await LiveDefinitions.open({
    load: () => loadDefinitions({ layout, config: config.current }),
    folders: definitionDirs(layout).map((d) => d.dir),
    onChange: (c) => {
      const parts = [
        ...(c.added.length ? [`added ${c.added.join(', ')}`] : []),
        ...(c.changed.length ? [`changed ${c.changed.join(', ')}`] : []),
        ...(c.removed.length ? [`removed ${c.removed.join(', ')}`] : []),
      ];
      if (parts.length) flashInfo(`definitions reloaded: ${parts.join('; ')}`);
      else render();
    },
  });
  loaded.defs = definitions;
  return {
    config: () => config.current,
    close: () => {
      config.close();
      definitions.close();
      if (infoTimer) clearTimeout(infoTimer);
    },
  };
}
