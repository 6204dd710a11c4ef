#!/usr/bin/env node
/**
 * The `newsmatch` command. Every setting is an environment variable and a flag
 * (`--data-dir` ↔ `DATA_DIR`); the commands are the table in commands.ts. A bad argument is
 * one line on stderr and exit 2; an expected runtime failure one line and exit 1; only a bug
 * prints a stack.
 */
import { ConfigError, loadConfig } from '../config.js';
import { commandHelp, family, findCommand, overview, parseFor } from './command.js';
import { commands } from './commands.js';
import { describeFailure, UsageError } from './output.js';

async function main(argv: string[]): Promise<number> {
  // Everything the service writes (LMDB, segments, the keyword index, the billing journal)
  // holds keys' hashes, ledgers and articles: readable by its owner only.
  process.umask(0o077);
  const { command, words } = findCommand(commands, argv);
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  if (words[0] === 'help' && words[1] !== undefined) return main([...words.slice(1), '--help']);
  if (command === undefined) {
    const members = words[0] === undefined ? [] : family(commands, words[0]);
    if (words[0] === undefined || words[0] === 'help') {
      process.stdout.write(overview(commands));
      return words[0] === undefined && !wantsHelp ? 2 : 0;
    }
    if (members.length === 0) throw new UsageError(`unknown command "${words[0]}"; "newsmatch help" lists them`);
    if (wantsHelp) {
      process.stdout.write(members.map(commandHelp).join('\n'));
      return 0;
    }
    const subs = members.map((c) => c.name.split(' ')[1]).join(', ');
    throw new UsageError(words[1] === undefined ? `${words[0]} takes ${subs}` : `unknown command "${words[0]} ${words[1]}"; ${words[0]} takes ${subs}`);
  }
  const parsed = parseFor(command, argv);
  if (parsed.help) {
    process.stdout.write(commandHelp(command));
    return 0;
  }
  const config = loadConfig(undefined, parsed.flags);
  return command.run({ config, args: parsed.args, opts: parsed.opts });
}

// A closed pipe (`newsmatch usage … | head -1`): the reader has what it wanted; stop quietly,
// as a command killed by SIGPIPE would, but with status 0 (LMDB commits before it prints).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof UsageError || e instanceof ConfigError) {
      process.stderr.write(`newsmatch: ${e.message}\n`);
      process.exitCode = 2;
      return;
    }
    const known = describeFailure(e);
    process.stderr.write(
      known === null
        ? `newsmatch: unexpected error: this is a bug, please report it with what follows\n${(e as Error)?.stack ?? String(e)}\n`
        : `newsmatch: ${known}\n`,
    );
    process.exitCode = 1;
  },
);
