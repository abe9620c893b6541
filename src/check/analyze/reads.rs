//! What a template or expression reads.
//!
//! Input: one [`Template`] (a prompt, a command argument, a `set` value) or [`Expr`] (a
//! `when`, `until`, `while` or `for-each`). Output: every variable path it reads, as
//! minijinja's `undeclared_variables(true)` reports them (`state.findings`,
//! `outputs.review.text`, `item`), each with the span of one place it is written; or the
//! parse error, with the span of the offending text.
//!
//! The checker, the runtime (to know what a step depends on) and the language server (hover,
//! go to definition inside `{{ }}`) all call these two functions, so they agree on what a
//! template reads. They do not judge whether a read is allowed: that depends on where the
//! template is (see the `undeclared-variable` rule).
//!
//! Spans: minijinja reports paths, not positions, so each path is found again in the text:
//! the code parts of the template (inside `{{ }}` and `{% %}`, outside string literals) are
//! split into dotted chains (`state.findings`), and every chain equal to a reported path is
//! one [`Read`]. A path written in a way this scan does not see (`state . x`) gets one read
//! at its root's first occurrence, or at the whole literal.

use std::collections::{BTreeSet, HashSet};
use std::ops::Range;
use std::sync::LazyLock;

use minijinja::Environment;
use minijinja::machinery;
use minijinja::syntax::SyntaxConfig;

use super::undeclared;

use crate::ir::{Expr, Template};
use crate::source::Span;

/// The environment the runtime renders with: minijinja's defaults (its filters, tests and
/// global functions such as `range` and `namespace`). Built once; its globals are not reads.
static ENVIRONMENT: LazyLock<Environment<'static>> = LazyLock::new(Environment::new);

/// One variable path read by a template, and where.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Read {
    /// The dotted path: `state.findings`, `outputs.review`, `item`. Attribute lookups after
    /// the root are included; an index (`state.items[0]`) or call ends the path.
    pub path: String,
    /// Where this occurrence is written (the whole dotted text), or the literal's span when
    /// it cannot be located exactly.
    pub span: Span,
}

impl Read {
    /// The first segment: `state` in `state.findings`.
    #[must_use]
    pub fn root(&self) -> &str {
        self.path.split('.').next().unwrap_or(&self.path)
    }

    /// The second segment, if any: `findings` in `state.findings.count`.
    #[must_use]
    pub fn member(&self) -> Option<&str> {
        self.path.split('.').nth(1)
    }

    /// Where [`Read::head`] is written, when this read is located exactly (a fix replaces
    /// only the misspelt part: `state.sumary.count` keeps `.count`).
    #[must_use]
    pub fn head_span(&self) -> Option<Span> {
        (self.span.len() == self.path.len()).then(|| self.span.slice(0..self.head().len()))
    }

    /// The root and member, `state.findings` in `state.findings.count` (the path itself when
    /// it has fewer than two segments).
    #[must_use]
    pub fn head(&self) -> &str {
        match self.path.match_indices('.').nth(1) {
            Some((end, _)) => &self.path[..end],
            None => &self.path,
        }
    }
}

/// A template or expression that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    /// minijinja's description, lowercase: `unexpected end of input, expected end of variable block`.
    pub message: String,
    /// The offending text, or the whole literal when minijinja gives no position.
    pub span: Span,
}

/// Every variable path `template` reads, in source order; or why it does not parse.
///
/// A template without `{{`, `{%` or `{#` is a constant and reads nothing (minijinja is not
/// called). Names of minijinja's global functions (`range`, `dict`, `namespace`, …) are not
/// reads.
///
/// # Errors
/// The parse error, positioned with [`Template::span_of`].
pub fn template_reads(template: &Template) -> Result<Vec<Read>, TemplateError> {
    place(template, &scan_template(&template.source))
}

/// Every variable path `expr` (a `when`, `until`, `while` or `for-each` expression) reads,
/// in source order; or why it does not parse.
///
/// # Errors
/// The parse error, positioned with [`Template::span_of`].
pub fn expression_reads(expr: &Expr) -> Result<Vec<Read>, TemplateError> {
    place(expr, &scan_expression(&expr.source))
}

/// What one text reads, with byte ranges in the text rather than spans in the file: the
/// same text written twice scans the same, so the analysis scans each distinct text once
/// (`read_cache.rs`). A `None` range stands for the whole literal.
#[derive(Clone, Debug)]
pub(super) struct Scan(Result<Vec<Ranged>, Ranged>);

/// A path read, or a parse error's message, with the text range it points at.
type Ranged = (String, Option<Range<usize>>);

/// Scans a template's text.
pub(super) fn scan_template(source: &str) -> Scan {
    if !(source.contains("{{") || source.contains("{%") || source.contains("{#")) {
        // A constant (`Template::is_literal`): minijinja is not called.
        return Scan(Ok(Vec::new()));
    }
    // Parsed once, with the syntax `ENVIRONMENT` compiles with: its parse error is the
    // one compiling would report (compiling adds nothing but bytecode).
    match machinery::parse(source, "<string>", SyntaxConfig::default()) {
        Ok(ast) => Scan(Ok(locate(
            source,
            undeclared::in_template(&ast),
            &code_regions(source),
        ))),
        Err(error) => Scan(Err(parse_error(source, &error))),
    }
}

/// Scans an expression's text.
pub(super) fn scan_expression(source: &str) -> Scan {
    match machinery::parse_expr(source) {
        Ok(ast) => {
            let whole = 0..source.len();
            Scan(Ok(locate(
                source,
                undeclared::in_expression(&ast),
                std::slice::from_ref(&whole),
            )))
        }
        Err(error) => Scan(Err(parse_error(source, &error))),
    }
}

/// The reads of `template`, whose text `scan` describes, positioned in the file.
pub(super) fn place(template: &Template, scan: &Scan) -> Result<Vec<Read>, TemplateError> {
    let span = |range: &Option<Range<usize>>| match range {
        Some(range) => template.span_of(range.clone()),
        None => template.span,
    };
    match &scan.0 {
        Ok(found) => {
            let mut reads: Vec<Read> = found
                .iter()
                .map(|(path, range)| Read {
                    path: path.clone(),
                    span: span(range),
                })
                .collect();
            reads.sort_by(|a, b| (a.span, &a.path).cmp(&(b.span, &b.path)));
            Ok(reads)
        }
        Err((message, range)) => Err(TemplateError {
            message: message.clone(),
            span: span(range),
        }),
    }
}

/// minijinja's message and the offending range, if it gives a usable one.
fn parse_error(source: &str, error: &minijinja::Error) -> Ranged {
    let message = match error.detail() {
        Some(detail) => detail.to_owned(),
        None => error.kind().to_string(),
    };
    let range = match error.range() {
        // minijinja may point at one byte of a multi-byte character: widen to whole chars.
        Some(range) if range.start <= range.end && range.end <= source.len() => {
            Some(source.floor_char_boundary(range.start)..source.ceil_char_boundary(range.end))
        }
        _ => None,
    };
    (message, range)
}

/// Pairs each reported path with the places it is written, as ranges of `source`.
fn locate(source: &str, paths: HashSet<String>, regions: &[Range<usize>]) -> Vec<Ranged> {
    let paths: BTreeSet<String> = paths
        .into_iter()
        .filter(|path| !is_global(path.split('.').next().unwrap_or(path)))
        .collect();
    if paths.is_empty() {
        return Vec::new();
    }
    let chains = dotted_chains(source, regions);
    let mut reads = Vec::new();
    for path in paths {
        let mut found = false;
        for chain in chains.iter().filter(|chain| chain.plain == path) {
            found = true;
            reads.push(match &chain.extended {
                Some((extended, range)) => (extended.clone(), Some(range.clone())),
                None => (path.clone(), Some(chain.range.clone())),
            });
        }
        if !found {
            let root = path.split('.').next().unwrap_or(&path);
            let range = chains
                .iter()
                .find(|chain| chain.root() == root)
                .map(|chain| chain.range.start..chain.range.start + root.len());
            reads.push((path, range));
        }
    }
    reads
}

/// Names of the environment's global functions and values (`range`, `namespace`, …).
static GLOBALS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    ENVIRONMENT
        .globals()
        .map(|(name, _)| name.to_owned())
        .collect()
});

fn is_global(name: &str) -> bool {
    GLOBALS.contains(name)
}

/// A run of `ident(.ident)*` in code, not itself preceded by `.`, and what follows it:
/// `["key"]` subscripts with a string key and more `.ident`s read as further segments, so
/// `outputs["re-review"].text` is the path `outputs.re-review.text`.
struct Chain<'t> {
    /// The dotted text before any subscript (what minijinja reports as the path).
    plain: &'t str,
    /// Its range.
    range: std::ops::Range<usize>,
    /// With subscripts: the extended path and the range up to its end.
    extended: Option<(String, std::ops::Range<usize>)>,
}

impl Chain<'_> {
    fn root(&self) -> &str {
        self.plain.split('.').next().unwrap_or(self.plain)
    }
}

/// Byte ranges of the code in a template: the insides of `{{ }}` and `{% %}`. Comments
/// (`{# #}`) and text are skipped. An unclosed tag runs to the end.
fn code_regions(source: &str) -> Vec<std::ops::Range<usize>> {
    let mut regions = Vec::new();
    let mut rest = 0;
    while let Some(found) = source[rest..].find('{') {
        let open = rest + found;
        let close = match source.as_bytes().get(open + 1) {
            Some(b'{') => "}}",
            Some(b'%') => "%}",
            Some(b'#') => "#}",
            _ => {
                rest = open + 1;
                continue;
            }
        };
        let start = open + 2;
        let end = source[start..]
            .find(close)
            .map_or(source.len(), |at| start + at);
        if close != "#}" {
            regions.push(start..end);
        }
        rest = (end + 2).min(source.len());
    }
    regions
}

/// The dotted chains in `regions` of `source`, skipping string literals.
fn dotted_chains<'t>(source: &'t str, regions: &[std::ops::Range<usize>]) -> Vec<Chain<'t>> {
    let bytes = source.as_bytes();
    let mut chains = Vec::new();
    for region in regions {
        let mut at = region.start;
        let mut previous: Option<u8> = None;
        while at < region.end {
            let byte = bytes[at];
            if byte == b'"' || byte == b'\'' {
                at = skip_string(bytes, at, region.end);
                previous = Some(byte);
                continue;
            }
            if is_ident_start(byte) && previous.is_none_or(|p| !is_ident(p) && p != b'.') {
                let start = at;
                let mut end = ident_end(bytes, at, region.end);
                while end + 1 < region.end && bytes[end] == b'.' && is_ident_start(bytes[end + 1]) {
                    end = ident_end(bytes, end + 1, region.end);
                }
                let (extended, after) = subscripts(source, start..end, region.end);
                chains.push(Chain {
                    plain: &source[start..end],
                    range: start..end,
                    extended,
                });
                previous = Some(bytes[after - 1]);
                at = after;
                continue;
            }
            previous = Some(byte);
            at += 1;
        }
    }
    chains
}

/// Reads `["key"]` subscripts (and `.ident`s after them) following the chain at `plain`;
/// returns the extended path, if any, and where scanning continues.
fn subscripts(
    source: &str,
    plain: std::ops::Range<usize>,
    end: usize,
) -> (Option<(String, std::ops::Range<usize>)>, usize) {
    let bytes = source.as_bytes();
    let mut path = source[plain.clone()].to_owned();
    let mut at = plain.end;
    let mut extended = false;
    loop {
        if at < end && bytes[at] == b'[' {
            let open = at + 1;
            let Some(&quote) = bytes.get(open).filter(|&&q| q == b'"' || q == b'\'') else {
                break;
            };
            let key_start = open + 1;
            let Some(key_len) = source
                .get(key_start..end)
                .and_then(|rest| rest.find(quote as char))
            else {
                break;
            };
            let key = &source[key_start..key_start + key_len];
            let close = key_start + key_len + 1;
            if key.is_empty() || key.contains(['.', '\\']) || bytes.get(close) != Some(&b']') {
                break;
            }
            path.push('.');
            path.push_str(key);
            at = close + 1;
            extended = true;
        } else if extended && at + 1 < end && bytes[at] == b'.' && is_ident_start(bytes[at + 1]) {
            let segment_end = ident_end(bytes, at + 1, end);
            path.push_str(&source[at..segment_end]);
            at = segment_end;
        } else {
            break;
        }
    }
    if extended {
        (Some((path, plain.start..at)), at)
    } else {
        (None, plain.end)
    }
}

/// The byte range of `span` inside `template`'s text, when offsets are exact.
pub(crate) fn relative(template: &Template, span: Span) -> Option<std::ops::Range<usize>> {
    if !template.exact || span.source != template.span.source {
        return None;
    }
    let base = template.span.start as usize + template.offset as usize;
    let start = (span.start as usize).checked_sub(base)?;
    let end = (span.end as usize).checked_sub(base)?;
    (end <= template.source.len() && start <= end).then_some(start..end)
}

/// For a read written `outputs.re-review` (which minijinja parses as `outputs.re - review`):
/// the dashed name `re-review` if `exists` accepts it. Tries the longest name first.
pub(crate) fn dashed_member(
    template: &Template,
    read: &Read,
    exists: impl Fn(&str) -> bool,
) -> Option<String> {
    let member = read.member()?;
    if read.path.split('.').count() != 2 {
        return None;
    }
    let range = relative(template, read.span)?;
    let rest = template.source.get(range.end..)?;
    let bytes = rest.as_bytes();
    let mut name = member.to_owned();
    let mut best = None;
    let mut at = 0;
    while bytes.get(at) == Some(&b'-') && bytes.get(at + 1).is_some_and(|&b| is_ident(b)) {
        let end = ident_end(bytes, at + 1, bytes.len());
        name.push_str(&rest[at..end]);
        if exists(&name) {
            best = Some(name.clone());
        }
        at = end;
    }
    best
}

/// Whether `read` is the tail of a dashed member (`review` in `outputs.re-review`), which
/// the rule reading the head reports.
pub(crate) fn is_dash_tail(template: &Template, read: &Read) -> bool {
    let Some(range) = relative(template, read.span) else {
        return false;
    };
    let before = &template.source.as_bytes()[..range.start];
    let Some((&b'-', mut rest)) = before.split_last() else {
        return false;
    };
    while let Some((&last, init)) = rest.split_last() {
        if is_ident(last) || last == b'-' {
            rest = init;
        } else {
            return last == b'.';
        }
    }
    false
}

fn skip_string(bytes: &[u8], open: usize, end: usize) -> usize {
    let quote = bytes[open];
    let mut at = open + 1;
    while at < end {
        match bytes[at] {
            b'\\' => at += 2,
            byte if byte == quote => return at + 1,
            _ => at += 1,
        }
    }
    end
}

fn ident_end(bytes: &[u8], mut at: usize, end: usize) -> usize {
    while at < end && is_ident(bytes[at]) {
        at += 1;
    }
    at
}

fn is_ident_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_'
}

fn is_ident(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::analyze::testing::template;

    fn paths(reads: &[Read]) -> Vec<&str> {
        reads.iter().map(|read| read.path.as_str()).collect()
    }

    #[test]
    fn reads_dotted_paths_in_source_order() {
        let t = template("Fix {{ state.findings | tojson }} in {{ input.target }}");
        let reads = template_reads(&t).unwrap();
        assert_eq!(paths(&reads), ["state.findings", "input.target"]);
        let start = t.span.start as usize + 1;
        assert_eq!(reads[0].span.range(), start + 7..start + 21);
        assert_eq!(reads[1].span.range(), start + 40..start + 52);
    }

    #[test]
    fn every_occurrence_is_a_read() {
        let t = template("{{ state.x }} and {{ state.x }}");
        let reads = template_reads(&t).unwrap();
        assert_eq!(paths(&reads), ["state.x", "state.x"]);
        assert!(reads[0].span.start < reads[1].span.start);
    }

    #[test]
    fn loop_variables_globals_strings_and_filters_are_not_reads() {
        let t = template(
            "{% for f in state.files %}{{ loop.index }} {{ f.name }} {{ 'state.y' }}{% endfor %}\
             {{ range(3) | length }}{# outputs.z #}",
        );
        assert_eq!(paths(&template_reads(&t).unwrap()), ["state.files"]);
    }

    #[test]
    fn literal_templates_read_nothing() {
        assert!(template_reads(&template("just text")).unwrap().is_empty());
    }

    #[test]
    fn an_index_ends_the_path_and_a_method_is_part_of_it() {
        let t = template("{{ outputs.review.items[0].x }}{{ state.m.keys() }}");
        assert_eq!(
            paths(&template_reads(&t).unwrap()),
            ["outputs.review.items", "state.m.keys"]
        );
        let read = &template_reads(&t).unwrap()[0];
        assert_eq!(read.root(), "outputs");
        assert_eq!(read.member(), Some("review"));
        assert_eq!(read.head(), "outputs.review");
    }

    #[test]
    fn expressions_are_parsed_as_expressions() {
        let e = template("state.rounds < 3 and not outputs.gate");
        let reads = expression_reads(&e).unwrap();
        assert_eq!(paths(&reads), ["state.rounds", "outputs.gate"]);
        assert_eq!(
            reads[0].span.range(),
            e.span.start as usize + 1..e.span.start as usize + 13
        );
    }

    #[test]
    fn unlocatable_paths_point_at_their_root_or_the_literal() {
        let t = template("{{ state . x }}");
        let reads = template_reads(&t).unwrap();
        assert_eq!(paths(&reads), ["state.x"]);
        let start = t.span.start as usize + 1;
        assert_eq!(reads[0].span.range(), start + 3..start + 8);
    }

    #[test]
    fn syntax_errors_are_positioned() {
        let t = template("Hi {{ state.x + }}");
        let error = template_reads(&t).unwrap_err();
        assert!(!error.message.is_empty());
        assert!(error.span.start > t.span.start, "{error:?}");
        assert!(error.span.end <= t.span.end);

        let e = template("state.x ==");
        let error = expression_reads(&e).unwrap_err();
        assert!(error.span.end <= e.span.end, "{error:?}");
    }

    #[test]
    fn syntax_errors_at_a_multi_byte_character_cover_whole_characters() {
        let cases = [
            ("{{ sta\u{fffd}te.x }}", false),
            ("{{ é }}", false),
            ("{{ x }}{{ 😁", false),
            ("sta\u{fffd}te.x", true),
        ];
        for (text, is_expr) in cases {
            let t = template(text);
            let parsed = if is_expr {
                expression_reads(&t)
            } else {
                template_reads(&t)
            };
            let error = parsed.expect_err("does not parse");
            let literal = format!("\"{text}\"");
            let start = error.span.start - t.span.start;
            let end = error.span.end - t.span.start;
            assert!(
                literal.is_char_boundary(start as usize) && literal.is_char_boundary(end as usize),
                "{text:?}: {error:?}"
            );
        }
    }

    #[test]
    fn string_subscripts_extend_the_path() {
        let t = template("{{ outputs[\"re-review\"].text }} {{ outputs['x'] }} {{ outputs[key] }}");
        let reads = template_reads(&t).unwrap();
        assert_eq!(
            paths(&reads),
            ["outputs.re-review.text", "outputs.x", "outputs", "key"]
        );
        let start = t.span.start as usize + 1;
        assert_eq!(reads[0].span.range(), start + 3..start + 28);
        assert_eq!(reads[0].member(), Some("re-review"));
    }

    #[test]
    fn dashed_names_written_with_dots_are_recognised() {
        let t = template("{{ outputs.re-review-2 }} {{ state.a - b }}");
        let reads = template_reads(&t).unwrap();
        assert_eq!(paths(&reads), ["outputs.re", "review", "state.a", "b"]);
        let exists = |name: &str| name == "re-review-2";
        assert_eq!(
            dashed_member(&t, &reads[0], exists).as_deref(),
            Some("re-review-2")
        );
        assert_eq!(dashed_member(&t, &reads[2], exists), None);
        assert!(is_dash_tail(&t, &reads[1]));
        assert!(!is_dash_tail(&t, &reads[3]));
        assert!(!is_dash_tail(&t, &reads[0]));
    }

    #[test]
    fn inexact_literals_point_at_the_whole_literal() {
        let mut t = template("{{ state.x }}");
        t.exact = false;
        assert_eq!(template_reads(&t).unwrap()[0].span, t.span);
    }
}
