//! The conversation so far, told to an agent whose backend keeps no session (a model API,
//! or a newly switched-to adapter): each earlier message of the person's and reply of the
//! agent's, then what the person says now.

use crate::cli::chat::transcript::Entry;

/// `told` preceded by the conversation in `earlier` (nothing to add when it holds no
/// exchange yet).
pub(super) fn with_history(earlier: &[Entry], told: &str) -> String {
    let said: Vec<String> = earlier
        .iter()
        .filter_map(|entry| match entry {
            Entry::User { text, told } => {
                let said = told.as_deref().unwrap_or(text);
                Some(format!("<person>\n{said}\n</person>"))
            }
            Entry::Assistant { text, .. } if !text.is_empty() => {
                Some(format!("<you>\n{text}\n</you>"))
            }
            _ => None,
        })
        .collect();
    if said.is_empty() {
        return told.to_owned();
    }
    format!(
        "This continues a conversation between you and the person. What was said so far, oldest first:\n\n{}\n\nWhat the person says now:\n\n{told}",
        said.join("\n\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_messages_come_before_the_new_one() {
        let earlier = [
            Entry::User {
                text: "/colour".into(),
                told: Some("name a colour".into()),
            },
            Entry::Assistant {
                text: "teal".into(),
                thinking: String::new(),
                done: true,
            },
            Entry::Notice {
                text: "ignored".into(),
                error: false,
            },
        ];
        let told = with_history(&earlier, "another");
        assert!(
            told.contains("<person>\nname a colour\n</person>"),
            "{told}"
        );
        assert!(told.contains("<you>\nteal\n</you>"), "{told}");
        assert!(told.ends_with("another"));
        assert!(!told.contains("ignored"));
        assert_eq!(with_history(&[], "first"), "first");
    }
}
