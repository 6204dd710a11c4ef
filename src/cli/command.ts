/**
 * What a command is (one table entry: name, usage, options with defaults, the settings that
 * matter to it, a handler), how its arguments are read, and its `--help`. Every command takes
 * every setting's flag (`--data-dir`), since each is also read from the environment; its own
 * options it declares, and any other is refused: `newsmatch: serve does not take --interval`.
 */
import { parseArgs } from 'node:util';
import { flagName, settings, type Config } from '../config.js';
import { UsageError } from './output.js';

export type SettingKey = keyof typeof settings;

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** The placeholder in help (`--account ID`). */
  value?: string;
  /** What it means; with its default when it has one. */
  doc: string;
  /** Shown in help's default column; absent: none. */
  default?: string;
  required?: boolean;
  /** Checks a value, throwing UsageError (`--credits must be a positive whole number, got -5`). */
  check?: (raw: string, flag: string) => void;
}

export interface Invocation {
  config: Config;
  /** The positionals after the command's name. */
  args: string[];
  /** The command's own options (settings' flags are in `config`). */
  opts: Record<string, string | boolean | string[] | undefined>;
}

export interface Command {
  /** One word (`serve`) or a family and a word (`keys create`). */
  name: string;
  /** Positionals as help shows them: `<file>` required, `[name]` optional. */
  args?: string[];
  summary: string;
  options?: Record<string, OptionSpec>;
  /** Settings help lists for it: 'all' (serve), or the ones that change what it does. */
  settings: SettingKey[] | 'all';
  /** The exit status; -1 keeps the process running (serve). */
  run: (inv: Invocation) => Promise<number>;
}

const HELP: OptionSpec = { type: 'boolean', doc: 'This help.' };
const settingFlags = Object.fromEntries(Object.values(settings).map((s) => [flagName(s.env).slice(2), { type: 'string' as const }]));

/** A setting's default as help shows it. */
export function settingDefault(key: SettingKey): string {
  const d: unknown = settings[key].default;
  if (d === undefined) return 'unset';
  if (Array.isArray(d)) return d.length === 0 ? 'none' : d.join(',');
  return String(d);
}

/** The command `argv` names: the longest table name its first positional words spell. */
export function findCommand(table: Command[], argv: string[]): { command: Command | undefined; words: string[] } {
  // A lenient read over every option any command takes, only to find the positionals.
  const all: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = { ...settingFlags };
  for (const c of table) for (const [n, o] of Object.entries(c.options ?? {})) all[n] = o.multiple ? { type: o.type, multiple: true } : { type: o.type };
  const { positionals } = parseArgs({ args: argv, options: all, allowPositionals: true, strict: false });
  const two = positionals.slice(0, 2).join(' ');
  const command = table.find((c) => c.name === two) ?? table.find((c) => c.name === positionals[0]);
  return { command, words: positionals };
}

/** Every command of a family (`keys` → keys create, list, revoke). */
export const family = (table: Command[], word: string): Command[] => table.filter((c) => c.name.split(' ')[0] === word);

/**
 * Parses `argv` for `command`: its options, every setting flag, `--help`. Values that start
 * with a dash (`--credits -5`) are taken as values, so the option's check answers them.
 */
export function parseFor(
  command: Command,
  argv: string[],
): { help: boolean; args: string[]; opts: Invocation['opts']; flags: Record<string, string | undefined> } {
  const own = command.options ?? {};
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {
    ...settingFlags,
    help: { type: 'boolean', short: 'h' },
  };
  for (const [n, o] of Object.entries(own)) options[n] = o.multiple ? { type: o.type, multiple: true } : { type: o.type };
  // parseArgs refuses `--credits -5` as ambiguous; a number is plainly the value.
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2) : '';
    if (options[name]?.type === 'string' && /^-\d/.test(argv[i + 1] ?? '')) joined.push(`${argv[i]}=${argv[++i]}`);
    else joined.push(argv[i]);
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: joined, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(argumentMessage(command, e as Error & { code?: string }));
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const words = command.name.split(' ').length;
  const args = parsed.positionals.slice(words);
  const flags: Record<string, string | undefined> = {};
  for (const s of Object.values(settings)) flags[s.env] = values[flagName(s.env).slice(2)] as string | undefined;
  const opts: Invocation['opts'] = {};
  for (const name of Object.keys(own)) opts[name] = values[name];
  if (values.help === true) return { help: true, args, opts, flags };

  for (const [name, o] of Object.entries(own)) {
    const v = opts[name];
    if (v === undefined && o.required) throw new UsageError(`${command.name} needs --${name}${o.value ? ` ${o.value}` : ''}`);
    if (o.check) for (const raw of typeof v === 'string' ? [v] : Array.isArray(v) ? v : []) o.check(raw, `--${name}`);
  }
  const required = (command.args ?? []).filter((a) => a.startsWith('<')).length;
  const most = (command.args ?? []).some((a) => a.includes('…')) ? Number.POSITIVE_INFINITY : (command.args ?? []).length;
  if (args.length < required) throw new UsageError(`${command.name} needs ${command.args!.slice(args.length, required).join(' ')}`);
  if (args.length > most)
    throw new UsageError(`${command.name} takes ${most === 0 ? 'no arguments' : (command.args ?? []).join(' ')}; got an extra "${args[most]}"`);
  return { help: false, args, opts, flags };
}

/** parseArgs's complaint in one line of ours. */
function argumentMessage(command: Command, e: Error & { code?: string }): string {
  const flag = /'(-[^' ]+)/.exec(e.message)?.[1] ?? '';
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `${command.name} does not take ${flag}`;
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (/does not take an argument/.test(e.message)) return `${flag} takes no value`;
    return `${flag} needs a value${/ambiguous/.test(e.message) ? ` (one starting with "-" is written ${flag}=-…)` : ''}`;
  }
  return e.message;
}

const wrap = (text: string, width: number, indent: string): string => {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.join(`\n${indent}`);
};

export const synopsis = (c: Command): string => {
  const opts = Object.entries(c.options ?? {}).map(([n, o]) => {
    const text = `--${n}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}${o.multiple ? '…' : ''}`;
    return o.required ? text : `[${text}]`;
  });
  return ['newsmatch', c.name, ...opts, ...(c.args ?? [])].join(' ');
};

/** The settings table: flag, variable, default, meaning. */
export function settingsTable(keys: SettingKey[] | 'all'): string {
  const chosen = keys === 'all' ? (Object.keys(settings) as SettingKey[]) : keys;
  const rows = chosen.map((k) => [flagName(settings[k].env), settings[k].env, settingDefault(k), settings[k].doc.replace(/`/g, '')]);
  rows.unshift(['flag', 'variable', 'default', 'meaning']);
  // A long default (a URL template, a User-Agent) overflows its own row rather than widening all.
  const w = [30, 30, 18].map((most, i) => Math.max(...rows.map((r) => Math.min(r[i].length, most))));
  return rows.map((r) => `  ${r[0].padEnd(w[0])}  ${r[1].padEnd(w[1])}  ${r[2].padEnd(w[2])}  ${r[3]}`).join('\n');
}

/** `newsmatch <command> --help`. */
export function commandHelp(c: Command): string {
  const opts = Object.entries(c.options ?? {}).map(([n, o]) => [`--${n}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`, o.default ?? '', o.doc]);
  opts.push(['-h, --help', '', HELP.doc]);
  const w0 = Math.max(...opts.map((o) => o[0].length));
  const w1 = Math.max(7, ...opts.map((o) => o[1].length));
  const indent = ' '.repeat(w0 + w1 + 6);
  const lines = [
    `Usage: ${synopsis(c)}`,
    '',
    wrap(c.summary, 96, ''),
    '',
    'Options:',
    `  ${'option'.padEnd(w0)}  ${'default'.padEnd(w1)}`,
    ...opts.map((o) => `  ${o[0].padEnd(w0)}  ${(o[1] || '-').padEnd(w1)}  ${wrap(o[2], 72, indent)}`),
  ];
  const s = c.settings === 'all' ? 'all' : c.settings;
  if (s === 'all' || s.length > 0) {
    lines.push('', 'Settings that matter here (flag or environment variable; the flag wins; "newsmatch help" lists all):', settingsTable(s));
  }
  return `${lines.join('\n')}\n`;
}

/** `newsmatch help`: every command in one line or two, then every setting with its default. */
export function overview(table: Command[]): string {
  const required = (c: Command) =>
    Object.entries(c.options ?? {})
      .filter(([, o]) => o.required)
      .map(([n, o]) => ` --${n}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`)
      .join('');
  const rows = table.map((c) => [`${c.name}${required(c)}${c.args?.length ? ` ${c.args.join(' ')}` : ''}`, c.summary]);
  rows.push(['help', 'This text; "newsmatch <command> --help" shows one command with its options and defaults']);
  const w = Math.max(...rows.map((r) => Math.min(r[0].length, 36)));
  const indent = ' '.repeat(w + 4);
  return [
    'Usage: newsmatch <command> [options]',
    '',
    'Commands:',
    ...rows.map((r) => (r[0].length > w ? `  ${r[0]}\n${indent}${wrap(r[1], 76, indent)}` : `  ${r[0].padEnd(w)}  ${wrap(r[1], 76, indent)}`)),
    '',
    'Settings (flag or environment variable; the flag wins; every command takes them):',
    settingsTable('all'),
    '',
  ].join('\n');
}
