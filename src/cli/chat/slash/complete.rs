//! Completion of a line as it is typed: while the name is typed, the names that match it
//! (those starting with it first, then those containing it, case aside) with their kind
//! and description; once the name is whole and a space typed, what it takes (its argument
//! hint), and for `/model`, `/provider` and `/resume` the values that match the word at
//! the cursor. Each candidate says what replaces which bytes of the line when accepted.

use std::ops::Range;

use super::catalogue::{Builtin, Catalogue, Choice, Entry, Kind, Target};

/// What can be offered at the cursor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Completions {
    /// The bytes of the line an accepted candidate replaces.
    pub(crate) replace: Range<usize>,
    /// The candidates, best first.
    pub(crate) candidates: Vec<Candidate>,
    /// What the command takes (`<goal> [max]`, `[MODEL]`), once its name is typed whole
    /// and followed by a space.
    pub(crate) hint: Option<String>,
}

impl Completions {
    /// Whether there is nothing to offer.
    #[must_use]
    pub(crate) fn is_empty(&self) -> bool {
        self.candidates.is_empty() && self.hint.is_none()
    }

    /// `line` with `candidate` accepted, and the cursor after it.
    #[must_use]
    pub(crate) fn accept(&self, line: &str, candidate: &Candidate) -> (String, usize) {
        let mut text = String::with_capacity(line.len() + candidate.replacement.len());
        text.push_str(&line[..self.replace.start]);
        text.push_str(&candidate.replacement);
        let cursor = text.len();
        text.push_str(&line[self.replace.end..]);
        (text, cursor)
    }
}

/// One thing the line can be completed with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// What replaces [`Completions::replace`]: a name (with a space after it when it takes
    /// arguments and nothing follows), or a value.
    pub(crate) replacement: String,
    /// How the list shows it: `/ralph`, or a value.
    pub(crate) label: String,
    /// A name's kind; `None` for a value.
    pub(crate) kind: Option<Kind>,
    /// One line about it.
    pub(crate) description: Option<String>,
    /// What it takes, for a name.
    pub(crate) hint: Option<String>,
}

/// What can be offered for `input` with the cursor at byte `cursor`.
#[must_use]
pub(crate) fn complete(catalogue: &Catalogue, input: &str, cursor: usize) -> Completions {
    let mut cursor = cursor.min(input.len());
    while !input.is_char_boundary(cursor) {
        cursor -= 1;
    }
    if !input.starts_with('/') || input.starts_with("//") || cursor == 0 {
        return Completions::default();
    }
    let name_end = input[1..]
        .find(char::is_whitespace)
        .map_or(input.len(), |at| at + 1);
    if cursor <= name_end {
        return names(catalogue, input, cursor, name_end);
    }
    let Some(entry) = catalogue.find(&input[1..name_end]) else {
        return Completions::default();
    };
    let mut completions = Completions {
        replace: cursor..cursor,
        candidates: Vec::new(),
        hint: entry.hint.clone(),
    };
    if let Target::Builtin(builtin @ (Builtin::Model | Builtin::Provider | Builtin::Resume)) =
        entry.target
    {
        let start = input[..cursor].rfind(char::is_whitespace).map_or(0, |at| {
            at + input[at..].chars().next().map_or(1, char::len_utf8)
        });
        // Only the first word takes a value.
        if !input[name_end..start].trim().is_empty() {
            return completions;
        }
        let end = input[cursor..]
            .find(char::is_whitespace)
            .map_or(input.len(), |at| cursor + at);
        completions.replace = start..end;
        completions.candidates = values(catalogue.choices(builtin), &input[start..cursor]);
    }
    completions
}

/// The names matching what is typed of the name.
fn names(catalogue: &Catalogue, input: &str, cursor: usize, name_end: usize) -> Completions {
    let typed = &input[1..cursor];
    if typed.contains('/') {
        return Completions::default();
    }
    let nothing_after = name_end == input.len();
    let mut ranked: Vec<(u8, &Entry)> = catalogue
        .entries()
        .filter_map(|entry| Some((rank(&entry.name, typed)?, entry)))
        .collect();
    ranked.sort_by(|(a_rank, a), (b_rank, b)| {
        (a_rank, a.kind, a.alias_of.is_some(), &a.name).cmp(&(
            b_rank,
            b.kind,
            b.alias_of.is_some(),
            &b.name,
        ))
    });
    let candidates = ranked
        .into_iter()
        .map(|(_, entry)| {
            let space = if nothing_after && entry.takes_arguments() {
                " "
            } else {
                ""
            };
            let description = match &entry.alias_of {
                Some(of) => Some(format!(
                    "= /{of}{}",
                    entry
                        .description
                        .as_deref()
                        .and_then(|text| text.lines().next())
                        .map(|text| format!(": {text}"))
                        .unwrap_or_default()
                )),
                None => entry
                    .description
                    .as_deref()
                    .and_then(|text| text.lines().next())
                    .map(str::to_owned),
            };
            Candidate {
                replacement: format!("{}{space}", entry.name),
                label: format!("/{}", entry.name),
                kind: Some(entry.kind),
                description,
                hint: entry.hint.clone(),
            }
        })
        .collect();
    Completions {
        replace: 1..name_end,
        candidates,
        hint: None,
    }
}

/// The values matching `typed`, those starting with it first, in the catalogue's order.
fn values(choices: &[Choice], typed: &str) -> Vec<Candidate> {
    let mut ranked: Vec<(u8, usize, &Choice)> = choices
        .iter()
        .enumerate()
        .filter_map(|(at, choice)| Some((rank(&choice.value, typed)?, at, choice)))
        .collect();
    ranked.sort_by_key(|&(rank, at, _)| (rank, at));
    ranked
        .into_iter()
        .map(|(_, _, choice)| Candidate {
            replacement: choice.value.clone(),
            label: choice.value.clone(),
            kind: None,
            description: choice.description.clone(),
            hint: None,
        })
        .collect()
}

/// 0 when `candidate` is `typed`, 1 when it starts with it, 2 when it contains it (case
/// aside); `None` otherwise.
fn rank(candidate: &str, typed: &str) -> Option<u8> {
    let (candidate, typed) = (candidate.to_lowercase(), typed.to_lowercase());
    if candidate == typed {
        Some(0)
    } else if candidate.starts_with(&typed) {
        Some(1)
    } else if candidate.contains(&typed) {
        Some(2)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalogue() -> Catalogue {
        let (_dir, project) = super::super::tests::fixture();
        Catalogue::discover(&project).with_sessions(vec![
            Choice {
                value: "a1b2c3".to_owned(),
                description: Some("yesterday: the parser".to_owned()),
            },
            Choice {
                value: "ffee00".to_owned(),
                description: None,
            },
        ])
    }

    fn labels(completions: &Completions) -> Vec<&str> {
        completions
            .candidates
            .iter()
            .map(|candidate| candidate.label.as_str())
            .collect()
    }

    #[test]
    fn names_starting_with_the_text_come_before_names_containing_it() {
        let catalogue = catalogue();
        let completions = complete(&catalogue, "/ra", 3);
        assert_eq!(completions.replace, 1..3);
        // Starting with `ra`: the workflows; then containing it: the namespaced command.
        assert_eq!(labels(&completions), ["/ralph", "/ranger", "/frontend:rap"]);
        let ralph = &completions.candidates[0];
        assert_eq!(ralph.kind, Some(Kind::Workflow));
        assert_eq!(ralph.description.as_deref(), Some("the ralph workflow"));
        assert_eq!(ralph.hint.as_deref(), Some("<prompt> [max_loops] [dry]"));
        // Accepting it puts the name and a space, ready for the arguments.
        assert_eq!(ralph.replacement, "ralph ");
        assert_eq!(completions.accept("/ra", ralph), ("/ralph ".to_owned(), 7));
        // `ranger` takes nothing: no space.
        assert_eq!(completions.candidates[1].replacement, "ranger");

        // Kinds in precedence order, case aside; an exact name first.
        let completions = complete(&catalogue, "/RE", 3);
        let first: Vec<(&str, Option<Kind>)> = completions
            .candidates
            .iter()
            .map(|c| (c.label.as_str(), c.kind))
            .take(4)
            .collect();
        assert_eq!(
            first,
            [
                ("/reload", Some(Kind::Builtin)),
                ("/resume", Some(Kind::Builtin)),
                ("/review-cycle", Some(Kind::Workflow)),
                ("/review", Some(Kind::Command)),
            ]
        );
        let completions = complete(&catalogue, "/model", 6);
        assert_eq!(labels(&completions)[0], "/model");
    }

    #[test]
    fn the_cursor_inside_the_name_replaces_the_whole_name() {
        let catalogue = catalogue();
        let line = "/revi src/x.rs";
        let completions = complete(&catalogue, line, 3);
        assert_eq!(completions.replace, 1..5);
        let review = completions
            .candidates
            .iter()
            .find(|c| c.label == "/review")
            .unwrap();
        // Something follows the name: no space added.
        assert_eq!(review.replacement, "review");
        assert_eq!(
            completions.accept(line, review),
            ("/review src/x.rs".to_owned(), 7)
        );
        assert!(complete(&catalogue, "/zzz", 4).candidates.is_empty());
    }

    #[test]
    fn after_the_name_and_a_space_the_hint_is_given() {
        let catalogue = catalogue();
        let completions = complete(&catalogue, "/ralph ", 7);
        assert_eq!(
            completions.hint.as_deref(),
            Some("<prompt> [max_loops] [dry]")
        );
        assert!(completions.candidates.is_empty());
        let completions = complete(&catalogue, "/review a", 9);
        assert_eq!(completions.hint.as_deref(), Some("[file] [focus]"));
        // Not a line for slash commands, or not a name.
        assert!(complete(&catalogue, "hello", 5).is_empty());
        assert!(complete(&catalogue, "//ral", 5).is_empty());
        assert!(complete(&catalogue, "/nope ", 6).is_empty());
        assert!(complete(&catalogue, "/clear ", 7).is_empty());
    }

    #[test]
    fn model_provider_and_resume_offer_their_values() {
        let catalogue = catalogue();
        let completions = complete(&catalogue, "/model son", 10);
        assert_eq!(completions.hint.as_deref(), Some("[MODEL]"));
        assert_eq!(completions.replace, 7..10);
        let values = labels(&completions);
        assert_eq!(values[0], "sonnet");
        assert!(values.contains(&"claude-sonnet-4-5"), "{values:?}");
        assert_eq!(
            completions.candidates[0].description.as_deref(),
            Some("= claude-sonnet-4-5")
        );

        let line = "/provider cod rest";
        let completions = complete(&catalogue, line, 13);
        // Starting with `cod` first, then containing it.
        assert_eq!(labels(&completions), ["codex", "claude-code", "opencode"]);
        assert_eq!(
            completions.accept(line, &completions.candidates[0]),
            ("/provider codex rest".to_owned(), 15)
        );
        let completions = complete(&catalogue, "/provider ", 10);
        assert_eq!(completions.candidates.len(), crate::ir::ADAPTERS.len());

        let completions = complete(&catalogue, "/resume ff", 10);
        assert_eq!(labels(&completions), ["ffee00"]);
        // Only the first word takes a value.
        assert!(
            complete(&catalogue, "/model opus x", 13)
                .candidates
                .is_empty()
        );
    }
}
