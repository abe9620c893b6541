//! Fuzzes atomic's KDL parser on arbitrary UTF-8: it must never panic, every span must lie
//! within the text on char boundaries with `start <= end`, and the canonical print of an
//! accepted document must parse again, without errors, to the same canonical text.
//!
//! Run: `cargo +nightly fuzz run parse_kdl -- -max_total_time=300` in `fuzz/`.

#![no_main]

use atomic::source::{SourceId, Span};
use atomic::syntax::kdl::{Document, KdlParse, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse(text, SourceId(0));
    check_spans(text, &parsed);
    if parsed.diagnostics.is_empty() {
        let canonical = parsed.document.to_canonical();
        let again = parse(&canonical, SourceId(0));
        assert!(
            again.diagnostics.is_empty(),
            "canonical text {canonical:?} of {text:?} fails: {:?}",
            again.diagnostics
        );
        assert_eq!(
            again.document.to_canonical(),
            canonical,
            "canonical print of {text:?} is not stable"
        );
    }
});

fn check(text: &str, span: Span) {
    assert!(span.start <= span.end, "reversed span {span:?} in {text:?}");
    assert!(
        span.end as usize <= text.len(),
        "span {span:?} past the end of {text:?}"
    );
    assert!(
        text.is_char_boundary(span.start as usize),
        "span {span:?} splits a char in {text:?}"
    );
    assert!(
        text.is_char_boundary(span.end as usize),
        "span {span:?} splits a char in {text:?}"
    );
}

fn check_spans(text: &str, parsed: &KdlParse) {
    for diagnostic in &parsed.diagnostics {
        check(text, diagnostic.span);
        for label in &diagnostic.labels {
            check(text, label.span);
        }
    }
    for comment in &parsed.comments {
        check(text, comment.span);
    }
    check_document(text, &parsed.document);
}

fn check_document(text: &str, doc: &Document) {
    check(text, doc.span);
    for node in &doc.nodes {
        check(text, node.span);
        check(text, node.name.span);
        if let Some(ty) = &node.ty {
            check(text, ty.span);
        }
        for entry in &node.entries {
            check(text, entry.span);
            check(text, entry.value_span);
            assert!(
                entry.span.start <= entry.value_span.start
                    && entry.value_span.end <= entry.span.end
            );
            if let Some(key) = &entry.key {
                check(text, key.span);
            }
            if let Some(ty) = &entry.ty {
                check(text, ty.span);
            }
        }
        if let Some(children) = &node.children {
            check_document(text, children);
        }
    }
}
