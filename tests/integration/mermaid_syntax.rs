//! A structural validator for the Mermaid subset `atomic graph --mermaid` emits (no browser
//! is available to run mermaid-cli): the header, balanced `subgraph`/`end`, node shapes with
//! matching brackets, quoted labels holding only entity-escaped special characters, known
//! arrows, edges between defined ids, and `classDef`/`class` lines.

use std::collections::HashSet;

/// Node shapes: (open, close).
const SHAPES: [(&str, &str); 11] = [
    ("(((", ")))"),
    ("((", "))"),
    ("([", "])"),
    ("[[", "]]"),
    ("{{", "}}"),
    ("[/", "/]"),
    ("[/", "\\]"),
    ("[\\", "/]"),
    ("[", "]"),
    ("{", "}"),
    (">", "]"),
];

const ARROWS: [&str; 3] = ["-->", "-.->", "==>"];

const KEYWORDS: [&str; 9] = [
    "end",
    "subgraph",
    "graph",
    "flowchart",
    "class",
    "classDef",
    "style",
    "click",
    "direction",
];

/// Every problem found, one per line, empty when the text is valid.
pub(crate) fn problems(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, "flowchart TD")) => {}
        other => problems.push(format!("line 1: expected `flowchart TD`, found {other:?}")),
    }
    let mut defined: HashSet<String> = HashSet::new();
    let mut used: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    for (index, line) in lines {
        let number = index + 1;
        let mut report = |message: String| problems.push(format!("line {number}: {message}"));
        let line = line.trim();
        if line == "end" {
            if depth == 0 {
                report("`end` without `subgraph`".into());
            }
            depth = depth.saturating_sub(1);
        } else if line == "direction TB" {
            if depth == 0 {
                report("`direction` outside a subgraph".into());
            }
        } else if let Some(rest) = line.strip_prefix("subgraph ") {
            depth += 1;
            let Some((id, label)) = rest.split_once(' ') else {
                report(format!("subgraph without a label: {rest}"));
                continue;
            };
            check_id(id, &mut report);
            if !defined.insert(id.to_owned()) {
                report(format!("id `{id}` defined twice"));
            }
            match label.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                Some(quoted) => check_quoted(quoted, &mut report),
                None => report(format!("subgraph label not in brackets: {label}")),
            }
        } else if let Some(rest) = line.strip_prefix("classDef ") {
            let parts: Vec<&str> = rest.split(' ').collect();
            if parts.len() != 2 || !parts[1].split(',').all(|p| p.contains(':')) {
                report(format!("malformed classDef: {rest}"));
            }
        } else if let Some(rest) = line.strip_prefix("class ") {
            match rest.split_once(' ') {
                Some((ids, _)) => used.extend(ids.split(',').map(|id| (number, id.to_owned()))),
                None => report(format!("malformed class line: {rest}")),
            }
        } else if let Some(arrow) = ARROWS
            .iter()
            .find(|arrow| line.contains(&format!(" {arrow}")))
        {
            let (from, rest) = line.split_once(&format!(" {arrow}")).unwrap_or_default();
            let (label, to) = match rest.strip_prefix('|') {
                Some(labelled) => match labelled.rsplit_once("| ") {
                    Some((label, to)) => (Some(label), to),
                    None => {
                        report(format!("unterminated edge label: {rest}"));
                        continue;
                    }
                },
                None => (None, rest.trim_start()),
            };
            if let Some(label) = label {
                check_quoted(label, &mut report);
            }
            check_id(from, &mut report);
            check_id(to, &mut report);
            used.push((number, from.to_owned()));
            used.push((number, to.to_owned()));
        } else {
            let Some(split) = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) else {
                report(format!("not a statement: {line}"));
                continue;
            };
            let (id, shape) = line.split_at(split);
            check_id(id, &mut report);
            if !defined.insert(id.to_owned()) {
                report(format!("id `{id}` defined twice"));
            }
            let found = SHAPES.iter().find(|(open, close)| {
                shape.starts_with(open)
                    && shape.ends_with(close)
                    && shape.len() >= open.len() + close.len() + 2
                    && shape[open.len()..].starts_with('"')
                    && shape[..shape.len() - close.len()].ends_with('"')
            });
            match found {
                Some((open, close)) => {
                    check_quoted(&shape[open.len()..shape.len() - close.len()], &mut report);
                }
                None => report(format!("unknown node shape: {shape}")),
            }
        }
    }
    if depth != 0 {
        problems.push(format!("{depth} subgraph(s) not closed"));
    }
    for (number, id) in used {
        if !defined.contains(&id) {
            problems.push(format!("line {number}: `{id}` is used but never defined"));
        }
    }
    problems
}

fn check_id(id: &str, report: &mut impl FnMut(String)) {
    let valid = !id.is_empty()
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && id.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if !valid || KEYWORDS.contains(&id) {
        report(format!("invalid id `{id}`"));
    }
}

/// `"…"` holding no raw quote, pipe, backtick, angle bracket (except `<br/>`) or ampersand,
/// and only `#` that start an entity code.
fn check_quoted(quoted: &str, report: &mut impl FnMut(String)) {
    let Some(inner) = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')) else {
        report(format!("label not quoted: {quoted}"));
        return;
    };
    let inner = inner.replace("<br/>", "");
    if let Some(bad) = inner
        .chars()
        .find(|c| matches!(c, '"' | '|' | '`' | '<' | '>' | '&' | '\n'))
    {
        report(format!("unescaped {bad:?} in label {quoted}"));
    }
    let mut rest = inner.as_str();
    while let Some(position) = rest.find('#') {
        let after = &rest[position + 1..];
        let entity = after.split(';').next().unwrap_or_default();
        let known = ["quot", "lt", "gt", "amp"].contains(&entity)
            || (!entity.is_empty() && entity.chars().all(|c| c.is_ascii_digit()));
        if !known || !after.contains(';') {
            report(format!("`#` not starting an entity code in label {quoted}"));
            break;
        }
        rest = &after[entity.len() + 1..];
    }
}

#[test]
fn the_validator_accepts_the_emitted_subset() {
    let text = "flowchart TD\n  s_a[\"a #quot;b#quot;<br/>c #35;1\"]\n  subgraph c_n1 [\"loop\"]\n    direction TB\n    s_b{{\"b\"}}\n  end\n  s_a -->|\"when x #lt; 2\"| s_b\n  c_n1 -.-> s_a\n  classDef agent fill:#fff,stroke:#000\n  class s_a agent\n";
    assert_eq!(problems(text), Vec::<String>::new());
}

#[test]
fn the_validator_rejects_what_mermaid_would() {
    let bad = [
        ("graph LR\n", "flowchart TD"),
        ("flowchart TD\n  end[\"x\"]\n", "invalid id"),
        ("flowchart TD\n  s_a[\"say \"hi\"\"]\n", "unescaped"),
        ("flowchart TD\n  s_a[\"a | b\"]\n", "unescaped"),
        ("flowchart TD\n  s_a[\"#1\"]\n", "entity"),
        ("flowchart TD\n  s_a(\"a\"]\n", "shape"),
        ("flowchart TD\n  subgraph c_1 [\"x\"]\n", "not closed"),
        (
            "flowchart TD\n  s_a[\"a\"]\n  s_a --> s_b\n",
            "never defined",
        ),
        ("flowchart TD\n  s_a[\"a\"]\n  s_a[\"b\"]\n", "twice"),
    ];
    for (text, expected) in bad {
        let found = problems(text);
        assert!(
            found.iter().any(|problem| problem.contains(expected)),
            "{text:?} should be rejected with {expected:?}, got {found:?}"
        );
    }
}
