//! The names of one file, read from the KDL tree with the grammar: where each node id,
//! state field, provider and input is declared, and every place it is used — in a
//! `goto=`, `provider=`, `output "…"`, `set "…"`, … and inside templates (`state.x`,
//! `outputs.id`, `input.x`). Definition, references, rename, hover and completion all
//! read this one index, so they agree.
//!
//! It needs no resolved IR: a file with errors is indexed as far as its tree goes.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::check::{self, Read, grammar::ValueKind};
use crate::ir::Template;
use crate::source::{Sources, Span};
use crate::syntax::kdl::{Document, Entry, Value};

use super::tree::{Frame, Slot, slot, walk};

/// What a name names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SymbolKind {
    /// A node id (`agent "review"`).
    Node,
    /// A state field (`field "findings"`).
    Field,
    /// A provider (`provider "claude"`).
    Provider,
    /// A workflow input (`input "target"`).
    Input,
}

impl SymbolKind {
    /// How hovers and messages call it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::Node => "node",
            Self::Field => "state field",
            Self::Provider => "provider",
            Self::Input => "input",
        }
    }
}

/// How a use of a name is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// As a KDL value: `goto="ship"`, `output "findings"`.
    Value,
    /// In a template after a dot: `state.findings`.
    Dotted,
    /// In a template in a subscript: `outputs["re-review"]`.
    Subscript,
}

/// One declaration or use of a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    /// What it names.
    pub kind: SymbolKind,
    /// The name.
    pub name: String,
    /// The name's own text (inside the quotes when the literal allows).
    pub span: Span,
    /// Whether this is the declaration.
    pub declaration: bool,
    /// How it is written.
    pub written: Written,
    /// The node declared (for declarations): its whole span and KDL name.
    pub node: Option<(Span, String)>,
}

/// A template or expression in the file. What it reads is worked out on first use (a
/// minijinja parse), so building the index stays a walk of the tree.
#[derive(Debug)]
pub struct TemplateSite {
    /// The template, positioned in the file.
    pub template: Template,
    /// Whether it is an expression (`when`, `until`, …) rather than a template.
    pub expression: bool,
    /// The span of the node it belongs to (the innermost statement or declaration).
    pub node: Span,
    /// The literal as written, kept when the template text is not the literal byte for
    /// byte (reads are then found again in it).
    literal: Option<String>,
    reads: OnceLock<Vec<Read>>,
    uses: OnceLock<Vec<Occurrence>>,
}

impl TemplateSite {
    /// The variables it reads, in source order (empty if it does not parse).
    pub fn reads(&self) -> &[Read] {
        self.reads.get_or_init(|| {
            let reads = if self.expression {
                check::expression_reads(&self.template)
            } else {
                check::template_reads(&self.template)
            }
            .unwrap_or_default();
            match &self.literal {
                Some(literal) => relocate(literal, self.template.span, self.expression, &reads),
                None => reads,
            }
        })
    }

    /// The names it uses: `state.x`, `input.x`, `outputs.id`.
    fn uses(&self) -> &[Occurrence] {
        self.uses.get_or_init(|| {
            let literal = self.literal.as_deref();
            self.reads()
                .iter()
                .filter_map(|read| {
                    let kind = root_kind(read.root())?;
                    let member = read.member()?;
                    let text = match literal {
                        Some(literal) => {
                            let start = (read.span.start - self.template.span.start) as usize;
                            literal.get(start..start + read.span.len())?
                        }
                        None => self.template.source.get(self.relative(read.span)?)?,
                    };
                    let (span, written) = member_span(text, read, member)?;
                    Some(Occurrence {
                        kind,
                        name: member.to_owned(),
                        span,
                        declaration: false,
                        written,
                        node: None,
                    })
                })
                .collect()
        })
    }

    /// The range of `span` in the template text (exact templates only).
    fn relative(&self, span: Span) -> Option<std::ops::Range<usize>> {
        let start = self.template.span.start as usize + self.template.offset as usize;
        let from = (span.start as usize).checked_sub(start)?;
        Some(from..from + span.len())
    }
}

/// The symbol a template root's members name.
fn root_kind(root: &str) -> Option<SymbolKind> {
    match root {
        "state" => Some(SymbolKind::Field),
        "input" => Some(SymbolKind::Input),
        "outputs" => Some(SymbolKind::Node),
        _ => None,
    }
}

/// Every name in one file.
#[derive(Debug, Default)]
pub struct Index {
    /// Declarations and uses written as KDL values, in source order (uses inside
    /// templates are found through [`Index::templates`]).
    pub occurrences: Vec<Occurrence>,
    /// Every template and expression, in source order.
    pub templates: Vec<TemplateSite>,
    /// The first declaration of each name, by kind: its position in `occurrences`.
    declared: HashMap<(SymbolKind, String), usize>,
}

impl Index {
    /// Indexes `document`, whose text is the file `sources` holds for its spans.
    #[must_use]
    pub fn build(sources: &Sources, document: &Document) -> Self {
        let mut index = Self::default();
        let mut maybe_nodes = Vec::new();
        walk(document, &mut |frames| {
            index.visit(sources, frames, &mut maybe_nodes);
        });
        let declared_nodes: HashSet<&str> = index
            .occurrences
            .iter()
            .filter(|occurrence| occurrence.declaration && occurrence.kind == SymbolKind::Node)
            .map(|occurrence| occurrence.name.as_str())
            .collect();
        // `use=` on an agent names another agent node or a discovered agent: it is a use of
        // a node only when such a node exists.
        let uses: Vec<Occurrence> = maybe_nodes
            .into_iter()
            .filter(|occurrence| declared_nodes.contains(occurrence.name.as_str()))
            .collect();
        index.occurrences.extend(uses);
        index.occurrences.sort_by_key(|occurrence| occurrence.span);
        index.templates.sort_by_key(|site| site.template.span);
        for (position, occurrence) in index.occurrences.iter().enumerate() {
            if occurrence.declaration {
                index
                    .declared
                    .entry((occurrence.kind, occurrence.name.clone()))
                    .or_insert(position);
            }
        }
        index
    }

    fn visit(&mut self, sources: &Sources, frames: &[Frame<'_>], maybe: &mut Vec<Occurrence>) {
        let Some(&frame) = frames.last() else { return };
        let Some(spec) = frame.spec else { return };
        let declares = match spec.id.as_str() {
            "field" => Some(SymbolKind::Field),
            "provider" => Some(SymbolKind::Provider),
            "input" => Some(SymbolKind::Input),
            _ if spec.statement && spec.id != "set" => Some(SymbolKind::Node),
            _ => None,
        };
        let owner = frames
            .iter()
            .rev()
            .find(|frame| {
                frame
                    .spec
                    .is_some_and(|spec| spec.statement || spec.id == "workflow")
            })
            .map_or(frame.node.span, |frame| frame.node.span);
        for entry in &frame.node.entries {
            let Value::String(value) = &entry.value else {
                continue;
            };
            let slot = slot(frame, entry);
            let key = entry.key.as_ref().map(|key| key.value.as_str());
            let declaration = match (slot, key) {
                (Slot::Argument(0, _), None) => declares,
                (_, Some("id")) if spec.id == "set" => Some(SymbolKind::Node),
                _ => None,
            };
            if let Some(kind) = declaration {
                self.occurrences.push(Occurrence {
                    kind,
                    name: value.as_str().to_owned(),
                    span: name_span(sources, value, entry),
                    declaration: true,
                    written: Written::Value,
                    node: Some((frame.node.span, frame.node.name.value.as_str().to_owned())),
                });
                continue;
            }
            let kind = match slot {
                Slot::Property(property) => property.kind,
                Slot::Argument(_, argument) => argument.kind,
                Slot::Unknown => continue,
            };
            let used = |kind| Occurrence {
                kind,
                name: value.as_str().to_owned(),
                span: name_span(sources, value, entry),
                declaration: false,
                written: Written::Value,
                node: None,
            };
            match kind {
                ValueKind::NodeRef if value != "end" => {
                    self.occurrences.push(used(SymbolKind::Node));
                }
                ValueKind::ProviderRef => self.occurrences.push(used(SymbolKind::Provider)),
                ValueKind::FieldRef => self.occurrences.push(used(SymbolKind::Field)),
                ValueKind::String if spec.id == "agent" && key == Some("use") => {
                    maybe.push(used(SymbolKind::Node));
                }
                ValueKind::Template | ValueKind::Expr => {
                    let template = check::template_at(sources, value, entry.value_span);
                    let literal = (!template.exact).then(|| sources.text(template.span).to_owned());
                    self.templates.push(TemplateSite {
                        template,
                        expression: kind == ValueKind::Expr,
                        node: owner,
                        literal,
                        reads: OnceLock::new(),
                        uses: OnceLock::new(),
                    });
                }
                _ => {}
            }
        }
    }

    /// The declaration of `name` as a `kind` (the first, if declared twice).
    #[must_use]
    pub fn declaration(&self, kind: SymbolKind, name: &str) -> Option<&Occurrence> {
        let position = *self.declared.get(&(kind, name.to_owned()))?;
        self.occurrences.get(position)
    }

    /// Every declaration of a kind, in source order.
    pub fn declarations(&self, kind: SymbolKind) -> impl Iterator<Item = &Occurrence> {
        self.occurrences
            .iter()
            .filter(move |occurrence| occurrence.declaration && occurrence.kind == kind)
    }

    /// Every declaration and use of `name` as a `kind`, templates included, in source
    /// order. Reads every template the first time.
    #[must_use]
    pub fn occurrences_of(&self, kind: SymbolKind, name: &str) -> Vec<&Occurrence> {
        let matches = |occurrence: &&Occurrence| occurrence.kind == kind && occurrence.name == name;
        let mut found: Vec<&Occurrence> = self.occurrences.iter().filter(matches).collect();
        found.extend(
            self.templates
                .iter()
                .flat_map(TemplateSite::uses)
                .filter(matches),
        );
        found.sort_by_key(|occurrence| occurrence.span);
        found
    }

    /// The occurrence under byte `offset`, in a value or a template.
    #[must_use]
    pub fn at(&self, offset: usize) -> Option<&Occurrence> {
        let in_value = self
            .occurrences
            .iter()
            .find(|occurrence| occurrence.span.contains(offset));
        in_value.or_else(|| {
            self.template_at(offset)?
                .uses()
                .iter()
                .find(|occurrence| occurrence.span.contains(offset))
        })
    }

    /// The name under byte `offset`: an occurrence, or a template read such as
    /// `state.findings` with the cursor anywhere on it.
    #[must_use]
    pub fn symbol_at(&self, offset: usize) -> Option<(SymbolKind, &str)> {
        if let Some(occurrence) = self.at(offset) {
            return Some((occurrence.kind, &occurrence.name));
        }
        let read = self
            .template_at(offset)?
            .reads()
            .iter()
            .find(|read| read.span.contains(offset))?;
        Some((root_kind(read.root())?, read.member()?))
    }

    /// The template or expression containing byte `offset`.
    #[must_use]
    pub fn template_at(&self, offset: usize) -> Option<&TemplateSite> {
        let after = self
            .templates
            .partition_point(|site| (site.template.span.start as usize) <= offset);
        self.templates[..after]
            .iter()
            .rev()
            .find(|site| site.template.span.contains(offset))
    }
}

/// The span of a string value's text without its quotes, when the literal is written
/// without escapes; the whole literal otherwise.
pub(crate) fn name_span(sources: &Sources, value: &str, entry: &Entry) -> Span {
    check::template_at(sources, value, entry.value_span).span_of(0..value.len())
}

/// Reads of a template whose text is not its literal byte for byte (a dedented multi-line
/// string, escapes) all point at the whole literal; this finds each path again in the
/// literal's code (`{{ }}`, `{% %}`, or all of an expression), one read per occurrence.
fn relocate(literal: &str, span: Span, expression: bool, reads: &[Read]) -> Vec<Read> {
    let regions = if expression {
        std::iter::once(0..literal.len()).collect()
    } else {
        code_regions(literal)
    };
    let mut paths: Vec<&str> = reads.iter().map(|read| read.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    let is_ident = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let mut found = Vec::new();
    for path in paths {
        for region in &regions {
            let code = &literal[region.clone()];
            for (at, _) in code.match_indices(path) {
                let start = region.start + at;
                let end = start + path.len();
                let bytes = literal.as_bytes();
                let before = start.checked_sub(1).map(|index| bytes[index]);
                let after = bytes.get(end).copied();
                if before.is_some_and(|byte| is_ident(byte) || byte == b'.')
                    || after.is_some_and(is_ident)
                {
                    continue;
                }
                found.push(Read {
                    path: path.to_owned(),
                    span: span.slice(start..end),
                });
            }
        }
    }
    found.sort();
    found
}

/// Byte ranges of `{{ … }}` and `{% … %}` in `text` (an unclosed one runs to the end).
pub(crate) fn code_regions(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut regions = Vec::new();
    let mut rest = 0;
    while let Some(found) = text[rest..].find(['{']) {
        let open = rest + found;
        let close = match text.as_bytes().get(open + 1) {
            Some(b'{') => "}}",
            Some(b'%') => "%}",
            _ => {
                rest = open + 1;
                continue;
            }
        };
        let start = open + 2;
        let end = text[start..]
            .find(close)
            .map_or(text.len(), |at| start + at);
        regions.push(start..end);
        rest = (end + 2).min(text.len());
        if end >= text.len() {
            break;
        }
    }
    regions
}

/// Where `member` is written in a read like `state.member` or `outputs["member"]`; `text`
/// is what the read's span covers.
fn member_span(text: &str, read: &Read, member: &str) -> Option<(Span, Written)> {
    let root = read.root();
    let rest = text.strip_prefix(root)?;
    if let Some(after) = rest.strip_prefix('.') {
        after.starts_with(member).then(|| {
            let start = read.span.start as usize + root.len() + 1;
            (
                Span::new(read.span.source, start, start + member.len()),
                Written::Dotted,
            )
        })
    } else {
        let inner = rest.strip_prefix('[')?;
        let quote = inner.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let name = inner[1..].strip_prefix(member)?;
        name.starts_with(quote).then(|| {
            let start = read.span.start as usize + root.len() + 2;
            (
                Span::new(read.span.source, start, start + member.len()),
                Written::Subscript,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::kdl::parse;

    fn index(text: &str) -> (Sources, Index) {
        let mut sources = Sources::new();
        let id = sources.add("w.kdl", text);
        let parsed = parse(text, id);
        let index = Index::build(&sources, &parsed.document);
        (sources, index)
    }

    fn list(text: &str) -> Vec<String> {
        let (sources, index) = index(text);
        let mut all: Vec<&Occurrence> = index.occurrences.iter().collect();
        all.extend(index.templates.iter().flat_map(TemplateSite::uses));
        all.sort_by_key(|occurrence| occurrence.span);
        all.into_iter()
            .map(|o| {
                format!(
                    "{}{:?} {} `{}`",
                    if o.declaration { "def " } else { "" },
                    o.kind,
                    o.name,
                    sources.text(o.span)
                )
            })
            .collect()
    }

    #[test]
    fn declarations_and_uses() {
        let text = r#"workflow "w" provider="p" {
    input "target"
    state { field "findings" type="array"; }
    provider "p" adapter="replay"
    agent "review" { prompt "Review {{ input.target }}"; output "findings"; }
    agent "again" use="review" session="review" { prompt "{{ outputs.review }} {{ outputs['review'] }}"; }
    decision "gate" {
        when "state.findings | length > 0" goto="review"
        otherwise goto="end"
    }
    set "findings" "[]"
    agent "x" use="discovered-agent" { prompt "p"; }
    agent "multi" {
        prompt """
            Fix {{ state.findings }} for {{ input.target }}
            (state.findings in prose is not a read)
            """
    }
}"#;
        insta::assert_snapshot!(list(text).join("\n"), @r"
        Provider p `p`
        def Input target `target`
        def Field findings `findings`
        def Provider p `p`
        def Node review `review`
        Input target `target`
        Field findings `findings`
        def Node again `again`
        Node review `review`
        Node review `review`
        Node review `review`
        Node review `review`
        def Node gate `gate`
        Field findings `findings`
        Node review `review`
        Field findings `findings`
        def Node x `x`
        def Node multi `multi`
        Field findings `findings`
        Input target `target`
        ");
    }
}
