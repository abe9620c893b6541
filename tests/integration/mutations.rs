//! No input makes `compile` panic: every example and fixture is mutated a few thousand
//! times, deterministically (deleted, duplicated and swapped characters and lines,
//! truncations, random bytes read as lossy UTF-8, stray KDL punctuation), and each copy goes
//! through the whole static pipeline. Besides not panicking, every diagnostic span (and
//! label) must lie within its file on char boundaries, every span in the resolved workflow
//! too, the workflow of every 8th case must match `schemas/workflow.schema.json`, and a
//! plan, when one is built, must render and budget.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use atomic::compile::{Compiled, Config, compile};
use atomic::lower;
use atomic::source::{MemoryFiles, SourceId, Sources, Span};
use serde_json::Value;

use crate::support;

/// How many mutated copies are compiled: about 4 s of CPU in a debug build.
const CASES: usize = 5_000;

/// On a machine so loaded that the cases take longer than this, the run stops early (the
/// cases are the same, only fewer); at least [`MIN_CASES`] must have run.
const BUDGET: Duration = Duration::from_secs(25);

/// The fewest cases a run may stop after.
const MIN_CASES: usize = 1_000;

/// SplitMix64: a tiny deterministic generator, so every run tests the same inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Characters whose insertion breaks KDL structure in interesting ways.
const PUNCTUATION: &[&str] = &[
    "{", "}", "\"", "=", ";", "/", "#", "(", ")", "\\", "\n", "/*", "*/", "//", "/-", "\"\"\"",
    "#\"", "{{", "}}", "{%", "-", "é", "\u{feff}", "\r",
];

/// The byte offsets of the chars of `text`, plus its length.
fn char_starts(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect()
}

/// One random edit of `text`; returns what it did, for the report.
fn mutate(text: &mut String, rng: &mut Rng) -> String {
    let starts = char_starts(text);
    let chars = starts.len() - 1;
    let at = starts[rng.below(starts.len())];
    match rng.below(9) {
        0 if chars > 0 => {
            let i = rng.below(chars);
            text.replace_range(starts[i]..starts[i + 1], "");
            format!("delete char at {}", starts[i])
        }
        1 if chars > 0 => {
            let i = rng.below(chars);
            let c = text[starts[i]..starts[i + 1]].to_owned();
            text.insert_str(starts[i], &c);
            format!("duplicate char at {}", starts[i])
        }
        2 if chars > 1 => {
            let i = rng.below(chars - 1);
            let a = text[starts[i]..starts[i + 1]].to_owned();
            let b = text[starts[i + 1]..starts[i + 2]].to_owned();
            text.replace_range(starts[i]..starts[i + 2], &format!("{b}{a}"));
            format!("swap chars at {}", starts[i])
        }
        3 => {
            let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
            if lines.is_empty() {
                return "nothing".into();
            }
            let i = rng.below(lines.len());
            lines.remove(i);
            *text = lines.concat();
            format!("delete line {}", i + 1)
        }
        4 => {
            let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
            if lines.is_empty() {
                return "nothing".into();
            }
            let i = rng.below(lines.len());
            let line = lines[i].clone();
            lines.insert(i, line);
            *text = lines.concat();
            format!("duplicate line {}", i + 1)
        }
        5 => {
            let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
            if lines.len() < 2 {
                return "nothing".into();
            }
            let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
            lines.swap(i, j);
            *text = lines.concat();
            format!("swap lines {} and {}", i + 1, j + 1)
        }
        6 => {
            // Random bytes, possibly not UTF-8, inserted at any byte (even inside a char).
            let at = rng.below(text.len() + 1);
            let mut bytes = std::mem::take(text).into_bytes();
            let count = 1 + rng.below(4);
            for _ in 0..count {
                bytes.insert(at, (rng.next() & 0xFF) as u8);
            }
            *text = String::from_utf8_lossy(&bytes).into_owned();
            format!("insert {count} random bytes at {at}")
        }
        7 => {
            let piece = PUNCTUATION[rng.below(PUNCTUATION.len())];
            text.insert_str(at, piece);
            format!("insert {piece:?} at {at}")
        }
        _ => {
            // Copy a random slice elsewhere: moves whole properties, strings, blocks.
            let (a, b) = (
                starts[rng.below(starts.len())],
                starts[rng.below(starts.len())],
            );
            // The 40-byte cap may land inside a character: cut at the boundary before it.
            let end = text.floor_char_boundary(a.max(b).min(a.min(b) + 40));
            let piece = text[a.min(b)..end].to_owned();
            let piece = String::from_utf8_lossy(piece.as_bytes()).into_owned();
            text.insert_str(at, &piece);
            format!("copy {} bytes to {at}", piece.len())
        }
    }
}

/// What to check one input against: the workflows and their side files.
struct Corpus {
    /// (path relative to the crate root, text).
    workflows: Vec<(PathBuf, String)>,
    /// Schemas, subgraphs and every workflow, at the same relative paths.
    files: MemoryFiles,
}

fn corpus() -> Corpus {
    let root = support::root();
    let mut workflows = Vec::new();
    let mut files = MemoryFiles::new();
    for dir in [
        "examples",
        "examples/subgraphs",
        "tests/fixtures/check/ok",
        "tests/fixtures/check/err",
    ] {
        for path in support::kdl_files(&root.join(dir)) {
            let relative = path.strip_prefix(&root).expect("under root").to_path_buf();
            // The fixture that is not UTF-8 takes part decoded, as an editor would send it.
            let text =
                String::from_utf8_lossy(&std::fs::read(&path).expect("readable")).into_owned();
            files.insert(relative.clone(), text.clone());
            workflows.push((relative, text));
        }
    }
    for dir in ["examples/schemas", "tests/fixtures/check/ok/schemas"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if let Ok(text) = std::fs::read_to_string(&path) {
                let relative = path.strip_prefix(&root).expect("under root").to_path_buf();
                files.insert(relative, text);
            }
        }
    }
    Corpus { workflows, files }
}

/// Why `span` is not a valid span of `sources`, if it is not.
fn bad_span(sources: &Sources, span: Span) -> Option<String> {
    if span.source.0 as usize >= sources.len() {
        return Some(format!("{span:?} names no file"));
    }
    let text = &sources.get(span.source).text;
    let ok = span.start <= span.end
        && span.end as usize <= text.len()
        && text.is_char_boundary(span.start as usize)
        && text.is_char_boundary(span.end as usize);
    (!ok).then(|| {
        format!(
            "{span:?} is not within {} ({} bytes) on char boundaries",
            sources.get(span.source).path.display(),
            text.len()
        )
    })
}

/// Every `{source, start, end}` object of a serialised workflow (the users' own JSON in
/// option maps and defaults excluded).
fn ir_spans(value: &Value, out: &mut Vec<Span>) {
    match value {
        Value::Object(map) => {
            let field = |key: &str| map.get(key).and_then(Value::as_u64);
            if let (3, Some(source), Some(start), Some(end)) =
                (map.len(), field("source"), field("start"), field("end"))
            {
                out.push(Span {
                    source: SourceId(u32::try_from(source).expect("u32 source")),
                    start: u32::try_from(start).expect("u32 start"),
                    end: u32::try_from(end).expect("u32 end"),
                });
                return;
            }
            for (key, item) in map {
                if !matches!(key.as_str(), "options" | "default") {
                    ir_spans(item, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| ir_spans(item, out)),
        _ => {}
    }
}

/// The invariants a compilation must keep; `Err` says which one broke. Schema validation
/// is slow in debug builds (about 2 ms a workflow), so only some cases ask for it.
fn check(sources: &Sources, compiled: &Compiled, against_schema: bool) -> Result<(), String> {
    for diagnostic in &compiled.diagnostics {
        let spans =
            std::iter::once(diagnostic.span).chain(diagnostic.labels.iter().map(|l| l.span));
        for span in spans {
            if let Some(problem) = bad_span(sources, span) {
                return Err(format!(
                    "{} `{}`: {problem}",
                    diagnostic.code, diagnostic.message
                ));
            }
        }
    }
    if let Some(workflow) = compiled.workflow() {
        let value = serde_json::to_value(workflow).map_err(|e| format!("serialise: {e}"))?;
        let mut spans = Vec::new();
        ir_spans(&value, &mut spans);
        if let Some(problem) = spans.into_iter().find_map(|span| bad_span(sources, span)) {
            return Err(format!("IR span {problem}"));
        }
        let validator = crate::ir_schema::validator();
        if against_schema && let Some(error) = validator.iter_errors(&value).next() {
            return Err(format!(
                "the workflow does not match the schema at {}: {error}",
                error.instance_path()
            ));
        }
    }
    if let Some(plan) = &compiled.plan {
        let _ = lower::budget(plan);
        let _ = lower::dot(plan);
        let _ = lower::mermaid(plan);
    }
    Ok(())
}

/// The panic's message.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(not a string)".into())
}

/// One failed case.
struct Failure {
    path: PathBuf,
    edits: Vec<String>,
    input: String,
    problem: String,
}

fn run_case(
    path: &Path,
    input: String,
    files: &MemoryFiles,
    against_schema: bool,
) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| {
        let mut sources = Sources::new();
        let file = sources.add(path, input);
        let compiled = compile(&mut sources, file, files, &Config::new());
        check(&sources, &compiled, against_schema)
    }))
    .unwrap_or_else(|payload| Err(format!("panicked: {}", message(payload.as_ref()))))
}

#[test]
#[allow(
    clippy::print_stdout,
    reason = "the count and time ran are the test's report"
)]
fn mutated_workflows_never_panic_and_keep_spans_valid() {
    let corpus = corpus();
    assert!(corpus.workflows.len() >= 40, "too few workflows to mutate");
    let mut rng = Rng(0x00A7_0A11_C0DE);
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut ran = 0;

    // Truncations at every Nth byte of every workflow (lossy where a char is cut).
    for (path, text) in &corpus.workflows {
        let step = (text.len() / 12).max(1);
        for end in (0..text.len()).step_by(step) {
            let input = String::from_utf8_lossy(&text.as_bytes()[..end]).into_owned();
            ran += 1;
            if let Err(problem) = run_case(path, input.clone(), &corpus.files, ran % 8 == 0) {
                failures.push(Failure {
                    path: path.clone(),
                    edits: vec![format!("truncate at byte {end}")],
                    input,
                    problem,
                });
            }
        }
    }

    // Random stacks of one to four edits.
    while ran < CASES && started.elapsed() < BUDGET {
        let (path, text) = &corpus.workflows[rng.below(corpus.workflows.len())];
        let mut input = text.clone();
        let edits: Vec<String> = (0..1 + rng.below(4))
            .map(|_| mutate(&mut input, &mut rng))
            .collect();
        ran += 1;
        if let Err(problem) = run_case(path, input.clone(), &corpus.files, ran % 8 == 0) {
            failures.push(Failure {
                path: path.clone(),
                edits,
                input,
                problem,
            });
        }
    }

    let elapsed = started.elapsed();
    let mut report = format!(
        "{ran} mutated workflows compiled in {:.1} s, {} failed",
        elapsed.as_secs_f64(),
        failures.len()
    );
    for failure in failures.iter().take(5) {
        report.push_str(&format!(
            "\n\n{} after {}:\n  {}\n  input: {:?}",
            failure.path.display(),
            failure.edits.join(", "),
            failure.problem,
            failure.input
        ));
    }
    // Shown by `cargo nextest run --no-capture mutations` and on failure.
    println!("{report}");
    assert!(failures.is_empty(), "{report}");
    assert!(ran >= MIN_CASES, "only {ran} cases ran within {BUDGET:?}");
}

/// Byte-level mutations (invalid UTF-8 included) through the real `atomic check`: whatever
/// the bytes, a file that exists is checked, so the exit is 0 (clean) or 1 (problems),
/// never 2, 3, a panic (101) or a signal, and the output never says "ok" next to an
/// error.
#[test]
fn mutated_files_exit_only_zero_or_one_from_the_cli() {
    const FILES: usize = 300;
    let root = support::root();
    let mut originals: Vec<Vec<u8>> = Vec::new();
    for dir in [
        "examples",
        "tests/fixtures/check/ok",
        "tests/fixtures/check/err",
    ] {
        for path in support::kdl_files(&root.join(dir)) {
            originals.push(std::fs::read(&path).expect("readable"));
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rng = Rng(0xA70_41C);
    let mut paths = Vec::with_capacity(FILES);
    for index in 0..FILES {
        let mut bytes = originals[rng.below(originals.len())].clone();
        for _ in 0..=rng.below(3) {
            mutate_bytes(&mut bytes, &mut rng);
        }
        let path = dir.path().join(format!("case-{index:03}.kdl"));
        std::fs::write(&path, &bytes).expect("write case");
        paths.push(path);
    }
    let started = Instant::now();
    // Checked in batches, as a user checks several files at once, plus a few alone.
    for batch in paths.chunks(25) {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_atomic"))
            .arg("check")
            .args(batch)
            .args(["--format", "json"])
            .current_dir(dir.path())
            .output()
            .expect("atomic runs");
        let code = output.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "exit {code:?} for {batch:?}:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let json: Value = serde_json::from_slice(&output.stdout).expect("JSON output");
        let errors = json
            .as_array()
            .expect("an array")
            .iter()
            .filter(|d| d["severity"] == "error")
            .count();
        if errors > 0 {
            assert_eq!(code, Some(1), "errors, yet exit {code:?}: {json}");
        }
        if started.elapsed() > BUDGET {
            break;
        }
    }
    for path in paths.iter().step_by(30) {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_atomic"))
            .arg("check")
            .arg(path)
            .current_dir(dir.path())
            .output()
            .expect("atomic runs");
        let code = output.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "exit {code:?} for {}",
            path.display()
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            stdout.contains("ok:"),
            code == Some(0),
            "{}: {stdout}",
            path.display()
        );
    }
}

/// One byte-level change: a byte flipped to a non-ASCII or invalid UTF-8 value, a byte
/// deleted or duplicated, a run of random bytes inserted, or a truncation.
fn mutate_bytes(bytes: &mut Vec<u8>, rng: &mut Rng) {
    if bytes.is_empty() {
        bytes.push(0xFF);
        return;
    }
    let at = rng.below(bytes.len());
    match rng.below(6) {
        0 => bytes[at] = [0xFF, 0xFE, 0xC3, 0xE9, 0x80, 0x00][rng.below(6)],
        1 => {
            bytes.remove(at);
        }
        2 => bytes.insert(at, bytes[at]),
        3 => {
            let run: Vec<u8> = (0..=rng.below(8)).map(|_| rng.next() as u8).collect();
            bytes.splice(at..at, run);
        }
        4 => bytes.truncate(at),
        _ => bytes.splice(at..at, [0xEF, 0xBB, 0xBF]).for_each(drop),
    }
}
