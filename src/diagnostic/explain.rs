//! What each rule is for, in words: when it fires, why it matters, what to do. One entry per
//! [`Code`] (a new code does not compile without one); `docs/diagnostics.md` is generated
//! from these, the code table and the fixtures (`tests/fixtures/check/err/<code>.kdl` and
//! `<code>.fixed.kdl`), and `atomic explain <code>` prints them.

use super::Code;

/// A rule's documentation.
#[derive(Clone, Copy, Debug)]
pub struct Explanation {
    /// When it fires, in full (the code table has the one-line summary).
    pub fires: &'static str,
    /// Why it matters.
    pub why: &'static str,
    /// What to do about it (Markdown paragraphs).
    pub advice: &'static str,
}

impl Code {
    /// The rule's documentation.
    #[must_use]
    #[allow(clippy::too_many_lines)]
    pub fn explanation(self) -> Explanation {
        match self {
            Code::SyntaxError => Explanation {
                fires: r#"The text is not valid KDL v2 at this point: a property without a value, a stray `=`, a node name that cannot start a node, and the like."#,
                why: r#"Nothing after a syntax error can be trusted to mean what it looks like. The parser recovers and keeps checking the rest of the file, so one run shows every problem, but the workflow cannot run until the text is valid."#,
                advice: r#"Read the label: it says what the parser expected at that point."#,
            },
            Code::UnterminatedString => Explanation {
                fires: r#"A quoted string is not closed before the end of its line (or the file). Only multi-line strings (`"""…"""`) may span lines."#,
                why: r#"An unclosed quote swallows everything after it, so the parser would otherwise report confusing errors far from the real mistake; it is reported at the opening quote instead."#,
                advice: r#"Close the string; for text over several lines use a multi-line string `"""` … `"""`."#,
            },
            Code::InvalidEscape => Explanation {
                fires: r#"A `\` escape in a quoted string is not one KDL knows (`\n`, `\t`, `\\`, `\"`, `\u{…}`, … are)."#,
                why: r#"The string would not hold the text you meant. Windows paths and regular expressions are where this usually happens."#,
                advice: r##"Double the backslash (`"C:\\qtemp"`) or use a raw string (`#"C:\qtemp"#`)."##,
            },
            Code::InvalidNumber => Explanation {
                fires: r#"A number literal is malformed (`1.2.3`, `0x`, a stray `_`) or out of range."#,
                why: r#"The value cannot be read at all, so the setting it belongs to is missing from the workflow."#,
                advice: r#"Write a decimal integer, a decimal number (`1.5`, `2e3`), or `0x`/`0o`/`0b` with digits."#,
            },
            Code::UnclosedBlock => Explanation {
                fires: r#"A `{` is never closed by a matching `}`."#,
                why: r#"Everything after the `{` would be read as its children: statements land inside the wrong block. It is reported where the block opens, and the contents are still checked."#,
                advice: r#"Add the missing `}`, usually right before the first line that is indented too little."#,
            },
            Code::UnmatchedBrace => Explanation {
                fires: r#"A `}` has no matching `{`."#,
                why: r#"The brace closes a block early in the reader's eyes but not in the parser's; it is reported and skipped so the rest of the file is still checked."#,
                advice: r#"Remove the extra `}` (or add the `{` it was meant to close)."#,
            },
            Code::InvalidCharacter => Explanation {
                fires: r#"The source holds a character KDL forbids: a control character (the bad example has a literal BEL, U+0007, between `bell` and `here`), a byte-order mark after the start, or a direction-changing mark."#,
                why: r#"Invisible characters make a file read differently from how it looks, which is how "trojan source" tricks hide code; KDL rejects them outright."#,
                advice: r#"Delete the character (your editor may need to show invisibles), or write it as an escape inside a string."#,
            },
            Code::InvalidEncoding => Explanation {
                fires: r#"A file atomic reads is not UTF-8 text: the workflow itself (reported at its first bad byte, with the encoding it looks like: Latin-1/Windows-1252, or UTF-16), or a file it refers to (a called workflow, a schema, a tool file, a discovered definition; reported at the reference, with the line and column of the bad byte). The bad example calls `../support/latin1.kdl`, saved as Latin-1."#,
                why: r#"Read as UTF-8, such a file changes meaning (`é` becomes `�`) or cannot be parsed; guessing an encoding would run something other than what was written."#,
                advice: r#"Save the file as UTF-8 in your editor, or convert it: `iconv -f latin1 -t utf-8 old.kdl > new.kdl`."#,
            },
            Code::UnreadableFile => Explanation {
                fires: r#"A file atomic must read exists but cannot be read: it is a directory, or reading it is not permitted. For a workflow given on the command line (also when it does not exist), `atomic check` exits 3 and reports it in every output format; for a file a workflow refers to, the diagnostic sits on the reference and names the operating system's reason."#,
                why: r#"A check that skips a file it cannot read would say "ok" about something it never looked at."#,
                advice: r#"Point the reference at a file, or give atomic permission to read it (`chmod u+r FILE`)."#,
            },
            Code::MissingWorkflow => Explanation {
                fires: r#"The file has no top-level `workflow` node, or has a second one. A workflow file holds exactly one."#,
                why: r#"Without a `workflow` node there is nothing to run; with two, which one `atomic run` means is ambiguous."#,
                advice: r#"Write `workflow "<name>" { … }`; move a second workflow into its own file and call it with `subgraph`."#,
            },
            Code::UnknownNodeKind => Explanation {
                fires: r#"A statement or declaration inside a block is not a node kind atomic knows (or a node appears outside the `workflow` block)."#,
                why: r#"An unknown statement cannot run; silently skipping it would drop a step of the workflow."#,
                advice: r#"Use one of the kinds listed in the help; the closest one is suggested."#,
            },
            Code::UnknownProperty => Explanation {
                fires: r#"A `key=value` property is not one the node accepts."#,
                why: r#"A misspelled property is a setting that silently does nothing: here the agent would run on the provider's default model."#,
                advice: r#"Fix the name (the closest property is suggested). If the help says it is a child node, write it inside the `{ }` block instead."#,
            },
            Code::UnknownChild => Explanation {
                fires: r#"A child node is not one its parent accepts (or the parent takes no children at all)."#,
                why: r#"The child's setting would be ignored; a misspelled `promt` leaves the agent without the prompt you wrote."#,
                advice: r#"Fix the name (the closest child is suggested), or move it to the parent the help names."#,
            },
            Code::MissingProperty => Explanation {
                fires: r#"A required argument, property or child is missing: an `agent` without its id, a `provider` without `adapter`, an `agent` without a prompt, a `tool` without `run` or `use`, a `wait` without a prompt, `on-error "goto"` without a target, a `command` provider without `command`."#,
                why: r#"The node cannot do its job without it, and there is no sensible default to fall back on."#,
                advice: r#"Add what the help names."#,
            },
            Code::UnexpectedArgument => Explanation {
                fires: r#"A node has more positional arguments than it takes, or a value is given twice (`set` with both a template and `expr=`, `run` with several arguments under `shell=#true`, a target on `on-error` other than `goto`)."#,
                why: r#"An extra argument is usually a property written without its key; it would otherwise be ignored."#,
                advice: r#"Remove the argument, or write it as the property the help suggests."#,
            },
            Code::WrongType => Explanation {
                fires: r#"A value has the wrong KDL type: a string where an integer, number or boolean is expected, or the reverse."#,
                why: r#"KDL keeps `"5"` and `5` apart; guessing would hide mistakes such as `max="five"`."#,
                advice: r#"Write the value as the help shows (numbers and `#true`/`#false` without quotes)."#,
            },
            Code::InvalidValue => Explanation {
                fires: r#"A value is not allowed: not one of an enum's choices, out of range (`max=0`, `warn=1.5`), or a combination that does not apply (`until` with `while`, `as` without `for-each`, `goto-max` without `goto`, `schema` on a non-JSON answer, `max-items` on a non-`append` field, `type` with `schema`, a `context` whose `warn` is above its `act`)."#,
                why: r#"The setting has no meaning as written; picking a default instead would run something other than what the file says."#,
                advice: r#"Use a listed value (the closest is suggested), or remove the setting that does not apply."#,
            },
            Code::DuplicateProperty => Explanation {
                fires: r#"A property is given twice on one node (or a prompt both as `prompt=` and as a child, or an `option`, `env` or `arg` name twice)."#,
                why: r#"Only one value can win, and which one the author meant is unclear."#,
                advice: r#"Keep one; the secondary label shows the first."#,
            },
            Code::DuplicateChild => Explanation {
                fires: r#"A child that may appear once (`retry`, `on-error`, `prompt`, `tools`, `state`, `limits`, …) appears twice."#,
                why: r#"Only one can take effect; the other is a setting that silently does nothing."#,
                advice: r#"Merge them into one."#,
            },
            Code::DuplicateId => Explanation {
                fires: r#"Two nodes share an id, or two inputs, state fields, providers, aliases, env names, choices, subgraph inputs or parallel branches share a name."#,
                why: r#"Ids are how `goto`, `outputs.<id>`, `use=`, run logs and `atomic resume` refer to a node; two nodes with one id make all of those ambiguous."#,
                advice: r#"Rename one; the secondary label shows the first definition."#,
            },
            Code::InvalidId => Explanation {
                fires: r#"A name is not a valid identifier, or a node or provider is named `end` (reserved for `goto="end"`). Node, provider and branch ids use letters, digits, `_` and `-`; state fields, inputs, env names and `as=` names use letters, digits and `_` because templates read them as `state.<name>`."#,
                why: r#"`goto="end"` would be ambiguous, and a field named `test-logs` would read as `state.test - logs` in a template."#,
                advice: r#"Choose another name."#,
            },
            Code::InvalidDuration => Explanation {
                fires: r#"A duration is not `<number><unit>` groups with units `d`, `h`, `m`, `s`, `ms`, largest first."#,
                why: r#"A timeout that cannot be read would leave the node without the limit you meant to give it."#,
                advice: r#"Write e.g. `"10m"`, `"30s"`, `"1m30s"`."#,
            },
            Code::InvalidVersion => Explanation {
                fires: r#"A `version` or `min-atomic-version` is not a semantic version."#,
                why: r#"Versions are compared (by `min-atomic-version` and by discovery); a version that is not semver cannot be ordered."#,
                advice: r#"Write `MAJOR.MINOR.PATCH`, e.g. `"1.2.0"` or `"2.0.0-rc.1"`."#,
            },
            Code::InvalidRegex => Explanation {
                fires: r#"A regular expression (an output's `match=`) does not parse; the label says why."#,
                why: r#"The pattern is applied to the agent's reply at run time: the run would fail after the agent had been paid for."#,
                advice: r##"Fix the pattern (Rust `regex` syntax; in a KDL string a backslash is written `\\`, or use a raw string `#"…"#`)."##,
            },
            Code::InvalidDefault => Explanation {
                fires: r#"A `default=` does not match the declared type (for `array`/`object`, a JSON string is expected), or a required input has a default."#,
                why: r#"The run would start from a value its own declaration says is impossible, and every reader of the field would have to cope with it."#,
                advice: r#"Write a value of the type, e.g. `default="[]"`; leave `default` out to keep a field unset."#,
            },
            Code::IncompatibleVersion => Explanation {
                fires: r#"`min-atomic-version` is newer than the running atomic."#,
                why: r#"The workflow says it needs features this atomic does not have; running it anyway could misread it."#,
                advice: r#"Upgrade atomic, or lower the requirement if the workflow does not need the newer features."#,
            },
            Code::UndefinedNode => Explanation {
                fires: r#"A `goto`, `when`/`otherwise` target, `on-error "goto"` target, `use=` or `session=` names a node id the workflow does not define."#,
                why: r#"The jump has nowhere to go; at run time the workflow would fail at the worst moment, after the work before it."#,
                advice: r#"Use an existing id (the closest is suggested) or `end`. Discovered agents are named `agent:<name>`, `skill:<name>` or `command:<name>`."#,
            },
            Code::UndefinedProvider => Explanation {
                fires: r#"An agent's `provider=` or the workflow's default `provider=` names no declared provider."#,
                why: r#"atomic cannot know which backend, model or key the agent should use."#,
                advice: r#"Declare it with `provider "<name>" adapter="…"`, or fix the name."#,
            },
            Code::UnknownAdapter => Explanation {
                fires: r#"A provider's `adapter=` is not one atomic ships."#,
                why: r#"There is no code to talk to such a backend."#,
                advice: r#"Use one of `anthropic`, `openai`, `claude-code`, `opencode`, `copilot`, `codex`, `gemini`, `acp`, `command`, `replay`, `in-process`."#,
            },
            Code::UndefinedStateField => Explanation {
                fires: r#"An `output`, `set`, subgraph `output` or `on-error` fallback writes a state field that is not declared."#,
                why: r#"State is typed and declared up front; a write to a misspelled field would be lost, and the field meant to receive it would stay empty."#,
                advice: r#"Declare it in `state { field "…" }`, or fix the name."#,
            },
            Code::InvalidUse => Explanation {
                fires: r#"`use=` names a node that is not an agent, the agent itself, or an agent that itself uses another."#,
                why: r#"`use=` copies an agent's settings (provider, model, prompt, tools, outputs); a tool has none of them, and chains of `use` would make it unclear which settings win."#,
                advice: r#"Name an agent node whose own settings are complete."#,
            },
            Code::NotARecoveryNode => Explanation {
                fires: r#"`on-error "goto"` targets a node not marked `recovery=#true` (or `end`)."#,
                why: r#"Marking recovery nodes keeps error paths explicit: only they can read `error`, and a jump into an ordinary step on failure is usually a mistake."#,
                advice: r#"Mark the target with `recovery=#true`; to continue after a failure use `on-error "skip"`."#,
            },
            Code::MissingSubgraph => Explanation {
                fires: r#"A subgraph's `workflow=` file does not exist or cannot be read."#,
                why: r#"The run would fail when it reaches the subgraph, after everything before it has run."#,
                advice: r#"Fix the path (relative to this file), or name a discovered workflow."#,
            },
            Code::SubgraphRecursion => Explanation {
                fires: r#"Following subgraphs from this workflow comes back to a file already on the way (`a.kdl` → `b.kdl` → `a.kdl`). The bad example calls `../support/recurse.kdl`, which calls it back."#,
                why: r#"A recursive chain of subgraphs never ends: each call starts the next."#,
                advice: r#"Put repeated steps in a `loop`; keep subgraph calls a tree."#,
            },
            Code::UnsupportedFeature => Explanation {
                fires: r#"An agent asks its provider for something the adapter cannot do: tools, a permission mode, a system prompt, a resumed session or a turn limit."#,
                why: r#"The setting would be dropped silently: the agent would run without the tools or limits you gave it."#,
                advice: r#"Remove the setting, or use a provider whose adapter supports it (see the adapter table in grammar/README.md)."#,
            },
            Code::WrongModel => Explanation {
                fires: r#"A provider's or agent's `model=` names a model its adapter cannot run — a known model of another vendor (`sonnet` on `codex`) — or is not written as the adapter needs it (OpenCode takes `provider/model`: `anthropic/claude-sonnet-4-5`). After a swap of adapters (`--provider`, or `adapter` in `.atomic/config.kdl`) the model is judged against the adapter swapped to; a known model is carried over in the form the new backend needs, and one it cannot run is reported."#,
                why: r#"The backend would refuse the model at the first call, after everything before it had run."#,
                advice: r#"Write a model the adapter runs (`atomic list models --adapter NAME` lists them), or pass one with `--model` when you swap adapters."#,
            },
            Code::UnknownModel => Explanation {
                fires: r#"A provider's or agent's `model=` is not in atomic's model catalogue for its adapter (`atomic list models`). Adapters that take any model (`openai`, `acp`, `command`) are not judged, nor OpenCode providers other than `anthropic/`, `openai/` and `google/`."#,
                why: r#"A misspelt model fails at the first call; a model newer than the catalogue is fine, so this is a warning: it runs as written."#,
                advice: r#"Fix the spelling (the help names the closest known model), or leave it if the backend knows the model."#,
            },
            Code::ReducerTypeMismatch => Explanation {
                fires: r#"A field's reducer cannot combine values of its type (`sum` on a string, `append` on an object, `and` on a number)."#,
                why: r#"Every write goes through the reducer; the first write would fail the run."#,
                advice: r#"Change the type or the reducer (see the reducer table in grammar/README.md)."#,
            },
            Code::MissingProvider => Explanation {
                fires: r#"An agent has no provider: none on the node, none on its `use` source, no workflow default, and the workflow declares several providers (with exactly one, that one is used) or none."#,
                why: r#"atomic cannot know which backend runs the agent."#,
                advice: r#"Add `provider=` to the agent or the workflow."#,
            },
            Code::UndefinedTool => Explanation {
                fires: r#"A `tool use="<name>"` node, or the `tools` of an agent on an adapter without built-in tools (`anthropic`, `openai`), names a custom tool that no `.atomic/tools/*.kdl` file declares. Custom tools are looked up in the nearest `.atomic/tools/` above the workflow file, then in `~/.atomic/tools/`. The `tools` of `claude-code`, `opencode` and `copilot` agents name those backends' own tools and are not checked."#,
                why: r#"The run would fail when it reached the node or the agent, after everything before it had run."#,
                advice: r#"Fix the name, or declare the tool in `.atomic/tools/<name>.kdl` (see `grammar/README.md`, "Custom tool files")."#,
            },
            Code::UnsupportedCustomTool => Explanation {
                fires: r#"The `tools` of an agent on a CLI adapter (`claude-code`, `opencode`, `copilot`, `gemini`) name a custom tool from `.atomic/tools/`. Those agents' `tools` are the names of the CLI's own tools, and atomic cannot yet hand a custom tool to a CLI (that needs the MCP bridge): only the API adapters (`anthropic`, `openai`) run custom tools for the model."#,
                why: r#"The name would be sent to the CLI as if it were one of its own tools: the CLI refuses it or, worse, ignores it, and the agent runs without the tool the workflow meant it to have."#,
                advice: r#"Give the agent a provider on an API adapter (`anthropic`, `openai`), or run the tool as a `tool use="<name>"` step before or after the agent, or remove it from `tools`."#,
            },
            Code::UnknownToolArgument => Explanation {
                fires: r#"An `arg "<name>" "…"` of a `tool use=` node names no argument of the custom tool (its `argument` children, or the `properties` of its `schema=` file)."#,
                why: r#"The tool would get an input its schema does not allow, and the value meant for a real argument is lost."#,
                advice: r#"Use one of the tool's argument names."#,
            },
            Code::MissingToolArgument => Explanation {
                fires: r#"A `tool use=` node gives no `arg` for an argument the custom tool requires (an `argument` without `required=#false`, or one listed in its schema's `required`)."#,
                why: r#"The tool would run without an input it needs, and fail or do the wrong thing."#,
                advice: r#"Add `arg "<name>" "<template>"` for each required argument."#,
            },
            Code::UnknownDefinition => Explanation {
                fires: r#"A `use="agent:…"`, `skill:…` or `command:…` names nothing that discovery found in the project or the user's home."#,
                why: r#"the agent would run without the role, instructions or prompt the workflow counts on."#,
                advice: r#"Correct the name, or add the definition: agents in `.atomic/agents/`, `.claude/agents/`, `.opencode/agents/` or `.github/agents/`; skills in `<dir>/skills/<name>/SKILL.md`; commands in `.atomic/commands/`, `.claude/commands/` or `opencode.json`, in the project or under `~`. Discovery happens when the workflow is compiled."#,
            },
            Code::UnknownUsePrefix => Explanation {
                fires: r#"A `use=` value has a prefix other than `agent:`, `skill:` or `command:`."#,
                why: r#"atomic cannot tell what kind of definition is meant, so it would find none."#,
                advice: r#"Write `agent:`, `skill:` or `command:`, or no prefix at all to name an agent node of the workflow."#,
            },
            Code::UnknownOption => Explanation {
                fires: r#"An `option "name" value` child names an option its adapter does not read (a misspelling, or an option of another adapter), or an agent sets an option that only its provider may set (`bin`, `pass-env`, `config`…). Every adapter's options, with the kind of value each takes, are listed in one table (`src/ir/adapter.rs`, and docs/providers/); a value of the wrong kind is `wrong-type`."#,
                why: r#"An option nothing reads is silently ignored: the run goes ahead without the setting you wrote, and you find out from its results. atomic also refuses such options when it builds the provider, so this is caught before anything runs."#,
                advice: r#"Fix the name (the help suggests the closest option), or move a provider-only option to the provider."#,
            },
            Code::InvalidDefinition => Explanation {
                fires: r#"A discovered agent, skill or command that the workflow uses has YAML front matter that does not parse, or a field of the wrong shape (the message names the field and what it holds, such as a list for `model`). Every form Claude Code, OpenCode and Copilot document is read: `tools` as `Read, Grep`, a list or OpenCode's map of names to true/false, `allowed-tools`, `aliases`, and `argument-hint` as text even where it is written `[a] [b]`. Broken definitions that no workflow uses are not reported."#,
                why: r#"its model, tools and name cannot be read, so running it would silently differ from what the file says."#,
                advice: r#"Fix the field the message names, between the two `---` lines at the top of the file it names: a mapping of `name`, `description`, `model` (text), `tools` (`Read, Grep`, a list, or a map of names to true/false), `allowed-tools`, `aliases` and `argument-hint`."#,
            },
            Code::UnreachableNode => Explanation {
                fires: r#"No path from the start of the workflow reaches this statement, so it never runs. Error edges count as paths (a `recovery=#true` node reached only through `on-error "goto"` is reachable); only the outermost unreachable statement is reported, and not one already reported by `goto-shadows-next`."#,
                why: r#"Dead steps mislead readers about what the workflow does, and usually mean a jump goes to the wrong place."#,
                advice: r#"Remove the statement, move it, or lead to it with `goto=` or a `decision` route."#,
            },
            Code::NoPathToEnd => Explanation {
                fires: r#"Once a run reaches this statement it can never finish: every way onward leads back into a cycle of unbounded jumps. Reported once per trap, at its first statement, with every jump of the cycle labelled."#,
                why: r#"The run would loop until `max-steps` or its timeout stops it, spending on every turn."#,
                advice: r#"Give the cycle a way out: bound a jump with `goto-max=N` (after N jumps control falls through) or `max=N` on a route, or add a `decision` route to `end` or past the cycle."#,
            },
            Code::MissingOtherwise => Explanation {
                fires: r#"A `decision` has no `otherwise`, so when no `when` holds the run would have nowhere to go."#,
                why: r#"Routing must be total: a run must never stop at a decision because none of its conditions held."#,
                advice: r#"Add `otherwise goto="…"`, or a bare `otherwise` to continue with the next statement."#,
            },
            Code::MissingLoopMax => Explanation {
                fires: r#"A `loop` has no `max`. Every loop must be bounded."#,
                why: r#"An agent that never says "done" would otherwise loop, and spend, forever; with `max` every run has a worst case `atomic check --budget` can compute."#,
                advice: r#"Add `max=N`: reaching it ends the loop (it does not fail)."#,
            },
            Code::UnboundedCycle => Explanation {
                fires: r#"A cycle of `goto`s, routes or `on-error "goto"` jumps passes no bound, so a run could repeat it forever. Every cycle must pass a bounded edge: a `loop`'s back edge, a `goto` with `goto-max=N`, or a route with `max=N`. Reported at the jump that closes the cycle."#,
                why: r#"Like an unbounded loop: nothing but `max-steps` stops the run, and the budget has no worst case."#,
                advice: r#"Add `max=N` to the route or `goto-max=N` to the `goto`, or write the cycle as a `loop … max=N { … }`."#,
            },
            Code::GotoShadowsNext => Explanation {
                fires: r#"A node's `goto=` always fires and the statement after it is reached from nowhere else, so that statement never runs. Not reported for a `goto` with `goto-max=N`, a `goto` naming the next statement, or when the next statement is the target of another jump."#,
                why: r#"The `goto` wins over falling through, but the layout suggests the next statement runs: the file reads differently from how it runs."#,
                advice: r#"Remove the `goto`, move the shadowed statement, or add `goto-max=N`."#,
            },
            Code::EmptyBlock => Explanation {
                fires: r#"A `loop`, `parallel`, `branch` or the workflow itself has no statements."#,
                why: r#"An empty block does nothing; it is usually a leftover or a block whose statements ended up elsewhere."#,
                advice: r#"Add statements, or remove the block."#,
            },
            Code::GotoAcrossParallel => Explanation {
                fires: r#"A `goto`, route, `otherwise` or `on-error "goto"` jumps into or out of a `parallel` branch (including to `end`, or to a sibling branch)."#,
                why: r#"Each branch runs as its own walk from its first statement to the parallel's join; a jump across that boundary has no meaning while the other branches are still running."#,
                advice: r#"Keep jumps inside one branch; to go somewhere after the parallel, put `goto=` on the `parallel` itself or decide after it finishes."#,
            },
            Code::TemplateSyntax => Explanation {
                fires: r#"A template (prompt, command argument, `set` value) or expression (`when`, `until`, `while`, `for-each`, `expr=`) does not parse; reported where minijinja stopped."#,
                why: r#"The run would fail when it reaches the node, after spending whatever came before."#,
                advice: r#"Close the block; conditions are bare expressions (`when "state.ok"`, not `when "{{ state.ok }}"`)."#,
            },
            Code::UndeclaredVariable => Explanation {
                fires: r#"A template or expression reads a name that is not an input, state field, output or run value where it is read (`item`/`index` exist only in a `for-each` body, `error` only in recovery nodes)."#,
                why: r#"An unknown name renders as nothing: the agent gets a prompt with a hole in it, and a condition silently becomes false."#,
                advice: r#"Fix the name (the closest declared one is suggested) or declare it."#,
            },
            Code::UnknownFilter => Explanation {
                fires: r#"A template or expression uses a filter (`x | name`) or a test (`x is name`) that is neither one of minijinja's built-ins nor one atomic adds (`fromjson`). The checker asks the same minijinja the runtime renders with."#,
                why: r#"minijinja looks filters up only when it renders, so the step would fail at run time, after everything before it has run."#,
                advice: r#"Use a built-in filter (see minijinja's filter and test lists), or compute the value another way."#,
            },
            Code::UndefinedOutput => Explanation {
                fires: r#"`outputs.<id>` names no node, or a node that produces no output (`set`, `decision`, `loop`)."#,
                why: r#"The read is always empty, so the prompt or condition is not what it looks like."#,
                advice: r#"Name an `agent`, `tool`, `wait`, `subgraph` or `parallel` (the closest id is suggested); ids with `-` are read as `outputs["re-review"]`."#,
            },
            Code::PossiblyUnset => Explanation {
                fires: r#"A state field without a default, or `outputs.<id>`, is read on a path where it may not have been written yet: a route that jumps past the writer, a `while` loop that ran zero times, a `race` branch that lost, a skipped failure."#,
                why: r#"An unset value renders as nothing, so the agent or condition silently sees a hole on some runs and not others."#,
                advice: r#"Give the field a `default`, write it on every path, or test for it (`{% if state.plan %}`, `state.plan | default("none")`)."#,
            },
            Code::SiblingBranchRead => Explanation {
                fires: r#"A `parallel` branch reads `outputs.<id>` of a node in a sibling branch of the same parallel."#,
                why: r#"Branches run at the same time: whether the sibling has finished is a race, so the read is empty on some runs and not on others."#,
                advice: r#"Read it after the `parallel`, or put both steps in one branch."#,
            },
            Code::ParallelWriteConflict => Explanation {
                fires: r#"Two branches of a `strategy="all"` parallel (or the copies of a `for-each` body) write one field whose reducer replaces the value."#,
                why: r#"The branches finish in any order and the last write wins: the result differs from run to run, and the other branches' work is lost."#,
                advice: r#"Give the field a combining reducer (`append`, `merge`, `sum`, …), or write separate fields."#,
            },
            Code::MissingSchemaFile => Explanation {
                fires: r#"A `schema=` file (of an output, input, state field or JSON answer) does not exist, relative to the workflow's directory."#,
                why: r#"Outputs are validated against the schema at run time: a missing schema fails the run after the agent has already been paid for."#,
                advice: r#"Fix the path, or add the schema file."#,
            },
            Code::InvalidSchema => Explanation {
                fires: r#"A `schema=` file is not JSON, not a valid JSON Schema by its meta-schema (the bad example's `../support/invalid-schema.json` has `"type": "strin"`), or does not compile."#,
                why: r#"A broken schema fails every validation at run time, after the agent has already been paid for."#,
                advice: r#"Fix the schema; the label quotes the validator's complaint."#,
            },
            Code::SubgraphInputMismatch => Explanation {
                fires: r#"A subgraph `input` mapping names no input of the called workflow, misses a required one, or passes a value of the wrong type."#,
                why: r#"The called workflow refuses its inputs when the subgraph starts, after everything before it has run."#,
                advice: r#"Map every required input of the callee by its name (the closest is suggested), with a value of its type."#,
            },
            Code::SubgraphOutputMismatch => Explanation {
                fires: r#"A subgraph `output` mapping reads a field the called workflow does not have, or one whose type differs from the caller's field."#,
                why: r#"The mapping copies nothing, or a value of the wrong type, after the whole subgraph ran."#,
                advice: r#"Name a state field of the called workflow (the closest is suggested) whose type fits."#,
            },
            Code::InvalidAnswerType => Explanation {
                fires: r#"A `wait`'s answer type, choices and auto-approve answer disagree: `yes-no` or `boolean` with choices, `choice` without any, choices that are not values of the type, or an `auto-approve answer=` that is not a choice."#,
                why: r#"The person is offered answers the run will reject, or an unattended run auto-approves with an answer that fails validation and stops the run."#,
                advice: r#"Make the answer type, the choices and `auto-approve answer=` agree."#,
            },
            Code::TypeMismatch => Explanation {
                fires: r#"A value whose type the checker knows cannot go where it goes: a `set` of a constant that does not convert to the field's type, a `set` copying an input or field of another type, an `output` whose source or `parse=` gives a type the field never takes (a tool's `exit-code` into a boolean, `parse="lines"` into a string), or a `for-each` over an input or field that is neither a list nor an object (whose entries it goes over). Values are judged by the same conversion the runtime applies; only what can never convert is reported (a string may hold a number or JSON)."#,
                why: r#"The write fails when the step runs, after the steps before it have run (and been paid for)."#,
                advice: r#"Write a value of the field's type, convert it in an expression, or change the field's type."#,
            },
            Code::UndeclaredEnv => Explanation {
                fires: r#"A template reads `env.NAME` but the workflow does not declare it with `env "NAME"`."#,
                why: r#"Declaring what a workflow reads from the environment keeps its inputs visible and secrets out of prompts by accident; an undeclared variable renders as nothing."#,
                advice: r#"Add `env "NAME"` to the workflow, or fix the name."#,
            },
            Code::TaintedCommand => Explanation {
                fires: r#"Agent output, a person's answer or a workflow input is interpolated into a `tool` command line where it can change what runs: into a `shell=#true` script, into the program, or into an argument that starts with `-`."#,
                why: r#"A model's reply is attacker-controlled as soon as the model reads untrusted content (an issue, a web page, a file): a reply containing `'; rm -rf ~` runs. This is command injection."#,
                advice: r#"Run an argv (no shell) with the untrusted value as a whole argument, or pass it through `stdin` or `env`."#,
            },
            Code::UnguardedSideEffect => Explanation {
                fires: r#"A side-effecting step may run again, through `retry` or `on-error "retry"` (a `tool`, or an agent that may edit files), but is not declared `idempotent=#true`."#,
                why: r#"A retried attempt repeats whatever the failed one already did: a second deploy, a duplicate comment, a file edited twice."#,
                advice: r#"Make the step idempotent and declare it with `idempotent=#true`, or remove the retry."#,
            },
            Code::InlineSecret => Explanation {
                fires: r#"A literal in the workflow looks like an API key or access token (Anthropic, OpenAI, GitHub, AWS, Slack shapes). The message never repeats the secret."#,
                why: r#"Workflow files are committed, shared and shown in logs: a key written in one is leaked."#,
                advice: r#"Read it from a declared `env`, or for providers name the variable with `api-key-env=`; revoke the leaked key."#,
            },
            Code::ShellCommand => Explanation {
                fires: r#"A `tool` has `shell=#true`, so its command line runs through `sh -c`."#,
                why: r#"A shell parses the command line: quoting mistakes, globbing and word splitting change what runs, and any interpolated value becomes code. An argv runs exactly the program and arguments written."#,
                advice: r#"Write `run` as an argv; when a pipeline is really needed, keep `shell=#true` and silence the warning with `// atomic-ignore: shell-command`."#,
            },
            Code::ParallelSharedEdits => Explanation {
                fires: r#"Agents that can change files (a coding-agent CLI allowed to edit — one that is read-only by default needs `permission=` or `tools`; a model API granted tools or MCP servers; never `in-process`, `replay` or `permission="plan"`) sit in two branches of a `parallel`, or in a `for-each` body that may run several items at once, and the parallel has no `isolation="worktree"`."#,
                why: r#"They edit the same working tree at the same moment: one overwrites what the other just wrote, a build one runs sees the other's half-made change, and a retry cannot put the files back while a sibling is at work."#,
                advice: r#"Add `isolation="worktree"`: each branch edits a git worktree of its own, made from the files before the parallel, and their changes are merged in branch order when it ends (a conflict fails the parallel with class `conflict`, which `on-error` can route to an agent). Or run the agents one after another."#,
            },
            Code::UnsandboxedBypass => Explanation {
                fires: r#"An agent has `permission="bypass"` and runs in no `sandbox`: neither its own nor the workflow's (or the one that applies says `"none"`)."#,
                why: r#"`bypass` lets the agent run any command and change any file without asking: with no sandbox around it, that reaches the user's whole file system, network and credentials, with nobody watching."#,
                advice: r#"Add `sandbox` to the workflow or the agent: the agent then writes only in the workspace (and the `write` paths), cannot read the credential stores, and reaches only the `network` hosts and its model. Or grant less than `bypass` (`accept-edits`, named `tools`)."#,
            },
            Code::HookCannotBlock => Explanation {
                fires: r#"The workflow has an `agent.tool.before` hook, and an agent runs on an adapter whose backend runs its own tools without asking atomic first (OpenCode, Copilot, Codex, Gemini, ACP agents: `atomic list adapters` says which)."#,
                why: r#"A failing `agent.tool.before` hook refuses the tool only where atomic is asked before it runs (the model APIs, Claude Code). On these adapters the hook sees the tool as it starts, and its failure is reported, not obeyed: a guard against `rm -rf` guards nothing."#,
                advice: r#"To refuse tools by rule, run the agent on `claude-code`, `anthropic` or `openai`. To bound what its tools can reach whatever they are, put it in a `sandbox` (writes kept to the workspace, credentials unreadable, network limited), and silence this with `// atomic-ignore: hook-cannot-block`."#,
            },
            Code::UnusedStateField => Explanation {
                fires: r#"A state field is neither read nor written. (A field that is written but never read is a result of the run, and is not reported.)"#,
                why: r#"A field nothing touches is dead weight in every checkpoint, or the sign of a misspelled name somewhere else."#,
                advice: r#"Remove it, or use it where it was meant to be used."#,
            },
            Code::UnusedInput => Explanation {
                fires: r#"A declared input is never read by a template or expression."#,
                why: r#"Callers must supply a value that changes nothing, or a read of it is misspelled."#,
                advice: r#"Remove it, or read it where it was meant to be read."#,
            },
            Code::UnusedProvider => Explanation {
                fires: r#"A declared provider is used by no agent and is not the workflow's default."#,
                why: r#"It is dead configuration, or an agent meant to use it names another one."#,
                advice: r#"Remove it, or point the agent that should use it at it."#,
            },
            Code::NestingTooDeep => Explanation {
                fires: r#"Blocks (`loop`, `parallel`, `decision` branches, …) are nested more than 64 levels deep. The parser itself stops reading blocks deeper than 128."#,
                why: r#"Nobody can follow a workflow that deep, and every stage after parsing walks the nesting: a limit keeps a runaway or generated file from exhausting the stack. What lies deeper is not checked, so the workflow cannot run."#,
                advice: r#"Flatten it: move the inner part into a workflow of its own and call it with `subgraph`, or join nested loops into one."#,
            },
            Code::UnusedMigration => Explanation {
                fires: r#"A state field has `migrate=`, and the state has no `version=`, or `version=1`."#,
                why: r#"A migration runs when a run stored at an earlier state version resumes. Runs stored without a version are version 1, so at version 1 there is nothing older to migrate from: the expression is dead code, and a run stored before the change resumes with the old value untouched."#,
                advice: r#"Raise the version above the one stored runs have (`state version=2 { … }`) when the field changed, or remove `migrate=`."#,
            },
            Code::UnboundedAppend => Explanation {
                fires: r#"An `append` state field without `max-items` is written inside a `loop` or on a `goto` cycle."#,
                why: r#"The field grows with every iteration: prompts that include it grow too, until they no longer fit the model's context, and every checkpoint carries it."#,
                advice: r#"Add `max-items=N` to keep the last N items, or use `replace` if only the latest matters."#,
            },
            Code::LongWaitHeader => Explanation {
                fires: r#"A `wait`'s `header=` spans more than one line or is longer than 30 characters."#,
                why: r#"The header is a short title drawn on one line above the question (a chip over the prompt, as Claude Code draws its own questions): a long one is cut or wraps on narrow terminals, and a second line breaks the layout of the prompt, the run summary and `atomic ui`."#,
                advice: r#"Keep the header to a few words (`header="Database"`) and put the rest in `prompt=`, or a choice's `description=`."#,
            },
            Code::UnknownRuleCode => Explanation {
                fires: r#"An `atomic-ignore` or `atomic-ignore-file` comment names a code that does not exist."#,
                why: r#"A misspelled code silences nothing, so the comment does not do what it says."#,
                advice: r#"Fix the code (the closest is suggested), or remove the comment."#,
            },
            Code::UnsilenceableRule => Explanation {
                fires: r#"An `atomic-ignore` comment, or a `rule … level=` in `.atomic/config.kdl`, tries to silence or lower a rule whose errors leave the workflow unable to run: syntax, structure, names, control flow, and the data the interpreter relies on. Warnings, `safety` and `lint` rules, and the data-flow judgements a person may overrule (`possibly-unset`, `sibling-branch-read`, `parallel-write-conflict`) can be silenced; for those, silencing really lets the workflow run."#,
                why: r#"`atomic check` would say "ok" about a workflow that `atomic run` then refuses: the two must agree."#,
                advice: r#"Fix the problem the comment hides; remove the comment."#,
            },
        }
    }
}
