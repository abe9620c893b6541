//! "did you mean" and "expected one of" phrasing, shared by every stage.

/// The candidate closest to `found`, if any is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    found: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(found, candidate), candidate))
        .filter(|&(score, candidate)| score >= 0.8 && candidate != found)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// "`a`, `b` or `c`" for a help or message.
pub fn expected_one_of<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::from("nothing"),
        [only] => format!("`{}`", only.as_ref()),
        [init @ .., last] => {
            let init: Vec<String> = init
                .iter()
                .map(|item| format!("`{}`", item.as_ref()))
                .collect();
            format!("{} or `{}`", init.join(", "), last.as_ref())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_names_only() {
        assert_eq!(
            did_you_mean("shiip", ["ship", "review", "end"]),
            Some("ship")
        );
        assert_eq!(did_you_mean("zzz", ["ship", "review"]), None);
    }

    #[test]
    fn lists_items() {
        assert_eq!(expected_one_of(&["a"]), "`a`");
        assert_eq!(expected_one_of(&["a", "b", "c"]), "`a`, `b` or `c`");
    }
}
