//! The closed set of rule codes. Codes name the problem, never the fix or the module that
//! finds it, and never change once released: users silence and configure rules by code.
//! Every code has a fixture `tests/fixtures/check/err/<code>.kdl` and an entry in
//! `docs/diagnostics.md`; a test enforces both.

use serde::{Serialize, Serializer};

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The workflow cannot run.
    Error,
    /// The workflow runs but probably not as meant.
    Warning,
    /// Worth knowing.
    Note,
}

impl Severity {
    /// The lowercase name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Note => "note",
        }
    }
}

macro_rules! codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, $severity:ident, $stage:literal; )*) => {
        /// Every rule atomic reports.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Code {
            /// All codes, in documentation order.
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The kebab-case name without the `atomic::` prefix.
            #[must_use]
            pub fn name(self) -> &'static str {
                match self { $( Code::$variant => $name, )* }
            }

            /// The severity unless configuration changes it.
            #[must_use]
            pub fn default_severity(self) -> Severity {
                match self { $( Code::$variant => Severity::$severity, )* }
            }

            /// Which group of checks the rule belongs to (`syntax`, `structure`, `flow`,
            /// `data`, `safety`, `lint`).
            #[must_use]
            pub fn group(self) -> &'static str {
                match self { $( Code::$variant => $stage, )* }
            }

            /// One line saying when the rule fires.
            #[must_use]
            pub fn summary(self) -> &'static str {
                match self { $( Code::$variant => concat!($($doc),*).trim_ascii(), )* }
            }
        }
    };
}

codes! {
    // ---- syntax: the KDL text itself --------------------------------------------------
    /// The text is not valid KDL v2 at this point.
    SyntaxError = "syntax-error", Error, "syntax";
    /// A string is not closed before the end of the line or file.
    UnterminatedString = "unterminated-string", Error, "syntax";
    /// A `\` escape in a string is not one KDL knows.
    InvalidEscape = "invalid-escape", Error, "syntax";
    /// A number literal is malformed or out of range.
    InvalidNumber = "invalid-number", Error, "syntax";
    /// A `{` block is never closed.
    UnclosedBlock = "unclosed-block", Error, "syntax";
    /// A `}` has no matching `{`.
    UnmatchedBrace = "unmatched-brace", Error, "syntax";
    /// A character that KDL forbids in source text (control characters, BOM mid-file).
    InvalidCharacter = "invalid-character", Error, "syntax";
    /// A file atomic reads (the workflow, or one it refers to) is not UTF-8 text.
    InvalidEncoding = "invalid-encoding", Error, "syntax";
    /// A file atomic must read cannot be read: missing, a directory, or not permitted.
    UnreadableFile = "unreadable-file", Error, "syntax";

    // ---- structure: the workflow language ---------------------------------------------
    /// The file has no top-level `workflow` node, or more than one.
    MissingWorkflow = "missing-workflow", Error, "structure";
    /// A statement is not a node kind atomic knows.
    UnknownNodeKind = "unknown-node-kind", Error, "structure";
    /// A property is not one this node accepts.
    UnknownProperty = "unknown-property", Error, "structure";
    /// A child node is not one this node accepts.
    UnknownChild = "unknown-child", Error, "structure";
    /// A required property or argument is missing.
    MissingProperty = "missing-property", Error, "structure";
    /// More positional arguments than the node takes.
    UnexpectedArgument = "unexpected-argument", Error, "structure";
    /// A value has the wrong type (e.g. a string where an integer is expected).
    WrongType = "wrong-type", Error, "structure";
    /// A value is not one of the allowed choices.
    InvalidValue = "invalid-value", Error, "structure";
    /// A property is given twice on one node.
    DuplicateProperty = "duplicate-property", Error, "structure";
    /// A child that may appear once appears more than once.
    DuplicateChild = "duplicate-child", Error, "structure";
    /// Two nodes, state fields, inputs or providers share one name.
    DuplicateId = "duplicate-id", Error, "structure";
    /// A node id is not a valid identifier, or is reserved (`end`).
    InvalidId = "invalid-id", Error, "structure";
    /// A duration is not `<number><unit>` with a unit of ms, s, m, h or d.
    InvalidDuration = "invalid-duration", Error, "structure";
    /// A version is not semantic versioning (`1.2.3`).
    InvalidVersion = "invalid-version", Error, "structure";
    /// A regular expression does not compile.
    InvalidRegex = "invalid-regex", Error, "structure";
    /// A literal default or value does not match the declared type.
    InvalidDefault = "invalid-default", Error, "structure";
    /// Blocks are nested deeper than atomic reads (64 levels of statements).
    NestingTooDeep = "nesting-too-deep", Error, "structure";
    /// The workflow needs a newer atomic than this one.
    IncompatibleVersion = "incompatible-version", Error, "structure";

    // ---- names: references between declarations ---------------------------------------
    /// A `goto`, `use` or `recovery` target names no node.
    UndefinedNode = "undefined-node", Error, "names";
    /// A node names a provider the workflow does not declare.
    UndefinedProvider = "undefined-provider", Error, "names";
    /// A provider's `adapter` is not a known adapter.
    UnknownAdapter = "unknown-adapter", Error, "names";
    /// An output, `set` or mapping writes a state field that is not declared.
    UndefinedStateField = "undefined-state-field", Error, "names";
    /// A `use=` names a node of another kind, or a node that itself uses another.
    InvalidUse = "invalid-use", Error, "names";
    /// An `on-error "goto"` target is not marked `recovery=#true`.
    NotARecoveryNode = "not-a-recovery-node", Error, "names";
    /// A subgraph's workflow file does not exist or cannot be read.
    MissingSubgraph = "missing-subgraph", Error, "names";
    /// Subgraphs call each other in a cycle.
    SubgraphRecursion = "subgraph-recursion", Error, "names";
    /// A node asks its provider for something the adapter cannot do.
    UnsupportedFeature = "unsupported-feature", Error, "names";
    /// `model=` names a model its adapter cannot run (another vendor's), or is not written as the adapter needs (`provider/model` for OpenCode).
    WrongModel = "wrong-model", Error, "names";
    /// `model=` names a model the model catalogue does not know for its adapter.
    UnknownModel = "unknown-model", Warning, "names";
    /// A reducer cannot combine values of the field's type (e.g. `sum` on a string).
    ReducerTypeMismatch = "reducer-type-mismatch", Error, "names";
    /// An agent has no provider: none named on the node, no workflow default, and not exactly one declared.
    MissingProvider = "missing-provider", Error, "names";
    /// A `tool use=`, or a `tools` name of an agent on an HTTP model adapter (`anthropic`, `openai`), names no custom tool in `.atomic/tools/`.
    UndefinedTool = "undefined-tool", Error, "names";
    /// A custom tool is offered to an agent whose CLI cannot call it (`claude-code`, `opencode`, `copilot`).
    UnsupportedCustomTool = "unsupported-custom-tool", Error, "names";
    /// An `arg` of a `tool use=` node names no argument of the custom tool.
    UnknownToolArgument = "unknown-tool-argument", Error, "names";
    /// A `tool use=` node leaves out an argument the custom tool requires.
    MissingToolArgument = "missing-tool-argument", Error, "names";
    /// A `use="agent:…"`, `skill:…` or `command:…` names nothing discovered.
    UnknownDefinition = "unknown-definition", Error, "names";
    /// A `use=` prefix is not `agent:`, `skill:` or `command:`.
    UnknownUsePrefix = "unknown-use-prefix", Error, "names";
    /// An `option` names nothing its adapter reads, or belongs on the provider rather than an agent.
    UnknownOption = "unknown-option", Error, "names";
    /// A discovered agent, skill or command that a workflow uses has front matter that does not parse.
    InvalidDefinition = "invalid-definition", Error, "names";

    // ---- flow: the lowered graph ------------------------------------------------------
    /// No path from the start reaches this node.
    UnreachableNode = "unreachable-node", Warning, "flow";
    /// From this node no path reaches the end of the workflow.
    NoPathToEnd = "no-path-to-end", Error, "flow";
    /// A `decision` has no `otherwise`, so routing may fall through nothing.
    MissingOtherwise = "missing-otherwise", Error, "flow";
    /// A `loop` has no `max`: every loop must be bounded.
    MissingLoopMax = "missing-loop-max", Error, "flow";
    /// A cycle made by `goto` has no bound (`max=` on the jumping route).
    UnboundedCycle = "unbounded-cycle", Error, "flow";
    /// A node's `goto` replaces the fall-through to the next statement, which can never run from here.
    GotoShadowsNext = "goto-shadows-next", Warning, "flow";
    /// A block (`loop`, `parallel`, branch) has no statements.
    EmptyBlock = "empty-block", Warning, "flow";
    /// A `goto` jumps into or out of a `parallel` branch.
    GotoAcrossParallel = "goto-across-parallel", Error, "flow";

    // ---- data: templates, expressions, state, schemas ---------------------------------
    /// A template or expression does not parse.
    TemplateSyntax = "template-syntax", Error, "data";
    /// A template or expression reads a variable that is not an input, state field, output or run value.
    UndeclaredVariable = "undeclared-variable", Error, "data";
    /// A template or expression uses a filter or test the runtime does not have.
    UnknownFilter = "unknown-filter", Error, "data";
    /// `outputs.<id>` names no node, or a node that produces no output.
    UndefinedOutput = "undefined-output", Error, "data";
    /// A value is read on a path where it may not have been written yet.
    PossiblyUnset = "possibly-unset", Error, "data";
    /// A `parallel` branch reads an output or a state field that a sibling branch writes.
    SiblingBranchRead = "sibling-branch-read", Error, "data";
    /// Two `parallel` branches write one `replace` field.
    ParallelWriteConflict = "parallel-write-conflict", Error, "data";
    /// An output schema file does not exist.
    MissingSchemaFile = "missing-schema-file", Error, "data";
    /// An output schema is not valid JSON or not a valid JSON Schema.
    InvalidSchema = "invalid-schema", Error, "data";
    /// A subgraph `input` mapping names no input of the called workflow, misses a required one, or has the wrong type.
    SubgraphInputMismatch = "subgraph-input-mismatch", Error, "data";
    /// A subgraph `output` mapping reads a field the called workflow does not have.
    SubgraphOutputMismatch = "subgraph-output-mismatch", Error, "data";
    /// A `wait`'s choices or answer type are inconsistent (e.g. `yes-no` with three choices).
    InvalidAnswerType = "invalid-answer-type", Error, "data";
    /// A value whose type is known cannot go where it is written (a `set`, an `output`) or be iterated by `for-each`.
    TypeMismatch = "type-mismatch", Error, "data";
    /// `env.NAME` is read but not declared with `env "NAME"`.
    UndeclaredEnv = "undeclared-env", Error, "data";

    // ---- safety -----------------------------------------------------------------------
    /// Agent output or an untrusted input is interpolated into a `tool` command line.
    TaintedCommand = "tainted-command", Error, "safety";
    /// A side-effecting step may run again (retry, resume) but is not declared idempotent.
    UnguardedSideEffect = "unguarded-side-effect", Warning, "safety";
    /// A literal that looks like an API key or token is written in the workflow.
    InlineSecret = "inline-secret", Error, "safety";
    /// `shell=#true` runs a command line through a shell.
    ShellCommand = "shell-command", Warning, "safety";
    /// Agents that can edit files run at once in one `parallel` without `isolation="worktree"`.
    ParallelSharedEdits = "parallel-shared-edits", Warning, "safety";
    /// An agent with `permission="bypass"` runs in no `sandbox`.
    UnsandboxedBypass = "unsandboxed-bypass", Warning, "safety";
    /// An `agent.tool.before` hook cannot stop the tools of an agent whose backend runs them.
    HookCannotBlock = "hook-cannot-block", Warning, "safety";

    // ---- lint -------------------------------------------------------------------------
    /// A state field is neither read nor written.
    UnusedStateField = "unused-state-field", Warning, "lint";
    /// An input is never read.
    UnusedInput = "unused-input", Warning, "lint";
    /// A provider is never used.
    UnusedProvider = "unused-provider", Warning, "lint";
    /// A state field's `migrate=` can never run: the state's `version=` is not above 1, the version of runs stored without one.
    UnusedMigration = "unused-migration", Warning, "lint";
    /// An `append` field written inside a loop has no `max-items`, so it grows with every iteration.
    UnboundedAppend = "unbounded-append", Warning, "lint";
    /// A `wait`'s `header=` is more than one line or longer than 30 characters.
    LongWaitHeader = "long-wait-header", Warning, "lint";
    /// An `atomic-ignore` comment names a code that does not exist.
    UnknownRuleCode = "unknown-rule-code", Warning, "lint";
    /// An `atomic-ignore` comment or a configured level tries to silence (or lower) a rule whose errors leave the workflow unable to run.
    UnsilenceableRule = "unsilenceable-rule", Warning, "lint";
}

impl Code {
    /// Whether a suppression comment or a configured level may silence or lower this rule.
    /// Not for errors that leave the workflow unable to run (the text, its structure, its
    /// names, its control flow, and the data the interpreter relies on): silencing one
    /// would let `check` say "ok" about a workflow `run` refuses. Warnings, safety and lint
    /// rules, and data-flow judgements a person may overrule (a field that may be unset on
    /// some path, a sibling branch's output, two branches writing one field) may be.
    #[must_use]
    pub fn can_silence(self) -> bool {
        self.default_severity() != Severity::Error
            || matches!(self.group(), "safety" | "lint")
            || matches!(
                self,
                Code::PossiblyUnset | Code::SiblingBranchRead | Code::ParallelWriteConflict
            )
    }

    /// The code as shown to users: `atomic::<name>`.
    #[must_use]
    pub fn qualified(self) -> String {
        format!("atomic::{}", self.name())
    }

    /// Looks a code up by its name, with or without the `atomic::` prefix.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Code> {
        let name = name.strip_prefix("atomic::").unwrap_or(name);
        Code::ALL.iter().copied().find(|code| code.name() == name)
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "atomic::{}", self.name())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case() {
        let mut seen = std::collections::BTreeSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.name()), "duplicate code {}", code.name());
            assert!(
                code.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-')
            );
            assert!(!code.summary().is_empty());
            assert_eq!(Code::from_name(&code.qualified()), Some(*code));
        }
        assert!(Code::ALL.len() >= 40);
    }
}
