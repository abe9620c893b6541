//! `grammar/README.md` embeds the reference generated from `grammar/atomic.grammar.json`;
//! this keeps them in sync. Regenerate with `UPDATE_GRAMMAR_README=1 cargo nextest run
//! grammar_reference`.

use atomic::check::grammar::{grammar, reference_markdown};

const BEGIN: &str =
    "<!-- BEGIN GENERATED: do not edit; see tests/integration/grammar_reference.rs -->\n";
const END: &str = "<!-- END GENERATED -->";

#[test]
fn readme_reference_matches_the_grammar() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("grammar/README.md");
    let readme = std::fs::read_to_string(&path).expect("grammar/README.md exists");
    let start = readme.find(BEGIN).expect("README has the BEGIN marker") + BEGIN.len();
    let end = readme.find(END).expect("README has the END marker");
    let generated = reference_markdown(grammar());
    if readme[start..end] == generated {
        return;
    }
    if std::env::var_os("UPDATE_GRAMMAR_README").is_some() {
        let updated = format!("{}{generated}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).expect("README is writable");
        return;
    }
    panic!(
        "grammar/README.md is out of date: run `UPDATE_GRAMMAR_README=1 cargo nextest run grammar_reference`"
    );
}

#[test]
fn readme_workflow_examples_resolve_cleanly() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("grammar/README.md");
    let readme = std::fs::read_to_string(&path).expect("grammar/README.md exists");
    let blocks: Vec<&str> = readme
        .split("```kdl\n")
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .filter(|block| block.starts_with("workflow "))
        .collect();
    assert!(!blocks.is_empty());
    for block in blocks {
        let mut sources = atomic::source::Sources::new();
        let file = sources.add("README.md", block);
        let parsed = atomic::syntax::kdl::parse(block, file);
        assert_eq!(parsed.diagnostics, vec![]);
        let outcome = atomic::check::resolve(&sources, file, parsed.document);
        assert_eq!(outcome.diagnostics, vec![], "{block}");
    }
}
