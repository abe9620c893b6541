//! The typed form of `grammar/atomic.grammar.json`.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The whole language: node kinds by id. Shared sets are already expanded into each node.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grammar {
    /// A note for readers of the JSON file.
    #[serde(rename = "$comment")]
    pub comment: String,
    /// Property and child sets included by several nodes (`include`).
    pub shared: BTreeMap<String, SharedSpec>,
    /// Every node kind, in documentation order.
    pub nodes: Vec<NodeSpec>,
    /// Position in `nodes` by id, built on load.
    #[serde(skip)]
    pub(super) index: std::collections::HashMap<String, usize>,
}

/// A set of arguments, properties and children several node kinds share.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedSpec {
    /// Positional arguments.
    #[serde(default)]
    pub arguments: Vec<ArgumentSpec>,
    /// Properties.
    #[serde(default)]
    pub properties: Vec<PropertySpec>,
    /// Children.
    #[serde(default)]
    pub children: Vec<ChildSpec>,
}

/// One node kind in one context, e.g. `agent`, or `output` inside a `tool` (`tool/output`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique key: the node name, or `<parent>/<name>` where one name means different
    /// things in different parents (`tool/env` vs the workflow's `env`).
    pub id: String,
    /// The KDL node name.
    pub name: String,
    /// One user-facing line for hover and docs.
    pub doc: String,
    /// Whether this is a statement (a node of the flow: `agent`, `loop`, …).
    #[serde(default)]
    pub statement: bool,
    /// Shared sets (keys of [`Grammar::shared`]) merged into this node on load.
    #[serde(default)]
    pub include: Vec<String>,
    /// Ids of the nodes this one may appear in (`document` for the top level).
    pub contexts: Vec<String>,
    /// Positional arguments, in order; the last may be variadic.
    #[serde(default)]
    pub arguments: Vec<ArgumentSpec>,
    /// Properties.
    #[serde(default)]
    pub properties: Vec<PropertySpec>,
    /// Children the node may have.
    #[serde(default)]
    pub children: Vec<ChildSpec>,
    /// By child KDL name: its position in `children` and its spec's in [`Grammar::nodes`].
    /// Built on load; the structure pass looks up every child of every node.
    #[serde(skip)]
    pub(super) child_index: std::collections::HashMap<String, (usize, usize)>,
    /// The same pairs in the order of `children` (those whose spec exists).
    #[serde(skip)]
    pub(super) child_specs: Vec<(usize, usize)>,
}

/// A positional argument.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgumentSpec {
    /// Its name, for messages and docs.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: ValueKind,
    /// For [`ValueKind::Enum`]: the allowed values.
    #[serde(default)]
    pub choices: Vec<String>,
    /// Whether it must be given.
    #[serde(default)]
    pub required: bool,
    /// Whether it takes every remaining argument (only the last one may).
    #[serde(default)]
    pub variadic: bool,
    /// One user-facing line.
    pub doc: String,
}

/// A `key=value` property.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropertySpec {
    /// The key.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: ValueKind,
    /// For [`ValueKind::Enum`]: the allowed values.
    #[serde(default)]
    pub choices: Vec<String>,
    /// Whether it must be given.
    #[serde(default)]
    pub required: bool,
    /// The value when absent, as documented.
    #[serde(default)]
    pub default: Option<serde_json::Value>,
    /// Smallest allowed number.
    #[serde(default)]
    pub min: Option<f64>,
    /// A number it must be larger than (`0` for a budget: zero stops everything).
    #[serde(default)]
    pub above: Option<f64>,
    /// Largest allowed number.
    #[serde(default)]
    pub max: Option<f64>,
    /// One user-facing line.
    pub doc: String,
}

/// A child a node may have.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChildSpec {
    /// The child's [`NodeSpec::id`].
    pub node: String,
    /// Whether it may appear more than once.
    #[serde(default)]
    pub repeatable: bool,
    /// Whether it must appear.
    #[serde(default)]
    pub required: bool,
}

/// The type of an argument or property value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValueKind {
    /// Any string.
    String,
    /// A whole number.
    Integer,
    /// A number (integers too).
    Number,
    /// `#true` or `#false`.
    Boolean,
    /// A string like `"30s"`, `"10m"`, `"1m30s"`.
    Duration,
    /// A string like `"1.2.3"`.
    Semver,
    /// A string holding a regular expression.
    Regex,
    /// A string, one of the listed choices.
    Enum,
    /// A string naming a node id (or `end`).
    NodeRef,
    /// A string naming a declared provider.
    ProviderRef,
    /// A string naming a declared state field.
    FieldRef,
    /// A string holding a minijinja expression.
    Expr,
    /// A string holding a minijinja template.
    Template,
    /// A string holding a file path relative to the workflow.
    Path,
    /// Any KDL value.
    Any,
}

impl ValueKind {
    /// The name used in the JSON and in messages.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Duration => "duration",
            Self::Semver => "semver",
            Self::Regex => "regex",
            Self::Enum => "enum",
            Self::NodeRef => "node-ref",
            Self::ProviderRef => "provider-ref",
            Self::FieldRef => "field-ref",
            Self::Expr => "expr",
            Self::Template => "template",
            Self::Path => "path",
            Self::Any => "any",
        }
    }

    /// Whether values of this kind are written as KDL strings.
    #[must_use]
    pub fn is_string(self) -> bool {
        !matches!(
            self,
            Self::Integer | Self::Number | Self::Boolean | Self::Any
        )
    }
}
