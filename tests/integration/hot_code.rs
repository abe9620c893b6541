//! `link/hot-code.txt`, the functions release builds place first (build.rs): a list the
//! linker reads, so a malformed one would silently stop packing the code a run touches.

use crate::support::root;

#[test]
fn the_hot_code_list_names_the_functions_of_a_durable_run_once_each() {
    let path = root().join("link/hot-code.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}; run link/order-hot-code.py", path.display()));
    let mut lines = text.lines();
    assert!(
        lines.next().is_some_and(|line| line.starts_with("# ")),
        "the first line says where the list comes from"
    );
    let names: Vec<&str> = lines.collect();
    assert!(
        (1_000..=50_000).contains(&names.len()),
        "{} names",
        names.len()
    );
    let mut seen = std::collections::HashSet::new();
    for name in &names {
        assert!(
            !name.is_empty() && !name.contains(char::is_whitespace),
            "`{name}` is not a symbol"
        );
        assert!(seen.insert(*name), "`{name}` is listed twice");
    }
    // Both halves of a durable step: atomic's SQLite store (Rust) and SQLite's engine (C).
    assert!(
        names
            .iter()
            .any(|name| name.contains("6atomic5store6sqlite")),
        "no function of atomic's SQLite store"
    );
    assert!(names.contains(&"sqlite3VdbeExec"), "no SQLite engine");
}
