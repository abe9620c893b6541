//! What a step changed, as text for the terminal view: each changed file's mark and line
//! counts, and a patch's lines told apart (file headers, hunk headers, added, removed,
//! context) and made safe to draw (tabs expanded, control characters blanked: a file's
//! bytes never reach the terminal as escape codes).

use unicode_width::UnicodeWidthChar;

use crate::workspace::snapshot::{Change, ChangeStatus};

/// The columns a tab in a patch moves to a multiple of.
const TAB: usize = 8;

/// The one-letter mark of a change: `A` added, `M` modified, `D` deleted, `T` its type
/// changed (a file became a link, …).
pub(super) fn mark(status: ChangeStatus) -> &'static str {
    match status {
        ChangeStatus::Added => "A",
        ChangeStatus::Modified => "M",
        ChangeStatus::Deleted => "D",
        ChangeStatus::TypeChanged => "T",
    }
}

/// `+3 −1`, or `binary` where git counts no lines.
pub(super) fn counts(change: &Change) -> String {
    match (change.added, change.removed) {
        (Some(added), Some(removed)) => format!("+{added} −{removed}"),
        _ => "binary".to_owned(),
    }
}

/// What a line of a patch is, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DiffTone {
    /// `diff --git`, `index`, `---`/`+++`, modes, `Binary files … differ`.
    File,
    /// `@@ -1,2 +1,3 @@`.
    Hunk,
    /// An added line.
    Added,
    /// A removed line.
    Removed,
    /// A line both sides have (and `\ No newline at end of file`).
    Context,
}

/// One line of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct DiffLine {
    /// What it is.
    pub(super) tone: DiffTone,
    /// Its text, as git wrote it.
    pub(super) text: String,
}

/// The lines of `patch` (git's unified diff, without colours), each told what it is: inside
/// a hunk a line is what its first character says, so an added line reading `++ x` is not
/// taken for a file header.
pub(super) fn diff_lines(patch: &str) -> Vec<DiffLine> {
    let mut in_hunk = false;
    patch
        .lines()
        .map(|line| {
            let tone = if line.starts_with("diff ") {
                in_hunk = false;
                DiffTone::File
            } else if line.starts_with("@@") {
                in_hunk = true;
                DiffTone::Hunk
            } else if !in_hunk {
                DiffTone::File
            } else if line.starts_with('+') {
                DiffTone::Added
            } else if line.starts_with('-') {
                DiffTone::Removed
            } else {
                DiffTone::Context
            };
            DiffLine {
                tone,
                text: line.to_owned(),
            }
        })
        .collect()
}

/// `line` as the screen shows it: tabs expanded, control characters blanked, cut to
/// `width` columns (the last one `…` when cut). Leading spaces are kept.
pub(super) fn screen_line(line: &str, width: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for ch in line.chars() {
        if ch == '\t' {
            let to = (used / TAB + 1) * TAB;
            out.extend(std::iter::repeat_n(' ', to - used));
            used = to;
            continue;
        }
        let ch = if ch.is_control() { '?' } else { ch };
        used += ch.width().unwrap_or(0);
        out.push(ch);
    }
    if used <= width {
        return out;
    }
    let mut cut = String::new();
    let mut used = 0;
    for ch in out.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        cut.push(ch);
        used += w;
    }
    if width > 0 {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_is_told_apart_line_by_line() {
        let patch = "diff --git a/out.txt b/out.txt\nnew file mode 100644\nindex 0000000..ce01362\n--- /dev/null\n+++ b/out.txt\n@@ -0,0 +1,3 @@\n+hello\n+++ not a header\n--- nor this\n \\ No newline at end of file\n";
        let tones: Vec<DiffTone> = diff_lines(patch).iter().map(|line| line.tone).collect();
        assert_eq!(
            tones,
            [
                DiffTone::File,
                DiffTone::File,
                DiffTone::File,
                DiffTone::File,
                DiffTone::File,
                DiffTone::Hunk,
                DiffTone::Added,
                DiffTone::Added,
                DiffTone::Removed,
                DiffTone::Context,
            ]
        );
    }

    #[test]
    fn lines_are_made_safe_and_cut_to_the_screen() {
        assert_eq!(screen_line(" \tx", 80), "        x");
        assert_eq!(screen_line("+a\u{1b}[31mred", 80), "+a?[31mred");
        assert_eq!(screen_line("+abcdef", 4), "+ab…");
        assert_eq!(screen_line("+日本", 4), "+日…");
        assert_eq!(screen_line("abc", 0), "");
        let change = Change {
            path: "a".to_owned(),
            status: ChangeStatus::Modified,
            added: Some(3),
            removed: Some(1),
        };
        assert_eq!(counts(&change), "+3 −1");
        assert_eq!(
            counts(&Change {
                added: None,
                removed: None,
                ..change
            }),
            "binary"
        );
        assert_eq!(mark(ChangeStatus::TypeChanged), "T");
    }
}
