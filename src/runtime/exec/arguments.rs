//! `$ARGUMENTS` and `$1`…`$9` in a discovered command's body, as Claude Code and OpenCode
//! expand them: the whole argument text, and its whitespace-separated words.

/// `body` with `$ARGUMENTS` replaced by `arguments` and `$1`…`$9` by its words (empty when
/// there are fewer). Any other `$` is kept.
pub(super) fn expand_arguments(body: &str, arguments: &str) -> String {
    let words: Vec<&str> = arguments.split_whitespace().collect();
    let mut out = String::with_capacity(body.len() + arguments.len());
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(arguments);
            rest = tail;
        } else if let Some(digit @ b'1'..=b'9') = after.bytes().next() {
            let index = usize::from(digit - b'1');
            out.push_str(words.get(index).copied().unwrap_or(""));
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::expand_arguments;

    #[test]
    fn arguments_and_positions_are_expanded() {
        assert_eq!(
            expand_arguments("Fix $ARGUMENTS now", "issue 42"),
            "Fix issue 42 now"
        );
        assert_eq!(
            expand_arguments("from $1 to $2, not $3.", "a  b"),
            "from a to b, not ."
        );
    }

    #[test]
    fn other_dollars_are_kept() {
        assert_eq!(
            expand_arguments("costs $ and $x and $0", "a"),
            "costs $ and $x and $0"
        );
        assert_eq!(expand_arguments("$", ""), "$");
        // Only one digit is a position: `$10` is the first word, then `0`.
        assert_eq!(expand_arguments("$10", "a b"), "a0");
    }
}
