//! Silencing rules in the source: `// atomic-ignore: code, code` silences those codes on the
//! next line that is not a comment (or on its own line when it trails code);
//! `// atomic-ignore-file: code` silences them in the whole file. Naming a code that does
//! not exist is itself reported, so typos do not silently silence nothing, and so is naming
//! one whose errors leave the workflow unable to run ([`Code::can_silence`]): those stay.

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{SourceId, Sources, Span};
use crate::syntax::kdl::{Comment, CommentKind};

struct Directive {
    codes: Vec<Code>,
    /// `None`: the whole file.
    line: Option<u32>,
}

/// The suppression comments of one file.
pub(super) struct Suppressions {
    file: SourceId,
    directives: Vec<Directive>,
}

/// Reads the suppression comments of `file`; problems with them (unknown codes, codes that
/// cannot be silenced) come back as diagnostics, once.
pub(super) fn read(
    sources: &Sources,
    file: SourceId,
    comments: &[Comment],
) -> (Suppressions, Vec<Diagnostic>) {
    let mut directives = Vec::new();
    let mut problems = Vec::new();
    let source = sources.get(file);
    for comment in comments
        .iter()
        .filter(|comment| comment.kind == CommentKind::Line)
    {
        let text = sources.text(comment.span);
        let body = text.trim_start_matches('/').trim();
        let (whole_file, list) = if let Some(list) = body.strip_prefix("atomic-ignore-file:") {
            (true, list)
        } else if let Some(list) = body.strip_prefix("atomic-ignore:") {
            (false, list)
        } else {
            continue;
        };
        let mut codes = Vec::new();
        let list_start = text.len() - list.len();
        for (offset, name) in split_codes(list) {
            let start = comment.span.start as usize + list_start + offset;
            let span = Span::new(file, start, start + name.len());
            match Code::from_name(name) {
                Some(code) if code.can_silence() => codes.push(code),
                Some(code) => problems.push(unsilenceable(code, span)),
                None => {
                    let names = Code::ALL.iter().map(|code| code.name());
                    problems.push(
                        Diagnostic::new(
                            Code::UnknownRuleCode,
                            span,
                            format!("unknown rule code `{name}`"),
                        )
                        .label("no rule has this code")
                        .maybe_help(
                            crate::diagnostic::did_you_mean(name, names)
                                .map(|near| format!("did you mean `{near}`?")),
                        )
                        .maybe_replace_with(
                            crate::diagnostic::did_you_mean(
                                name,
                                Code::ALL.iter().map(|code| code.name()),
                            )
                            .map(str::to_owned),
                        ),
                    );
                }
            }
        }
        let line = source.lines.line(comment.span.start as usize);
        let line_start = source.lines.line_start(line).unwrap_or(0);
        let trailing = !source.text[line_start..comment.span.start as usize]
            .trim()
            .is_empty();
        let target = if whole_file {
            None
        } else if trailing {
            Some(line)
        } else {
            Some(next_code_line(&source.text, &source.lines, line))
        };
        directives.push(Directive {
            codes,
            line: target,
        });
    }
    (Suppressions { file, directives }, problems)
}

impl Suppressions {
    /// `diagnostics` without those the comments silence.
    pub(super) fn apply(&self, diagnostics: &mut Vec<Diagnostic>, sources: &Sources) {
        let source = sources.get(self.file);
        diagnostics.retain(|diagnostic| {
            if diagnostic.span.source != self.file {
                return true;
            }
            let line = source.lines.line(diagnostic.span.start as usize);
            !self.directives.iter().any(|directive| {
                directive.codes.contains(&diagnostic.code)
                    && directive.line.is_none_or(|target| target == line)
            })
        });
    }
}

/// `code` named where it cannot be silenced.
pub(super) fn unsilenceable(code: Code, span: Span) -> Diagnostic {
    Diagnostic::new(
        Code::UnsilenceableRule,
        span,
        format!("`{}` cannot be silenced", code.name()),
    )
    .label("a workflow with this error cannot run")
    .help("fix the problem instead: `atomic run` refuses a workflow that has it, silenced or not")
}

/// The codes in a comma- or space-separated list, with their byte offsets in `list`.
fn split_codes(list: &str) -> impl Iterator<Item = (usize, &str)> {
    let base = list.as_ptr() as usize;
    list.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|name| !name.is_empty())
        .map(move |name| (name.as_ptr() as usize - base, name))
}

/// The first line after `line` that holds something other than a comment.
fn next_code_line(text: &str, lines: &crate::source::LineIndex, line: u32) -> u32 {
    let mut next = line + 1;
    while let Some(start) = lines.line_start(next) {
        let end = lines.line_start(next + 1).unwrap_or(text.len());
        let content = text[start..end].trim();
        if !content.is_empty() && !content.starts_with("//") {
            return next;
        }
        next += 1;
    }
    next
}
