//! The KDL tree read with the grammar: which node kind a node is in its context, and what
//! the cursor is on. Works on the error-tolerant tree, so a half-typed file still answers.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::check::grammar::{ArgumentSpec, NodeSpec, PropertySpec, grammar};
use crate::syntax::kdl::{Document, Entry, Node};

/// A node and the grammar's view of it (`None`: not a node kind valid here).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame<'t> {
    /// The node.
    pub node: &'t Node,
    /// Its kind in this context.
    pub spec: Option<&'static NodeSpec>,
}

/// The node kind of a node named `name` inside `parent` (`None`: the top level).
pub(crate) fn spec_of(parent: Option<&'static NodeSpec>, name: &str) -> Option<&'static NodeSpec> {
    let grammar = grammar();
    match parent {
        None => (name == "workflow").then(|| grammar.workflow()),
        Some(parent) => CHILDREN
            .get(parent.id.as_str())
            .and_then(|children| children.get(name))
            .copied(),
    }
}

/// Every node kind's children by name, built once: the walk asks for every node of a file.
static CHILDREN: LazyLock<HashMap<&'static str, HashMap<&'static str, &'static NodeSpec>>> =
    LazyLock::new(|| {
        let grammar = grammar();
        grammar
            .nodes
            .iter()
            .map(|parent| {
                let children = grammar
                    .children(parent)
                    .map(|(_, spec)| (spec.name.as_str(), spec))
                    .collect();
                (parent.id.as_str(), children)
            })
            .collect()
    });

/// Which argument or property an entry fills.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Slot {
    /// A property with a grammar entry.
    Property(&'static PropertySpec),
    /// The argument at this position, with its grammar entry.
    Argument(usize, &'static ArgumentSpec),
    /// Something the grammar does not know here.
    Unknown,
}

/// The slot `entry` of `node` fills.
pub(crate) fn slot(frame: Frame<'_>, entry: &Entry) -> Slot {
    let Some(spec) = frame.spec else {
        return Slot::Unknown;
    };
    match &entry.key {
        Some(key) => spec
            .property(&key.value)
            .map_or(Slot::Unknown, Slot::Property),
        None => {
            let position = frame
                .node
                .entries
                .iter()
                .filter(|other| other.key.is_none())
                .position(|other| std::ptr::eq(other, entry))
                .unwrap_or(0);
            spec.argument(position)
                .map_or(Slot::Unknown, |argument| Slot::Argument(position, argument))
        }
    }
}

/// What the cursor is on, inside the innermost node that contains it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target<'t> {
    /// The node's name.
    Name,
    /// A property's key.
    Key(&'t Entry),
    /// A property's value or an argument.
    Value(&'t Entry),
    /// Inside the node's children block, between children.
    Children,
    /// Elsewhere on the node (between entries).
    Node,
    /// Outside every node.
    Nothing,
}

/// The nodes containing `offset`, outermost first, and what in the innermost one it is on.
pub(crate) fn locate(document: &Document, offset: usize) -> (Vec<Frame<'_>>, Target<'_>) {
    let eof = document.span.end as usize;
    let inside_block = |block: &Document| inside_block(block, offset, eof);
    let mut frames: Vec<Frame<'_>> = Vec::new();
    let mut nodes = &document.nodes;
    'descend: loop {
        let parent = frames.last().and_then(|frame| frame.spec);
        for node in nodes {
            let children = node.children.as_ref();
            let in_node = node.span.contains(offset)
                || children.is_some_and(|block| block.span.contains(offset));
            if !in_node {
                continue;
            }
            // The top level has no grammar parent; below an unknown node nothing is known.
            let spec = if frames.is_empty() || parent.is_some() {
                spec_of(parent, &node.name.value)
            } else {
                None
            };
            frames.push(Frame { node, spec });
            if let Some(block) = children
                && inside_block(block)
            {
                nodes = &block.nodes;
                continue 'descend;
            }
            break 'descend;
        }
        break;
    }
    let Some(frame) = frames.last() else {
        return (frames, Target::Nothing);
    };
    let node = frame.node;
    let target = if let Some(block) = &node.children
        && inside_block(block)
    {
        Target::Children
    } else if node.name.span.contains(offset) {
        Target::Name
    } else if let Some(entry) = node
        .entries
        .iter()
        .find(|entry| entry.span.contains(offset))
    {
        match &entry.key {
            Some(key) if key.span.contains(offset) => Target::Key(entry),
            _ => Target::Value(entry),
        }
    } else {
        Target::Node
    };
    (frames, target)
}

/// Whether `offset` is inside the braces of `block`: after `{` and at or before `}`; an
/// unclosed block (one running to the end of the text) contains the end too.
fn inside_block(block: &Document, offset: usize, eof: usize) -> bool {
    let (start, end) = (block.span.start as usize, block.span.end as usize);
    start < offset && (offset < end || (offset == end && end == eof))
}

/// Calls `visit` for every node with the frames leading to it (itself last).
pub(crate) fn walk<'t>(document: &'t Document, visit: &mut dyn FnMut(&[Frame<'t>])) {
    fn go<'t>(nodes: &'t [Node], frames: &mut Vec<Frame<'t>>, visit: &mut dyn FnMut(&[Frame<'t>])) {
        for node in nodes {
            let parent = frames.last().and_then(|frame| frame.spec);
            let spec = if frames.is_empty() || parent.is_some() {
                spec_of(parent, &node.name.value)
            } else {
                None
            };
            frames.push(Frame { node, spec });
            visit(frames);
            if let Some(block) = &node.children {
                go(&block.nodes, frames, visit);
            }
            frames.pop();
        }
    }
    go(&document.nodes, &mut Vec::new(), visit);
}

/// The node written at exactly `span`, found by descending through the nodes that contain
/// it (no walk of the whole tree).
pub(crate) fn find(document: &Document, span: crate::source::Span) -> Option<Frame<'_>> {
    let mut nodes = &document.nodes;
    let mut parent: Option<&'static NodeSpec> = None;
    let mut top = true;
    loop {
        let node = nodes
            .iter()
            .find(|node| node.span.start <= span.start && span.end <= node.span.end)?;
        let spec = if top || parent.is_some() {
            spec_of(parent, &node.name.value)
        } else {
            None
        };
        if node.span == span {
            return Some(Frame { node, spec });
        }
        nodes = &node.children.as_ref()?.nodes;
        parent = spec;
        top = false;
    }
}

/// The string value of property `key` of `node`, with the entry.
pub(crate) fn property<'t>(node: &'t Node, key: &str) -> Option<&'t Entry> {
    node.entries
        .iter()
        .rev()
        .find(|entry| entry.key.as_ref().is_some_and(|k| k.value == key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;
    use crate::syntax::kdl::parse;

    fn at(text: &str, marker: &str) -> (Vec<String>, String) {
        let offset = text.find(marker).expect("marker");
        let parsed = parse(text, SourceId(0));
        let (frames, target) = locate(&parsed.document, offset);
        let path = frames
            .iter()
            .map(|frame| {
                format!(
                    "{}{}",
                    frame.node.name.value,
                    if frame.spec.is_some() { "" } else { "?" }
                )
            })
            .collect();
        let target = match target {
            Target::Name => "name".to_owned(),
            Target::Key(entry) => format!("key {}", entry.key.as_ref().unwrap().value),
            Target::Value(entry) => format!("value {:?}", entry.value),
            Target::Children => "children".to_owned(),
            Target::Node => "node".to_owned(),
            Target::Nothing => "nothing".to_owned(),
        };
        (path, target)
    }

    #[test]
    fn finds_names_keys_values_and_blocks() {
        let text = "workflow \"w\" {\n    agent \"a\" provider=\"p\" {\n        prompt \"hi\"\n        \n    }\n}\n";
        assert_eq!(
            at(text, "agent"),
            (vec!["workflow".into(), "agent".into()], "name".into())
        );
        assert_eq!(at(text, "provider").1, "key provider");
        assert_eq!(at(text, "\"p\"").1, "value String(\"p\")");
        assert_eq!(
            at(text, "\"hi\""),
            (
                vec!["workflow".into(), "agent".into(), "prompt".into()],
                "value String(\"hi\")".into()
            )
        );
        let blank = text.find("        \n").unwrap() + 4;
        let parsed = parse(text, SourceId(0));
        let (frames, target) = locate(&parsed.document, blank);
        assert_eq!(frames.len(), 2);
        assert!(matches!(target, Target::Children));
        assert_eq!(at("wf {}", "wf").0, vec!["wf?".to_owned()]);
    }
}
