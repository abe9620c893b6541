//! The message being typed: a multi-line buffer with a cursor, the editing keys people
//! expect of a terminal prompt (Ctrl-A/E/U/K/W, word moves), and the history of what was
//! sent, recalled with Up and Down.

use unicode_width::UnicodeWidthChar;

/// The most messages kept for Up to recall.
const HISTORY: usize = 200;

/// The text being typed, its cursor (a byte offset on a char boundary) and the history.
#[derive(Clone, Debug, Default)]
pub(crate) struct Input {
    text: String,
    cursor: usize,
    /// Sent messages, oldest first.
    history: Vec<String>,
    /// Which history entry Up last recalled, and what was typed before recalling.
    recalling: Option<(usize, String)>,
}

impl Input {
    /// The text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The cursor, a byte offset into [`Input::text`].
    pub(crate) fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether nothing is typed.
    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text (a completion accepted, a recalled message), the cursor at its end.
    pub(crate) fn set(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cursor = self.text.len();
    }

    /// Replaces the text, the cursor at `cursor` (clamped to a char boundary).
    pub(crate) fn set_at(&mut self, text: String, cursor: usize) {
        let mut cursor = cursor.min(text.len());
        while !text.is_char_boundary(cursor) {
            cursor -= 1;
        }
        self.text = text;
        self.cursor = cursor;
    }

    /// Takes the text to send, remembering it for Up, and empties the buffer.
    pub(crate) fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.recalling = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
            if self.history.len() > HISTORY {
                self.history.remove(0);
            }
        }
        text
    }

    /// Types `text` at the cursor (a key, or a paste).
    pub(crate) fn insert(&mut self, text: &str) {
        // A paste's carriage returns are newlines.
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &text);
        self.cursor += text.len();
    }

    /// Deletes the character before the cursor.
    pub(crate) fn backspace(&mut self) {
        if let Some(before) = self.before() {
            self.text.replace_range(before..self.cursor, "");
            self.cursor = before;
        }
    }

    /// Deletes the character under the cursor.
    pub(crate) fn delete(&mut self) {
        if let Some(after) = self.after() {
            self.text.replace_range(self.cursor..after, "");
        }
    }

    /// Moves one character left.
    pub(crate) fn left(&mut self) {
        if let Some(before) = self.before() {
            self.cursor = before;
        }
    }

    /// Moves one character right.
    pub(crate) fn right(&mut self) {
        if let Some(after) = self.after() {
            self.cursor = after;
        }
    }

    /// Moves to the start of the word before the cursor.
    pub(crate) fn word_left(&mut self) {
        self.cursor = self.word_start();
    }

    /// Moves past the end of the word after the cursor.
    pub(crate) fn word_right(&mut self) {
        let rest = &self.text[self.cursor..];
        let skipped = rest.len() - rest.trim_start().len();
        let word = rest[skipped..]
            .find(char::is_whitespace)
            .unwrap_or(rest.len() - skipped);
        self.cursor += skipped + word;
    }

    /// Moves to the start of the line.
    pub(crate) fn home(&mut self) {
        self.cursor = self.line_start();
    }

    /// Moves to the end of the line.
    pub(crate) fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Deletes from the start of the line to the cursor (Ctrl-U).
    pub(crate) fn kill_to_start(&mut self) {
        let start = self.line_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Deletes from the cursor to the end of the line (Ctrl-K).
    pub(crate) fn kill_to_end(&mut self) {
        let end = self.line_end();
        self.text.replace_range(self.cursor..end, "");
    }

    /// Deletes the word before the cursor (Ctrl-W).
    pub(crate) fn kill_word(&mut self) {
        let start = self.word_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Up: the line above in a multi-line message; from the first line, the message sent
    /// before the one shown.
    pub(crate) fn up(&mut self) {
        let start = self.line_start();
        if start > 0 {
            let column = self.column();
            let above = self.text[..start - 1].rfind('\n').map_or(0, |at| at + 1);
            self.cursor = Self::at_column(&self.text, above, start - 1, column);
            return;
        }
        let index = match &self.recalling {
            Some((index, _)) if *index == 0 => return,
            Some((index, _)) => index - 1,
            None if self.history.is_empty() => return,
            None => {
                self.recalling = Some((self.history.len(), self.text.clone()));
                self.history.len() - 1
            }
        };
        if let Some((at, _)) = &mut self.recalling {
            *at = index;
        }
        self.set(self.history[index].clone());
    }

    /// Down: the line below; from the last line, the message sent after the one shown, and
    /// past the newest, what was being typed.
    pub(crate) fn down(&mut self) {
        let end = self.line_end();
        if end < self.text.len() {
            let column = self.column();
            let below_end = self.text[end + 1..]
                .find('\n')
                .map_or(self.text.len(), |at| end + 1 + at);
            self.cursor = Self::at_column(&self.text, end + 1, below_end, column);
            return;
        }
        let Some((index, typed)) = self.recalling.take() else {
            return;
        };
        if index + 1 < self.history.len() {
            self.recalling = Some((index + 1, typed));
            self.set(self.history[index + 1].clone());
        } else {
            self.set(typed);
        }
    }

    /// Where the cursor is drawn: its line and display column, for lines of `width`
    /// columns after a prompt of `indent` columns (lines wrap as [`Input::lines`] wraps
    /// them).
    pub(crate) fn cursor_position(&self, width: u16, indent: u16) -> (u16, u16) {
        let width = usize::from(width.saturating_sub(indent).max(1));
        let (mut row, mut column) = (0usize, 0usize);
        for (at, c) in self.text.char_indices() {
            if at == self.cursor {
                break;
            }
            if c == '\n' {
                row += 1;
                column = 0;
                continue;
            }
            let w = c.width().unwrap_or(0);
            if column + w > width {
                row += 1;
                column = 0;
            }
            column += w;
        }
        if column >= width {
            row += 1;
            column = 0;
        }
        (
            u16::try_from(row).unwrap_or(u16::MAX),
            u16::try_from(column)
                .unwrap_or(u16::MAX)
                .saturating_add(indent),
        )
    }

    /// The text cut into the rows it is drawn on at `width` columns after `indent`.
    pub(crate) fn lines(&self, width: u16, indent: u16) -> Vec<String> {
        let width = usize::from(width.saturating_sub(indent).max(1));
        let mut rows = vec![String::new()];
        let mut column = 0;
        for c in self.text.chars() {
            if c == '\n' {
                rows.push(String::new());
                column = 0;
                continue;
            }
            let w = c.width().unwrap_or(0);
            if column + w > width {
                rows.push(String::new());
                column = 0;
            }
            if let Some(row) = rows.last_mut() {
                row.push(c);
            }
            column += w;
        }
        rows
    }

    fn before(&self) -> Option<usize> {
        self.text[..self.cursor]
            .char_indices()
            .next_back()
            .map(|(at, _)| at)
    }

    fn after(&self) -> Option<usize> {
        self.text[self.cursor..]
            .chars()
            .next()
            .map(|c| self.cursor + c.len_utf8())
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |at| at + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |at| self.cursor + at)
    }

    fn word_start(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        trimmed.rfind(char::is_whitespace).map_or(0, |at| {
            at + trimmed[at..].chars().next().map_or(1, char::len_utf8)
        })
    }

    /// The cursor's column in characters on its line.
    fn column(&self) -> usize {
        self.text[self.line_start()..self.cursor].chars().count()
    }

    /// The offset `column` characters into the line `start..end` (its end if shorter).
    fn at_column(text: &str, start: usize, end: usize, column: usize) -> usize {
        text[start..end]
            .char_indices()
            .nth(column)
            .map_or(end, |(at, _)| start + at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> Input {
        let mut input = Input::default();
        input.insert(text);
        input
    }

    #[test]
    fn editing_keys_work_on_the_line_of_the_cursor() {
        let mut input = typed("first line\nsecond word");
        input.kill_word();
        assert_eq!(input.text(), "first line\nsecond ");
        input.home();
        input.insert("> ");
        assert_eq!(input.text(), "first line\n> second ");
        input.kill_to_end();
        assert_eq!(input.text(), "first line\n> ");
        input.kill_to_start();
        assert_eq!(input.text(), "first line\n");
        input.backspace();
        input.backspace();
        assert_eq!(input.text(), "first lin");
    }

    #[test]
    fn multibyte_characters_move_and_delete_whole() {
        let mut input = typed("añ日本");
        input.left();
        input.backspace();
        assert_eq!(input.text(), "añ本");
        input.home();
        input.right();
        input.delete();
        assert_eq!(input.text(), "a本");
    }

    #[test]
    fn up_moves_between_lines_then_recalls_history_and_down_restores_the_draft() {
        let mut input = Input::default();
        input.insert("one");
        assert_eq!(input.take(), "one");
        input.insert("two");
        input.take();
        input.insert("draft\nmore");
        input.up();
        assert_eq!(input.cursor(), 4, "up within the message first");
        input.up();
        assert_eq!(input.text(), "two");
        input.up();
        assert_eq!(input.text(), "one");
        input.up();
        assert_eq!(input.text(), "one", "the oldest stays");
        input.down();
        assert_eq!(input.text(), "two");
        input.down();
        assert_eq!(input.text(), "draft\nmore");
    }

    #[test]
    fn a_pasted_carriage_return_is_a_newline_and_wrapping_counts_wide_characters() {
        let input = typed("ab\r\ncd日本語");
        assert_eq!(input.text(), "ab\ncd日本語");
        assert_eq!(input.lines(6, 2), vec!["ab", "cd日", "本語"]);
        assert_eq!(input.cursor_position(6, 2), (3, 2));
    }

    #[test]
    fn word_moves_skip_spaces() {
        let mut input = typed("run  the tests");
        input.word_left();
        assert_eq!(&input.text()[input.cursor()..], "tests");
        input.word_left();
        assert_eq!(&input.text()[input.cursor()..], "the tests");
        input.word_right();
        assert_eq!(&input.text()[input.cursor()..], " tests");
    }
}
