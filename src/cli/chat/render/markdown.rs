//! The agent's reply, markdown (CommonMark with GFM tables, strike-through and task lists),
//! as lines at most `width` columns wide. It is rendered again on every streamed delta with
//! the whole reply so far, so it takes any prefix of a document (an unclosed fence is code
//! so far, a half-written table is text until its delimiter row) and is one linear pass.
//!
//! Blocks are laid out behind the prefixes of the containers they are in: a block quote's
//! bar, a list item's marker (its first line) or the marker's width in spaces (hanging
//! indent). Code blocks are highlighted by their fence's language and indented two
//! columns; they are not re-wrapped at spaces, but a line longer than the width is broken
//! at the last column and goes on after a dim `↪` in the indent, so nothing is lost
//! (see `code.rs`).

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::code::code_lines;
use super::highlight::{self, Syntax};
use super::table::table;
use super::theme::Theme;
use super::wrap::{Styled, columns, spans_width, truncated};

/// `text` as markdown in lines at most `width` columns wide.
pub(crate) fn markdown(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut renderer = Renderer {
        theme,
        width: usize::from(width).max(1),
        lines: Vec::new(),
        containers: Vec::new(),
        lists: Vec::new(),
        inline: Styled::default(),
        styles: Vec::new(),
        links: Vec::new(),
        gap: false,
        code: None,
        table: None,
    };
    for event in Parser::new_ext(text, options) {
        renderer.event(event);
    }
    renderer.finish()
}

/// A block quote or list item the text is in: what goes before its lines.
struct Container {
    /// Before its first line (a list item's marker).
    first: Vec<Span<'static>>,
    /// Before the others.
    rest: Vec<Span<'static>>,
    /// Whether its first line is still to come.
    fresh: bool,
}

/// A code block being read.
struct Code {
    syntax: Option<&'static Syntax>,
    text: String,
}

/// A table being read.
struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Styled>>,
    head: usize,
}

struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    lines: Vec<Line<'static>>,
    containers: Vec<Container>,
    /// The open lists: the next number of an ordered one.
    lists: Vec<Option<u64>>,
    /// The paragraph, heading, item text or table cell being read.
    inline: Styled,
    /// The inline styles open, each with those outside it applied.
    styles: Vec<Style>,
    /// The open links: their address and where their text starts in `inline`.
    links: Vec<(String, usize)>,
    /// Whether a blank line goes before the next block.
    gap: bool,
    code: Option<Code>,
    table: Option<Table>,
}

impl Renderer<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.theme.text)
    }

    fn push_style(&mut self, style: Style) {
        self.styles.push(self.style().patch(style));
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => match &mut self.code {
                Some(code) => code.text.push_str(&text),
                None => self.inline.push(&text, self.style()),
            },
            Event::Code(text) => {
                let style = self.style().patch(self.theme.inline_code);
                if self.theme.color {
                    self.inline.push(&text, style);
                } else {
                    self.inline.push(&format!("`{text}`"), style);
                }
            }
            Event::Html(text) | Event::InlineHtml(text) => {
                let style = self.style().patch(self.theme.dim);
                self.inline.push(text.trim_end_matches('\n'), style);
            }
            Event::SoftBreak => self.inline.push(" ", self.style()),
            Event::HardBreak => self.inline.push("\n", self.style()),
            Event::Rule => {
                self.block_start();
                let (first, _) = self.prefixes();
                let room = self.width.saturating_sub(spans_width(&first));
                let mut spans = first;
                spans.push(Span::styled("─".repeat(room), self.theme.dim));
                self.lines.push(Line::from(spans));
                self.gap = true;
            }
            Event::TaskListMarker(checked) => {
                if let Some(item) = self.containers.last_mut() {
                    let (mark, style) = if checked {
                        ("☑ ", self.theme.todo_done)
                    } else {
                        ("☐ ", self.theme.bullet)
                    };
                    item.first = vec![Span::styled(mark, style)];
                    item.rest = vec![Span::raw(" ".repeat(columns(mark)))];
                }
            }
            Event::FootnoteReference(name) => {
                self.inline.push(&format!("[^{name}]"), self.style());
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => {
                self.inline.push(&text, self.style());
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let theme = *self.theme;
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => self.block_start(),
            Tag::Heading { level, .. } => {
                self.block_start();
                let style = if level == HeadingLevel::H1 {
                    theme.heading.add_modifier(Modifier::UNDERLINED)
                } else {
                    theme.heading
                };
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                let bar = vec![Span::styled("│ ", theme.quote)];
                self.containers.push(Container {
                    first: bar.clone(),
                    rest: bar,
                    fresh: false,
                });
                self.push_style(theme.quote);
            }
            Tag::CodeBlock(kind) => {
                self.block_start();
                let syntax = match kind {
                    CodeBlockKind::Fenced(info) => highlight::syntax(&info),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some(Code {
                    syntax,
                    text: String::new(),
                });
            }
            Tag::List(start) => {
                self.block_start();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(next)) => {
                        *next += 1;
                        format!("{}. ", *next - 1)
                    }
                    _ => ["• ", "◦ ", "▪ "][depth % 3].to_owned(),
                };
                let indent = " ".repeat(columns(&marker));
                self.containers.push(Container {
                    first: vec![Span::styled(marker, theme.bullet)],
                    rest: vec![Span::raw(indent)],
                    fresh: true,
                });
            }
            Tag::Table(aligns) => {
                self.block_start();
                self.table = Some(Table {
                    aligns,
                    rows: Vec::new(),
                    head: 0,
                });
            }
            Tag::TableHead => {
                self.push_style(theme.strong);
                self.new_row();
            }
            Tag::TableRow => self.new_row(),
            Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.push_style(theme.emphasis),
            Tag::Strong => self.push_style(theme.strong),
            Tag::Strikethrough => self.push_style(theme.strike),
            Tag::Link { dest_url, .. } => {
                self.links
                    .push((dest_url.to_string(), self.inline.cells().len()));
                self.push_style(theme.link);
            }
            Tag::Image { dest_url, .. } => {
                self.links.push((dest_url.to_string(), usize::MAX));
                self.push_style(theme.link);
                self.inline.push("[image: ", self.style());
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => {
                self.flush();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.styles.pop();
                self.gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_block(&code);
                }
                self.gap = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.gap = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                if self.containers.last().is_some_and(|item| item.fresh) {
                    // An empty item still shows its marker.
                    let (first, _) = self.prefixes();
                    self.lines.push(Line::from(first));
                }
                self.containers.pop();
            }
            TagEnd::TableHead => {
                self.styles.pop();
                if let Some(table) = &mut self.table {
                    table.head = table.rows.len();
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(row) = self.table.as_mut().and_then(|table| table.rows.last_mut()) {
                    row.push(cell);
                }
            }
            TagEnd::Table => {
                if let Some(done) = self.table.take() {
                    let (first, rest) = self.prefixes();
                    let room = self.width.saturating_sub(spans_width(&rest));
                    let lines = table(&done.rows, done.head, &done.aligns, room, self.theme);
                    for (n, line) in lines.into_iter().enumerate() {
                        let mut spans = if n == 0 { first.clone() } else { rest.clone() };
                        spans.extend(line.spans);
                        self.lines.push(Line::from(spans));
                    }
                }
                self.gap = true;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                let Some((url, start)) = self.links.pop() else {
                    return;
                };
                if start == usize::MAX {
                    self.inline.push("]", self.style().patch(self.theme.link));
                }
                let text: String = self.inline.cells()[start.min(self.inline.cells().len())..]
                    .iter()
                    .map(|(ch, _)| ch)
                    .collect();
                let bare = url.strip_prefix("mailto:").unwrap_or(&url);
                if !url.is_empty() && text != url && text != bare {
                    let style = self.style().patch(self.theme.dim);
                    self.inline.push(&format!(" ({url})"), style);
                }
            }
            _ => {}
        }
    }

    fn new_row(&mut self) {
        if let Some(table) = &mut self.table {
            table.rows.push(Vec::new());
        }
    }

    /// The prefixes of the next line and the ones after it; the first use of a fresh list
    /// item's marker uses it up.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for container in &mut self.containers {
            if container.fresh {
                first.extend(container.first.iter().cloned());
                container.fresh = false;
            } else {
                first.extend(container.rest.iter().cloned());
            }
            rest.extend(container.rest.iter().cloned());
        }
        (first, rest)
    }

    /// A block begins: the text read so far (a tight list item's) is laid out, and the
    /// blank line after the block before goes in.
    fn block_start(&mut self) {
        self.flush();
        if std::mem::take(&mut self.gap) && !self.lines.is_empty() {
            let mut spans: Vec<Span<'static>> = self
                .containers
                .iter()
                .flat_map(|container| container.rest.iter().cloned())
                .collect();
            // Only a quote's bar shows on a blank line, with no space after it.
            while spans
                .last()
                .is_some_and(|span| span.content.trim().is_empty())
            {
                spans.pop();
            }
            if let Some(last) = spans.last_mut() {
                last.content = last.content.trim_end().to_owned().into();
            }
            self.lines.push(Line::from(spans));
        }
    }

    /// Lays out the text read so far.
    fn flush(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let (first, rest) = self.prefixes();
        let lines = self.inline.lines(self.width, &first, &rest, true);
        self.lines.extend(lines);
        self.inline.clear();
    }

    fn code_block(&mut self, code: &Code) {
        let (first, rest) = self.prefixes();
        let lines = code_lines(
            &code.text,
            code.syntax,
            &first,
            &rest,
            self.width,
            self.theme,
        );
        self.lines.extend(lines);
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if let Some(code) = self.code.take() {
            self.code_block(&code);
        }
        self.flush();
        while self.lines.last().is_some_and(|line| line.width() == 0) {
            self.lines.pop();
        }
        // Only a line narrower than a wide character (or deep prefixes on a code block's
        // narrow line) could overflow; it is cut rather than drawn past the edge.
        let width = self.width;
        self.lines
            .into_iter()
            .map(|line| truncated(line, width))
            .collect()
    }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
