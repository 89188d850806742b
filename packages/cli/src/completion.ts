import { Argument, type Command, type Option } from "commander";

/**
 * The words that may follow what has been typed: `words` are the arguments after `hb`, the last
 * being the word under the cursor (possibly empty). Subcommands of the deepest command named so
 * far, or its options (and the global ones) when the word starts with "-", or the choices of the
 * option just typed.
 */
export function completions(program: Command, words: string[]): string[] {
  const current = words.at(-1) ?? "";
  let cmd = program;
  for (const w of words.slice(0, -1)) {
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (sub) cmd = sub;
  }
  const previous = words.at(-2);
  const optionsInScope = () => {
    const all: Option[] = [];
    for (let c: Command | null = cmd; c; c = c.parent) all.push(...c.options);
    return all;
  };
  const pending = previous?.startsWith("-")
    ? optionsInScope().find((o) => o.long === previous || o.short === previous)
    : undefined;
  let candidates: string[];
  if (pending?.argChoices) candidates = pending.argChoices;
  else if (pending?.required || pending?.optional) candidates = [];
  else if (current.startsWith("-")) candidates = optionsInScope().flatMap((o) => (o.long ? [o.long] : []));
  else candidates = cmd.commands.filter((c) => !hidden(c)).map((c) => c.name());
  return candidates.filter((c) => c.startsWith(current));
}

// commander keeps a command's hidden flag private; the completion command itself is marked this way.
const hidden = (c: Command) => (c as unknown as { _hidden?: boolean })._hidden === true;

const scripts: Record<string, string> = {
  bash: `# hb completion for bash: eval "$(hb completion bash)"
_hb_completion() {
  local IFS=$'\\n'
  COMPREPLY=($(hb __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _hb_completion hb
`,
  zsh: `#compdef hb
# hb completion for zsh: eval "$(hb completion zsh)"
_hb() {
  local -a candidates
  candidates=("\${(@f)$(hb __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _hb hb
`,
  fish: `# hb completion for fish: hb completion fish | source
complete -c hb -f -a '(hb __complete -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`,
};

export function registerCompletion(program: Command, out: (s: string) => void): void {
  program
    .command("completion")
    .description("print a shell completion script (bash, zsh or fish)")
    .addArgument(new Argument("<shell>", "the shell").choices(Object.keys(scripts)))
    .addHelpText(
      "after",
      '\nbash: eval "$(hb completion bash)"  zsh: eval "$(hb completion zsh)"  fish: hb completion fish | source',
    )
    .action((shell: string) => {
      out(scripts[shell]);
    });

  program
    .command("__complete", { hidden: true })
    .argument("[words...]")
    .allowUnknownOption()
    .helpOption(false)
    .action((words: string[] = []) => {
      const list = completions(program, words.length ? words : [""]);
      if (list.length) out(`${list.join("\n")}\n`);
    });
}
