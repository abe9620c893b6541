//! Loads the grammar once, expanding shared sets.

use std::sync::LazyLock;

use super::Grammar;

/// The grammar file, compiled into the binary.
const SOURCE: &str = include_str!("../../../grammar/atomic.grammar.json");

static GRAMMAR: LazyLock<Grammar> = LazyLock::new(|| {
    let grammar: Grammar =
        serde_json::from_str(SOURCE).expect("grammar/atomic.grammar.json is valid (tested)");
    expand(grammar)
});

/// The language definition.
#[must_use]
pub fn grammar() -> &'static Grammar {
    &GRAMMAR
}

/// Merges each node's `include`d shared sets into it: shared arguments come first, shared
/// properties and children after the node's own.
fn expand(mut grammar: Grammar) -> Grammar {
    for node in &mut grammar.nodes {
        for key in std::mem::take(&mut node.include) {
            let shared = grammar
                .shared
                .get(&key)
                .expect("included shared sets exist (tested)");
            let own = std::mem::take(&mut node.arguments);
            node.arguments = shared.arguments.clone();
            node.arguments.extend(own);
            node.properties.extend(shared.properties.iter().cloned());
            node.children.extend(shared.children.iter().cloned());
            node.include.push(key);
        }
    }
    grammar.index = grammar
        .nodes
        .iter()
        .enumerate()
        .map(|(position, node)| (node.id.clone(), position))
        .collect();
    for position in 0..grammar.nodes.len() {
        let specs: Vec<(usize, usize)> = grammar.nodes[position]
            .children
            .iter()
            .enumerate()
            .filter_map(|(child, spec)| Some((child, *grammar.index.get(&spec.node)?)))
            .collect();
        let mut index = std::collections::HashMap::new();
        for &(child, spec) in &specs {
            // The first child with a name wins, as a search in order would find it.
            index
                .entry(grammar.nodes[spec].name.clone())
                .or_insert((child, spec));
        }
        grammar.nodes[position].child_index = index;
        grammar.nodes[position].child_specs = specs;
    }
    grammar
}
