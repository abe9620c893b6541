//! The chat's styles: a dark and a light palette, and a plain one for `NO_COLOR` that uses
//! no colour at all (only bold, italic, underline, reverse video and strike-through, which
//! keep the structure visible). [`Theme::pick`] chooses from what the caller read from the
//! environment; nothing here reads it.

use ratatui::style::{Color, Modifier, Style};

/// Every style the chat draws with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Theme {
    /// Whether colours are on (false for [`Theme::plain`]).
    pub(crate) color: bool,
    /// Body text.
    pub(crate) text: Style,
    /// Secondary text: a link's address, thinking, hints.
    pub(crate) dim: Style,
    /// Headings.
    pub(crate) heading: Style,
    /// `*emphasis*`.
    pub(crate) emphasis: Style,
    /// `**strong**`.
    pub(crate) strong: Style,
    /// `~~struck~~`.
    pub(crate) strike: Style,
    /// `` `inline code` ``.
    pub(crate) inline_code: Style,
    /// A code block's text (its background is [`Theme::code_bg`]).
    pub(crate) code: Style,
    /// A code block's background, painted to the end of each line; `None`: none.
    pub(crate) code_bg: Option<Color>,
    /// Highlighted code: keywords.
    pub(crate) keyword: Style,
    /// Highlighted code: string literals.
    pub(crate) string: Style,
    /// Highlighted code: comments.
    pub(crate) comment: Style,
    /// Highlighted code: numbers.
    pub(crate) number: Style,
    /// Highlighted code: types (capitalised identifiers, primitive types).
    pub(crate) type_: Style,
    /// Highlighted code: operators and brackets.
    pub(crate) punct: Style,
    /// A link's text.
    pub(crate) link: Style,
    /// A block quote's bar and text.
    pub(crate) quote: Style,
    /// A list's bullet or number.
    pub(crate) bullet: Style,
    /// A table's borders.
    pub(crate) table_border: Style,
    /// A diff's added lines.
    pub(crate) diff_added: Style,
    /// A diff's removed lines.
    pub(crate) diff_removed: Style,
    /// A diff's hunk headers.
    pub(crate) diff_hunk: Style,
    /// A diff's unchanged lines.
    pub(crate) diff_context: Style,
    /// A diff's header (the path).
    pub(crate) diff_header: Style,
    /// A tool call's name.
    pub(crate) tool_name: Style,
    /// A tool that succeeded.
    pub(crate) tool_ok: Style,
    /// A tool that failed.
    pub(crate) tool_error: Style,
    /// A tool still running.
    pub(crate) tool_running: Style,
    /// The person's messages (the `›` prefix and text).
    pub(crate) user: Style,
    /// The chat's own notices.
    pub(crate) notice: Style,
    /// Errors.
    pub(crate) error: Style,
    /// A permission asked, a question waiting.
    pub(crate) warning: Style,
    /// The status line.
    pub(crate) status: Style,
    /// The selected row.
    pub(crate) selection: Style,
    /// A plan item not started.
    pub(crate) todo_pending: Style,
    /// A plan item being worked on.
    pub(crate) todo_active: Style,
    /// A plan item done.
    pub(crate) todo_done: Style,
    /// A plan item dropped.
    pub(crate) todo_cancelled: Style,
}

fn fg(color: Color) -> Style {
    Style::new().fg(color)
}

const BOLD: Modifier = Modifier::BOLD;
const ITALIC: Modifier = Modifier::ITALIC;

impl Theme {
    /// Colours for a dark background: the terminal's own named colours, as `atomic ui`.
    pub(crate) fn dark() -> Self {
        Self {
            color: true,
            text: Style::new(),
            dim: fg(Color::DarkGray),
            heading: fg(Color::Cyan).add_modifier(BOLD),
            emphasis: Style::new().add_modifier(ITALIC),
            strong: Style::new().add_modifier(BOLD),
            strike: fg(Color::DarkGray).add_modifier(Modifier::CROSSED_OUT),
            inline_code: fg(Color::LightYellow),
            code: Style::new(),
            code_bg: Some(Color::Indexed(236)),
            keyword: fg(Color::LightMagenta),
            string: fg(Color::LightGreen),
            comment: fg(Color::DarkGray).add_modifier(ITALIC),
            number: fg(Color::LightYellow),
            type_: fg(Color::LightCyan),
            punct: fg(Color::Gray),
            link: fg(Color::LightBlue).add_modifier(Modifier::UNDERLINED),
            quote: fg(Color::Gray).add_modifier(ITALIC),
            bullet: fg(Color::Cyan),
            table_border: fg(Color::DarkGray),
            diff_added: fg(Color::Green),
            diff_removed: fg(Color::Red),
            diff_hunk: fg(Color::Cyan),
            diff_context: fg(Color::Gray),
            diff_header: Style::new().add_modifier(BOLD),
            tool_name: Style::new().add_modifier(BOLD),
            tool_ok: fg(Color::Green),
            tool_error: fg(Color::Red).add_modifier(BOLD),
            tool_running: fg(Color::Yellow),
            user: fg(Color::Cyan).add_modifier(BOLD),
            notice: fg(Color::DarkGray),
            error: fg(Color::Red),
            warning: fg(Color::Yellow).add_modifier(BOLD),
            status: fg(Color::Gray).add_modifier(Modifier::REVERSED),
            selection: Style::new().add_modifier(Modifier::REVERSED),
            todo_pending: Style::new(),
            todo_active: fg(Color::Yellow).add_modifier(BOLD),
            todo_done: fg(Color::Green),
            todo_cancelled: fg(Color::DarkGray).add_modifier(Modifier::CROSSED_OUT),
        }
    }

    /// Colours for a light background: darker tones from the 256-colour palette where the
    /// named ones (yellow, light green) would be hard to read on white.
    pub(crate) fn light() -> Self {
        let dark_yellow = Color::Indexed(130);
        let dark_green = Color::Indexed(28);
        let dark_red = Color::Indexed(124);
        let dark_blue = Color::Indexed(25);
        let dark_cyan = Color::Indexed(30);
        let purple = Color::Indexed(90);
        let gray = Color::Indexed(244);
        Self {
            color: true,
            dim: fg(gray),
            heading: fg(dark_blue).add_modifier(BOLD),
            strike: fg(gray).add_modifier(Modifier::CROSSED_OUT),
            inline_code: fg(purple),
            code: fg(Color::Indexed(235)),
            code_bg: Some(Color::Indexed(254)),
            keyword: fg(purple),
            string: fg(dark_green),
            comment: fg(gray).add_modifier(ITALIC),
            number: fg(dark_yellow),
            type_: fg(dark_cyan),
            punct: fg(Color::Indexed(238)),
            link: fg(dark_blue).add_modifier(Modifier::UNDERLINED),
            quote: fg(Color::Indexed(240)).add_modifier(ITALIC),
            bullet: fg(dark_cyan),
            table_border: fg(gray),
            diff_added: fg(dark_green),
            diff_removed: fg(dark_red),
            diff_hunk: fg(dark_cyan),
            diff_context: fg(Color::Indexed(238)),
            tool_ok: fg(dark_green),
            tool_error: fg(dark_red).add_modifier(BOLD),
            tool_running: fg(dark_yellow),
            user: fg(dark_blue).add_modifier(BOLD),
            notice: fg(gray),
            error: fg(dark_red),
            warning: fg(dark_yellow).add_modifier(BOLD),
            status: fg(Color::Indexed(236)).add_modifier(Modifier::REVERSED),
            todo_active: fg(dark_yellow).add_modifier(BOLD),
            todo_done: fg(dark_green),
            todo_cancelled: fg(gray).add_modifier(Modifier::CROSSED_OUT),
            ..Self::dark()
        }
    }

    /// No colours (`NO_COLOR`): structure is kept by bold, italic, underline, reverse video
    /// and strike-through only.
    pub(crate) fn plain() -> Self {
        let none = Style::new();
        Self {
            color: false,
            text: none,
            dim: none,
            heading: none.add_modifier(BOLD | Modifier::UNDERLINED),
            emphasis: none.add_modifier(ITALIC),
            strong: none.add_modifier(BOLD),
            strike: none.add_modifier(Modifier::CROSSED_OUT),
            inline_code: none,
            code: none,
            code_bg: None,
            keyword: none.add_modifier(BOLD),
            string: none,
            comment: none.add_modifier(ITALIC),
            number: none,
            type_: none,
            punct: none,
            link: none.add_modifier(Modifier::UNDERLINED),
            quote: none.add_modifier(ITALIC),
            bullet: none,
            table_border: none,
            diff_added: none,
            diff_removed: none,
            diff_hunk: none.add_modifier(BOLD),
            diff_context: none,
            diff_header: none.add_modifier(BOLD),
            tool_name: none.add_modifier(BOLD),
            tool_ok: none,
            tool_error: none.add_modifier(BOLD),
            tool_running: none,
            user: none.add_modifier(BOLD),
            notice: none,
            error: none.add_modifier(BOLD),
            warning: none.add_modifier(BOLD),
            status: none.add_modifier(Modifier::REVERSED),
            selection: none.add_modifier(Modifier::REVERSED),
            todo_pending: none,
            todo_active: none.add_modifier(BOLD),
            todo_done: none,
            todo_cancelled: none.add_modifier(Modifier::CROSSED_OUT),
        }
    }

    /// The theme for `choice` (`auto`, `dark` or `light`; anything else is `auto`):
    /// [`Theme::plain`] when `no_color` (`NO_COLOR` is set); `auto` reads `colorfgbg`, the
    /// value of `COLORFGBG` (`fg;bg`, as rxvt, Konsole and iTerm set it): a background of 7
    /// or 9 and up is light, 0–6 and 8 dark; absent or unreadable: dark.
    pub(crate) fn pick(choice: &str, no_color: bool, colorfgbg: Option<&str>) -> Self {
        if no_color {
            return Self::plain();
        }
        match choice {
            "dark" => Self::dark(),
            "light" => Self::light(),
            _ if light_background(colorfgbg) => Self::light(),
            _ => Self::dark(),
        }
    }
}

/// Whether `COLORFGBG` names a light background (its last field).
fn light_background(colorfgbg: Option<&str>) -> bool {
    let Some(bg) = colorfgbg
        .and_then(|value| value.rsplit(';').next())
        .and_then(|bg| bg.trim().parse::<u16>().ok())
    else {
        return false;
    };
    bg == 7 || bg >= 9
}

#[cfg(test)]
impl Theme {
    /// Every style, for tests over all of them.
    pub(crate) fn styles(&self) -> Vec<Style> {
        vec![
            self.text,
            self.dim,
            self.heading,
            self.emphasis,
            self.strong,
            self.strike,
            self.inline_code,
            self.code,
            self.keyword,
            self.string,
            self.comment,
            self.number,
            self.type_,
            self.punct,
            self.link,
            self.quote,
            self.bullet,
            self.table_border,
            self.diff_added,
            self.diff_removed,
            self.diff_hunk,
            self.diff_context,
            self.diff_header,
            self.tool_name,
            self.tool_ok,
            self.tool_error,
            self.tool_running,
            self.user,
            self.notice,
            self.error,
            self.warning,
            self.status,
            self.selection,
            self.todo_pending,
            self.todo_active,
            self.todo_done,
            self.todo_cancelled,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_colorfgbg_and_no_color_wins() {
        assert_eq!(Theme::pick("auto", false, None), Theme::dark());
        assert_eq!(Theme::pick("auto", false, Some("15;0")), Theme::dark());
        assert_eq!(Theme::pick("auto", false, Some("0;15")), Theme::light());
        assert_eq!(Theme::pick("auto", false, Some("0;7")), Theme::light());
        assert_eq!(
            Theme::pick("auto", false, Some("0;default;8")),
            Theme::dark()
        );
        assert_eq!(Theme::pick("auto", false, Some("0;11")), Theme::light());
        assert_eq!(Theme::pick("auto", false, Some("default")), Theme::dark());
        assert_eq!(Theme::pick("light", false, Some("15;0")), Theme::light());
        assert_eq!(Theme::pick("dark", false, Some("0;15")), Theme::dark());
        assert_eq!(Theme::pick("light", true, None), Theme::plain());
    }

    #[test]
    fn plain_has_no_colours() {
        let theme = Theme::plain();
        assert!(!theme.color);
        assert!(theme.code_bg.is_none());
        for style in theme.styles() {
            assert_eq!((style.fg, style.bg), (None, None), "{style:?}");
        }
    }
}
