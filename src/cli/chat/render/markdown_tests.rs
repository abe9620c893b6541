use ratatui::style::Modifier;

use super::*;
use crate::cli::chat::render::testing::{assert_fits, strings, style_of};

fn render(text: &str, width: u16) -> Vec<String> {
    strings(&markdown(text, width, &Theme::dark()))
}

#[test]
fn paragraphs_wrap_and_blocks_are_separated() {
    let lines = render(
        "# Title\n\nThe quick brown fox jumps over the lazy dog.\n\nNext.",
        20,
    );
    assert_eq!(
        lines,
        [
            "Title",
            "",
            "The quick brown fox",
            "jumps over the lazy",
            "dog.",
            "",
            "Next."
        ]
    );
    let theme = Theme::dark();
    let styled = markdown("# Title\n\n**bold** *it* ~~gone~~ `code`", 40, &theme);
    assert!(
        style_of(&styled, "Title")
            .add_modifier
            .contains(Modifier::BOLD)
    );
    assert_eq!(style_of(&styled, "bold"), theme.strong);
    assert_eq!(style_of(&styled, "it"), theme.emphasis);
    assert_eq!(style_of(&styled, "gone"), theme.strike);
    assert_eq!(style_of(&styled, "code"), theme.inline_code);
    // Plain keeps inline code's backticks: no colour shows it.
    assert_eq!(
        strings(&markdown("a `b` c", 20, &Theme::plain())),
        ["a `b` c"]
    );
}

#[test]
fn wrapping_never_exceeds_the_width() {
    let text = "日本語のテキストはとても長いです。🎉🎉🎉 emoji and a verylongwordthatmustbreak \
                and `inline code` — with **strong 強い** text.\n\n> quoted 日本語 text that wraps \
                around\n\n- item 日本語 one two three\n  - nested 🎉 item four five six";
    for width in [1_u16, 2, 3, 5, 8, 13, 21, 40] {
        let lines = markdown(text, width, &Theme::dark());
        if width >= 5 {
            assert_fits(&lines, usize::from(width));
        }
        assert!(!lines.is_empty());
    }
}

#[test]
fn lists_hang_their_indent_and_nest() {
    let lines = render(
        "- one two three\n- four\n  - inner item here\n\n1. first\n2. second",
        12,
    );
    assert_eq!(
        lines,
        [
            "• one two",
            "  three",
            "• four",
            "  ◦ inner",
            "    item",
            "    here",
            "",
            "1. first",
            "2. second",
        ]
    );
    let lines = render("- [ ] todo\n- [x] done", 20);
    assert_eq!(lines, ["☐ todo", "☑ done"]);
    let lines = render("7. seven\n8. eight", 20);
    assert_eq!(lines, ["7. seven", "8. eight"]);
}

#[test]
fn quotes_have_a_bar_and_links_their_address() {
    let lines = render("> one\n>\n> two words here", 10);
    assert_eq!(lines, ["│ one", "│", "│ two", "│ words", "│ here"]);
    let lines = render("see [docs](https://x.io) and <https://y.io>", 80);
    assert_eq!(lines, ["see docs (https://x.io) and https://y.io"]);
    let theme = Theme::dark();
    let styled = markdown("[docs](https://x.io)", 80, &theme);
    assert_eq!(style_of(&styled, "docs"), theme.link);
    assert_eq!(style_of(&styled, "(https://x.io)"), theme.dim);
}

#[test]
fn code_blocks_are_highlighted_and_not_rewrapped() {
    let theme = Theme::dark();
    let text = "```rust\nfn main() {\n    let x = 1; // one\n}\n```\nafter";
    let lines = markdown(text, 40, &theme);
    let texts = strings(&lines);
    assert_eq!(texts[0].trim_end(), "  fn main() {");
    assert_eq!(texts[1].trim_end(), "      let x = 1; // one");
    assert_eq!(texts[2].trim_end(), "  }");
    assert_eq!(texts[4], "after");
    // Painted to the width on the code background.
    assert_eq!(columns(&texts[0]), 40);
    let bg = theme.code_bg;
    assert_eq!(style_of(&lines, "fn").fg, theme.keyword.fg);
    assert_eq!(style_of(&lines, "fn").bg, bg);
    assert_eq!(style_of(&lines, "// one").fg, theme.comment.fg);
    // A long line goes on after `↪`, cut at the width.
    let lines = strings(&markdown("```\nabcdefghijkl\n```", 8, &Theme::plain()));
    assert_eq!(lines, ["  abcdef", "↪ ghijkl"]);
    // Indented code keeps its own indentation.
    let lines = strings(&markdown("    a\n      b", 20, &Theme::plain()));
    assert_eq!(lines, ["  a", "    b"]);
}

#[test]
fn an_unclosed_fence_is_code_so_far() {
    let lines = strings(&markdown(
        "Look:\n\n```python\ndef f():\n    # **not bold**",
        30,
        &Theme::plain(),
    ));
    assert_eq!(lines, ["Look:", "", "  def f():", "      # **not bold**"]);
    // Half a table is text until its delimiter row comes.
    let lines = strings(&markdown("| a | b |", 30, &Theme::plain()));
    assert_eq!(lines, ["| a | b |"]);
}

#[test]
fn tables_fit_their_content_and_align() {
    let text =
        "| Name | Qty | Note |\n|:-----|----:|:----:|\n| apple | 3 | ok |\n| kiwi | 12 | ripe |";
    let lines = render(text, 80);
    assert_eq!(
        lines,
        [
            "┌───────┬─────┬──────┐",
            "│ Name  │ Qty │ Note │",
            "├───────┼─────┼──────┤",
            "│ apple │   3 │  ok  │",
            "│ kiwi  │  12 │ ripe │",
            "└───────┴─────┴──────┘",
        ]
    );
    // Too wide: the wide column gives way and its cells wrap; borders stay aligned.
    let text = "| k | value |\n|---|---|\n| a | one two three four five six |";
    let lines = render(text, 20);
    assert_fits(&markdown(text, 20, &Theme::dark()), 20);
    let widths: Vec<usize> = lines.iter().map(|line| columns(line)).collect();
    assert!(widths.iter().all(|w| *w == widths[0]), "{lines:#?}");
    assert!(lines.len() > 5, "{lines:#?}");
    // Cells with wide characters are measured by display width.
    let lines = render("| 日本 | x |\n|---|---|\n| a | 🎉 |", 40);
    let widths: Vec<usize> = lines.iter().map(|line| columns(line)).collect();
    assert!(widths.iter().all(|w| *w == widths[0]), "{lines:#?}");
    // Too narrow for borders: rows as text.
    assert_eq!(
        render("| a | b |\n|---|---|\n| c | d |", 5),
        ["a │ b", "c │ d"]
    );
}

#[test]
fn rules_and_html_and_empty_input() {
    assert_eq!(render("a\n\n---\n\nb", 5), ["a", "", "─────", "", "b"]);
    assert!(render("", 10).is_empty());
    assert_eq!(render("<br>", 10), ["<br>"]);
}

#[test]
fn a_long_reply_renders_in_one_linear_pass() {
    let block = "## Section\n\nSome *text* with `code` and a [link](https://example.com) that \
                 wraps around the width.\n\n- item one\n- item two\n\n```rust\nfn main() { \
                 let x = \"s\"; }\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n";
    let text = block.repeat(160);
    assert!(text.lines().count() >= 2_000);
    let started = std::time::Instant::now();
    let lines = markdown(&text, 100, &Theme::dark());
    let took = started.elapsed();
    assert!(lines.len() > 2_000);
    // Debug builds are far slower than release (where this takes a few milliseconds);
    // this only catches a blow-up.
    assert!(took.as_millis() < 2_000, "{took:?}");
}

#[test]
fn every_prefix_of_a_streamed_reply_renders() {
    let text = "# T\n\nSome **bold *nested* text** and `co\n\n> - [x] quoted ~~task~~\n>   \
                more\n\n1. one\n   ```py\n   x = '''a\n   b'''\n   ```\n2. 日本🎉\n\n| a | b |\n\
                |:-:|--|\n| [l](u) | `c` |\n\n<div>\nhtml\n</div>\n\n    indented\n";
    let ends = text.char_indices().map(|(at, _)| at).chain([text.len()]);
    for end in ends {
        for width in [1_u16, 4, 9, 30] {
            let lines = markdown(&text[..end], width, &Theme::dark());
            assert_fits(&lines, usize::from(width.max(2)));
        }
    }
}
