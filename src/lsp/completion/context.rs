//! What is being typed at the cursor.

use crate::check::grammar::{NodeSpec, ValueKind};
use crate::lsp::snapshot::Snapshot;
use crate::lsp::tree::{self, Frame, Target, spec_of};
use crate::source::Span;
use crate::syntax::kdl::{Node, Value};

/// The slot a value is typed into.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Slot {
    /// `key=…`.
    Property(String),
    /// The argument at this position.
    Argument(usize),
}

/// What the cursor is in the middle of.
#[derive(Debug)]
pub(super) enum Context<'t> {
    /// A node name in the block of `parent` (`None`: the top level), replacing `replace`.
    NodeName {
        parent: Option<&'static NodeSpec>,
        siblings: Vec<&'t str>,
        replace: Span,
    },
    /// A property key (or the next argument) of a `node`.
    Property {
        node: &'static NodeSpec,
        present: Vec<String>,
        arguments: usize,
        replace: Span,
    },
    /// A value for `slot` of `node`; `quoted` when the cursor is inside the quotes.
    Value {
        node: &'static NodeSpec,
        slot: Slot,
        quoted: bool,
        replace: Span,
    },
    /// A template variable: a root (`root` is `None`) or a member of `root`. `dot` is the
    /// offset of the `.` before a member.
    Variable {
        root: Option<String>,
        dot: usize,
        locals: Vec<String>,
        replace: Span,
    },
    /// Nothing to complete.
    Nothing,
}

/// A token of the line being typed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Token {
    Word(usize, usize),
    Str(usize, usize),
    Equals(usize),
}

/// Works out the context at byte `offset`.
pub(super) fn context(snapshot: &Snapshot, offset: usize) -> Context<'_> {
    let text = snapshot.text();
    if let Some(site) = snapshot.index.template_at(offset) {
        // The literal's own text, not the decoded template: a multi-line string is dedented,
        // but its code reads the same.
        let start = site.template.span.start as usize + site.template.offset as usize;
        if start <= offset && offset < site.template.span.end as usize {
            let before = &text[start..offset];
            return if site.expression || in_code(before) {
                variable(snapshot, offset, before)
            } else {
                Context::Nothing
            };
        }
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |newline| newline + 1);
    let Some((tokens, open)) = scan(text, line_start, offset) else {
        return Context::Nothing;
    };
    let Some(&first) = tokens.first() else {
        if open.is_some() {
            // A string where a node name goes: nothing is known yet.
            return Context::Nothing;
        }
        return node_name(snapshot, offset, Span::new(Snapshot::FILE, offset, offset));
    };
    let Token::Word(name_start, name_end) = first else {
        return Context::Nothing;
    };
    if tokens.len() == 1 && name_end == offset && open.is_none() {
        return node_name(snapshot, offset, snapshot.span(name_start, name_end));
    }
    let name = &text[name_start..name_end];
    let Some(node) = node_spec(snapshot, name_start, name) else {
        return Context::Nothing;
    };
    let rest = &tokens[1..];
    let present: Vec<String> = rest
        .windows(2)
        .filter_map(|pair| match pair {
            [Token::Word(start, end), Token::Equals(_)] => Some(text[*start..*end].to_owned()),
            _ => None,
        })
        .collect();
    // Arguments written so far: values not preceded by `=` and not followed by one.
    let arguments = rest
        .iter()
        .enumerate()
        .filter(|&(index, token)| {
            let value = matches!(token, Token::Word(..) | Token::Str(..));
            let keyed = index > 0 && matches!(rest[index - 1], Token::Equals(_));
            let key = matches!(rest.get(index + 1), Some(Token::Equals(_)));
            value && !keyed && !key
        })
        .count();
    if let Some(quote) = open {
        let slot = match rest.last() {
            Some(Token::Equals(_)) => key_before(text, rest).map(Slot::Property),
            _ => Some(Slot::Argument(arguments)),
        };
        let Some(slot) = slot else {
            return Context::Nothing;
        };
        let inner_start = quote + 1;
        let kind = slot_kind(node, &slot);
        if matches!(kind, Some(ValueKind::Template | ValueKind::Expr)) {
            let before = &text[inner_start..offset];
            return if kind == Some(ValueKind::Expr) || in_code(before) {
                variable(snapshot, offset, before)
            } else {
                Context::Nothing
            };
        }
        let line_end = text[offset..]
            .find('\n')
            .map_or(text.len(), |end| offset + end);
        let close = text[offset..line_end]
            .find('"')
            .map_or(offset, |at| offset + at);
        return Context::Value {
            node,
            slot,
            quoted: true,
            replace: snapshot.span(inner_start, close),
        };
    }
    match rest {
        [.., Token::Word(key_start, key_end), Token::Equals(at)] if *at + 1 == offset => {
            Context::Value {
                node,
                slot: Slot::Property(text[*key_start..*key_end].to_owned()),
                quoted: false,
                replace: snapshot.span(offset, offset),
            }
        }
        [
            ..,
            Token::Word(key_start, key_end),
            Token::Equals(_),
            Token::Word(start, end),
        ] if *end == offset => Context::Value {
            node,
            slot: Slot::Property(text[*key_start..*key_end].to_owned()),
            quoted: false,
            replace: snapshot.span(*start, *end),
        },
        [.., Token::Word(start, end)] if *end == offset => Context::Property {
            node,
            present,
            arguments: arguments.saturating_sub(1),
            replace: snapshot.span(*start, *end),
        },
        _ if offset > line_start && text.as_bytes()[offset - 1].is_ascii_whitespace() => {
            Context::Property {
                node,
                present,
                arguments,
                replace: snapshot.span(offset, offset),
            }
        }
        _ => Context::Nothing,
    }
}

/// Tokenises the line from `line_start` to `offset`, from the start of the last node on it
/// (after the last `{`, `}` or `;`). `None` inside a comment. The second value is the
/// offset of the opening quote when the cursor is inside a string.
fn scan(text: &str, line_start: usize, offset: usize) -> Option<(Vec<Token>, Option<usize>)> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = line_start;
    while at < offset {
        match bytes[at] {
            b'"' => {
                let start = at;
                at += 1;
                while at < offset && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
                if at >= offset {
                    return Some((tokens, Some(start)));
                }
                at += 1;
                tokens.push(Token::Str(start, at));
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => return None,
            b'{' | b'}' | b';' => {
                tokens.clear();
                at += 1;
            }
            b'=' => {
                tokens.push(Token::Equals(at));
                at += 1;
            }
            byte if byte.is_ascii_whitespace() => at += 1,
            _ => {
                let start = at;
                while at < offset
                    && !matches!(bytes[at], b'"' | b'{' | b'}' | b';' | b'=')
                    && !bytes[at].is_ascii_whitespace()
                {
                    at += 1;
                }
                tokens.push(Token::Word(start, at));
            }
        }
    }
    Some((tokens, None))
}

fn key_before(text: &str, tokens: &[Token]) -> Option<String> {
    match tokens {
        [.., Token::Word(start, end), Token::Equals(_)] => Some(text[*start..*end].to_owned()),
        _ => None,
    }
}

fn slot_kind(node: &NodeSpec, slot: &Slot) -> Option<ValueKind> {
    match slot {
        Slot::Property(key) => node.property(key).map(|property| property.kind),
        Slot::Argument(position) => node.argument(*position).map(|argument| argument.kind),
    }
}

/// The kind of the node whose name starts at `start`.
fn node_spec(snapshot: &Snapshot, start: usize, name: &str) -> Option<&'static NodeSpec> {
    let (frames, target) = tree::locate(&snapshot.parse.document, start);
    match target {
        Target::Name => frames.last().and_then(|frame| frame.spec),
        _ => match frames.last() {
            None => spec_of(None, name),
            Some(frame) => frame.spec.and_then(|parent| spec_of(Some(parent), name)),
        },
    }
}

fn node_name(snapshot: &Snapshot, offset: usize, replace: Span) -> Context<'_> {
    let (frames, target) = tree::locate(&snapshot.parse.document, replace.start as usize);
    let (block, parent): (Option<&Node>, Option<&'static NodeSpec>) = match target {
        Target::Name if frames.len() >= 2 => {
            let parent = frames[frames.len() - 2];
            (Some(parent.node), parent.spec)
        }
        Target::Name | Target::Nothing => (None, None),
        Target::Children => match frames.last() {
            Some(frame) => (Some(frame.node), frame.spec),
            None => (None, None),
        },
        Target::Key(_) | Target::Value(_) | Target::Node => return Context::Nothing,
    };
    if block.is_some() && parent.is_none() {
        return Context::Nothing;
    }
    let siblings = match block {
        Some(node) => node
            .children
            .iter()
            .flat_map(|block| &block.nodes)
            .filter(|child| !child.name.span.contains(offset))
            .map(|child| child.name.value.as_str())
            .collect(),
        None => snapshot
            .parse
            .document
            .nodes
            .iter()
            .filter(|node| !node.name.span.contains(offset))
            .map(|node| node.name.value.as_str())
            .collect(),
    };
    Context::NodeName {
        parent,
        siblings,
        replace,
    }
}

/// Whether the end of `before` is inside `{{ … }}` or `{% … %}`.
fn in_code(before: &str) -> bool {
    let open = before.rfind("{{").max(before.rfind("{%"));
    let close = before.rfind("}}").max(before.rfind("%}"));
    match (open, close) {
        (Some(open), Some(close)) => open > close,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// A variable being typed at `offset`; `before` is the template text up to it.
fn variable<'t>(snapshot: &'t Snapshot, offset: usize, before: &str) -> Context<'t> {
    let chain_len = before
        .bytes()
        .rev()
        .take_while(|&byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.')
        .count();
    let chain = &before[before.len() - chain_len..];
    if chain.starts_with(|c: char| c.is_ascii_digit()) {
        return Context::Nothing;
    }
    let text = snapshot.text();
    let after = text[offset..]
        .bytes()
        .take_while(|&byte| byte.is_ascii_alphanumeric() || byte == b'_')
        .count();
    let mut parts = chain.split('.');
    let first = parts.next().unwrap_or_default();
    let (root, partial) = match (parts.next(), parts.next()) {
        (None, _) => (None, first),
        (Some(partial), None) => (Some(first.to_owned()), partial),
        (Some(_), Some(_)) => return Context::Nothing,
    };
    let start = offset - partial.len();
    Context::Variable {
        root,
        dot: start.saturating_sub(1),
        locals: locals(snapshot, offset),
        replace: snapshot.span(start, offset + after),
    }
}

/// Names bound where `offset` is: the item and index of enclosing `for-each` parallels and
/// the task and index of enclosing `task-loop`s, `error` in a recovery node.
fn locals(snapshot: &Snapshot, offset: usize) -> Vec<String> {
    let (frames, _) = tree::locate(&snapshot.parse.document, offset);
    let mut locals = Vec::new();
    for Frame { node, spec } in &frames {
        let Some(spec) = spec else { continue };
        let default = match spec.id.as_str() {
            "parallel" if tree::property(node, "for-each").is_some() => Some("item"),
            "task-loop" => Some("task"),
            _ => None,
        };
        if let Some(default) = default {
            let name = match tree::property(node, "as").map(|entry| &entry.value) {
                Some(Value::String(name)) => name.as_str().to_owned(),
                _ => default.to_owned(),
            };
            locals.push(name);
            locals.push("index".to_owned());
        }
        if matches!(
            tree::property(node, "recovery").map(|entry| &entry.value),
            Some(Value::Bool(true))
        ) {
            locals.push("error".to_owned());
        }
    }
    locals.sort();
    locals.dedup();
    locals
}
