use super::*;

/// The text of each span with the theme field its style is.
fn classes(lang: &str, line: &str, state: State) -> (Vec<(String, &'static str)>, State) {
    let theme = Theme::dark();
    let (spans, state) = highlight(lang, line, state, &theme);
    let named = |style: Style| {
        [
            (theme.keyword, "keyword"),
            (theme.string, "string"),
            (theme.comment, "comment"),
            (theme.number, "number"),
            (theme.type_, "type"),
            (theme.punct, "punct"),
        ]
        .into_iter()
        .find(|(class, _)| theme.code.patch(*class) == style)
        .map_or("text", |(_, name)| name)
    };
    let spans = spans
        .into_iter()
        .map(|span| (span.content.trim().to_owned(), named(span.style)))
        .filter(|(text, _)| !text.is_empty())
        .collect();
    (spans, state)
}

fn class_of(spans: &[(String, &'static str)], text: &str) -> &'static str {
    spans.iter().find(|(t, _)| t == text).map_or_else(
        || panic!("no span {text:?} in {spans:?}"),
        |(_, class)| *class,
    )
}

#[test]
fn rust_tokens_get_their_classes() {
    let line = r#"pub fn parse<'a>(s: &'a str) -> Option<u32> { let x = "a\"b"; 42 } // done"#;
    let (spans, state) = classes("rust", line, State::Code);
    assert_eq!(state, State::Code);
    assert_eq!(class_of(&spans, "pub"), "keyword");
    assert_eq!(class_of(&spans, "fn"), "keyword");
    assert_eq!(class_of(&spans, "let"), "keyword");
    assert_eq!(class_of(&spans, "Option"), "type");
    assert_eq!(class_of(&spans, "u32"), "type");
    assert_eq!(class_of(&spans, "'a"), "type");
    assert_eq!(class_of(&spans, r#""a\"b""#), "string");
    assert_eq!(class_of(&spans, "42"), "number");
    assert_eq!(class_of(&spans, "// done"), "comment");
    assert_eq!(class_of(&spans, "parse"), "text");
    let (spans, _) = classes("rs", "let c = 'x'; for i in 0..10 {}", State::Code);
    assert_eq!(class_of(&spans, "'x'"), "string");
    assert_eq!(class_of(&spans, "0"), "number");
    assert_eq!(class_of(&spans, "10"), "number");
}

#[test]
fn block_comments_and_multiline_strings_go_on() {
    let (spans, state) = classes("c", "int x; /* start", State::Code);
    assert_eq!(state, State::Comment);
    assert_eq!(class_of(&spans, "int"), "type");
    let (spans, state) = classes("c", "still */ return 0;", state);
    assert_eq!(state, State::Code);
    assert_eq!(class_of(&spans, "still */"), "comment");
    assert_eq!(class_of(&spans, "return"), "keyword");
    let (_, state) = classes("python", r#"x = """doc"#, State::Code);
    assert_eq!(
        state,
        State::Str {
            quote: '"',
            triple: true
        }
    );
    let (spans, state) = classes("py", r#"more""" if x"#, state);
    assert_eq!(state, State::Code);
    assert_eq!(class_of(&spans, "if"), "keyword");
    // A plain string does not go on past its line.
    let (_, state) = classes("rust", "let s = \"open", State::Code);
    assert_eq!(state, State::Code);
    let (_, state) = classes("ts", "const s = `open", State::Code);
    assert_eq!(
        state,
        State::Str {
            quote: '`',
            triple: false
        }
    );
}

#[test]
fn other_languages_and_unknown_ones() {
    let (spans, _) = classes("bash", "echo \"$HOME\" # a#b", State::Code);
    assert_eq!(class_of(&spans, "# a#b"), "comment");
    let (spans, _) = classes("kdl", "node #true 1.5 \"s\" // c", State::Code);
    assert_eq!(class_of(&spans, "#true"), "keyword");
    assert_eq!(class_of(&spans, "1.5"), "number");
    let (spans, _) = classes("json", r#"{"a": null}"#, State::Code);
    assert_eq!(class_of(&spans, "null"), "keyword");
    let (spans, _) = classes("{.go}", "func main() {}", State::Code);
    assert_eq!(class_of(&spans, "func"), "keyword");
    let (spans, _) = classes("brainfuck", "fn x", State::Code);
    assert_eq!(spans, [("fn x".to_owned(), "text")]);
    assert!(syntax("rust,ignore").is_some());
    assert!(syntax("").is_none());
}
