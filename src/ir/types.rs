//! Small value types shared by the IR.

use serde::{Deserialize, Serialize};

use crate::source::{Span, Spanned};

/// Index of a node in [`Workflow::nodes`](super::Workflow::nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeIdx(pub u32);

impl NodeIdx {
    /// The arena position.
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Statements run in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// The statements, in source order.
    pub nodes: Vec<NodeIdx>,
    /// The `{ … }` of the block (the enclosing node's span for the top level).
    pub span: Span,
}

/// A minijinja template (prompts, `set` values, command arguments), as written in a KDL
/// string. `span` is the string literal's span; `offset` is how many bytes of the literal
/// precede the template text (1 for `"…"`, 0 for identifier strings, more for raw and
/// multi-line strings), so an error at template byte `i` is at `span.start + offset + i`
/// when the string had no escapes. For strings with escapes or a dedent, `shifts` maps
/// template offsets onto the literal; errors point at the whole literal only when even that
/// cannot be worked out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Template {
    /// The decoded template text.
    pub source: String,
    /// The string literal.
    pub span: Span,
    /// Whether byte offsets inside `source` map 1:1 onto the literal after `offset`.
    pub exact: bool,
    /// Bytes of the literal before the text (quotes, `#`s, the first newline).
    pub offset: u32,
    /// For an inexact template: sorted `(template offset, offset after `offset` in the
    /// literal)` pairs, each starting a run of bytes written unchanged (escapes and dedented
    /// indentation sit between runs). `None` when exact, or when the text could not be
    /// aligned (boxed: one pointer in every template, for the rare escaped one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[allow(clippy::box_collection)]
    pub shifts: Option<Box<Vec<(u32, u32)>>>,
}

impl Template {
    /// The span of template bytes `range`, or the whole literal when offsets are inexact.
    #[must_use]
    pub fn span_of(&self, range: std::ops::Range<usize>) -> Span {
        let offset = self.offset as usize;
        if self.exact {
            self.span.slice(range.start + offset..range.end + offset)
        } else if let Some(shifts) = &self.shifts {
            let start = literal_offset(shifts, range.start);
            let end = literal_offset(shifts, range.end).max(start);
            self.span.slice(start + offset..end + offset)
        } else {
            self.span
        }
    }

    /// Whether the text contains no `{{`, `{%` or `{#` (a constant; rendering is a copy).
    #[must_use]
    pub fn is_literal(&self) -> bool {
        !(self.source.contains("{{") || self.source.contains("{%") || self.source.contains("{#"))
    }
}

/// Where template offset `at` is in the literal (after the template's `offset`).
fn literal_offset(shifts: &[(u32, u32)], at: usize) -> usize {
    let index = shifts.partition_point(|&(template, _)| template as usize <= at);
    match index.checked_sub(1).map(|i| shifts[i]) {
        Some((template, literal)) => literal as usize + (at - template as usize),
        None => at,
    }
}

/// A minijinja expression (`when`, `until`, `for-each`): same positioning as [`Template`].
pub type Expr = Template;

/// A duration in milliseconds, written `"500ms"`, `"30s"`, `"10m"`, `"2h"`, `"1d"` (or
/// combinations like `"1m30s"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Duration(pub u64);

impl Duration {
    /// As a std duration.
    #[must_use]
    pub fn to_std(self) -> std::time::Duration {
        std::time::Duration::from_millis(self.0)
    }
}

/// The declared type of an input, state field or answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type", content = "schema")]
pub enum ValueType {
    /// `type="string"`
    String,
    /// `type="integer"`
    Integer,
    /// `type="number"` (integers are numbers too)
    Number,
    /// `type="boolean"`
    Boolean,
    /// `type="array"`
    Array,
    /// `type="object"`
    Object,
    /// `type="any"` (the default when no type is given)
    Any,
    /// `schema="path/to/schema.json"`: a JSON Schema file, path relative to the workflow.
    Schema(Spanned<String>),
}

impl ValueType {
    /// The type with its article, as messages say it: "an integer".
    #[must_use]
    pub fn article(&self) -> &'static str {
        match self {
            ValueType::String => "a string",
            ValueType::Integer => "an integer",
            ValueType::Number => "a number",
            ValueType::Boolean => "a boolean",
            ValueType::Array => "an array",
            ValueType::Object => "an object",
            ValueType::Any | ValueType::Schema(_) => "a value",
        }
    }

    /// The type a KDL `type=` (or a JSON Schema `"type"`) names: `string`, `integer`,
    /// `number`, `boolean`, `array`, `object`, `any`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            "array" => Self::Array,
            "object" => Self::Object,
            "any" => Self::Any,
            _ => return None,
        })
    }

    /// The KDL spelling.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Array => "array",
            Self::Object => "object",
            Self::Any => "any",
            Self::Schema(_) => "schema",
        }
    }
}

/// How a write to a state field combines with its current value (`reduce="…"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "reducer", content = "key")]
pub enum Reducer {
    /// `replace` (default): the new value wins.
    #[default]
    Replace,
    /// `append`: arrays are concatenated; a non-array value is pushed as one item.
    Append,
    /// `merge`: shallow object merge, new keys win.
    Merge,
    /// `merge-by="id"`: arrays of objects; items with an equal key are replaced in place,
    /// new ones appended.
    MergeBy(String),
    /// `sum`: numbers are added.
    Sum,
    /// `max`: the larger number wins.
    Max,
    /// `min`: the smaller number wins.
    Min,
    /// `and`: booleans are and-ed.
    And,
    /// `or`: booleans are or-ed.
    Or,
    /// `if-defined`: like replace, but a null write is ignored.
    IfDefined,
}

impl Reducer {
    /// The KDL spelling.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Replace => "replace",
            Self::Append => "append",
            Self::Merge => "merge",
            Self::MergeBy(_) => "merge-by",
            Self::Sum => "sum",
            Self::Max => "max",
            Self::Min => "min",
            Self::And => "and",
            Self::Or => "or",
            Self::IfDefined => "if-defined",
        }
    }
}

/// Failure classes, for `retry-on` and for routing errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorClass {
    /// `rate-limit`: the provider asked us to slow down (429).
    RateLimit,
    /// `overloaded`: the provider is overloaded (529, 503).
    Overloaded,
    /// `server-error`: a 5xx from the provider.
    ServerError,
    /// `network`: connection refused/reset, DNS, TLS.
    Network,
    /// `stream-cut`: a streamed reply ended mid-way.
    StreamCut,
    /// `timeout`: the node or provider timed out.
    Timeout,
    /// `process-exit`: an agent CLI exited non-zero.
    ProcessExit,
    /// `bad-output`: the reply could not be parsed (`parse="json"`, `yes-no`).
    BadOutput,
    /// `schema`: the parsed output failed its JSON Schema.
    Schema,
    /// `tool-exit`: a `tool` exited with a code not in `ok-codes`.
    ToolExit,
    /// `auth`: the backend refused the credentials (401, 403). Never retried by default.
    Auth,
    /// `provider`: any other provider failure (4xx, protocol errors).
    Provider,
    /// `budget`: the call would spend more than the node's `budget-usd` or the run's
    /// `limits max-budget-usd`, and was stopped. Never retried by default.
    Budget,
    /// `conflict`: the branches of a `parallel … isolation="worktree"` changed the same
    /// parts of a file; `error.paths` lists them. Never retried by default.
    Conflict,
}

impl ErrorClass {
    /// All classes, in documentation order.
    pub const ALL: &'static [ErrorClass] = &[
        Self::RateLimit,
        Self::Overloaded,
        Self::ServerError,
        Self::Network,
        Self::StreamCut,
        Self::Timeout,
        Self::ProcessExit,
        Self::BadOutput,
        Self::Schema,
        Self::ToolExit,
        Self::Auth,
        Self::Provider,
        Self::Budget,
        Self::Conflict,
    ];

    /// The KDL spelling.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::RateLimit => "rate-limit",
            Self::Overloaded => "overloaded",
            Self::ServerError => "server-error",
            Self::Network => "network",
            Self::StreamCut => "stream-cut",
            Self::Timeout => "timeout",
            Self::ProcessExit => "process-exit",
            Self::BadOutput => "bad-output",
            Self::Schema => "schema",
            Self::ToolExit => "tool-exit",
            Self::Auth => "auth",
            Self::Provider => "provider",
            Self::Budget => "budget",
            Self::Conflict => "conflict",
        }
    }

    /// Classes retried when a node's `retry` has no `retry-on`: the transient ones.
    #[must_use]
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            Self::RateLimit
                | Self::Overloaded
                | Self::ServerError
                | Self::Network
                | Self::StreamCut
                | Self::Timeout
        )
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}
