//! Slash commands against a project laid out in a temp directory: workflows in
//! `.atomic/workflows/`, commands in `.claude/commands/`, skills in `.atomic/skills/`.

use std::path::Path;

use super::*;
use crate::cli::project::Project;

/// A workflow `name` (file `file`), with `inputs` as written in KDL.
fn workflow(name: &str, extra: &str) -> String {
    format!(
        r#"workflow "{name}" {{
    description "the {name} workflow"
    {extra}
    state {{ field "x" type="string" default=""; }}
    set "x" "y"
}}
"#
    )
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The fixture project; the home is inside it, so the real one never leaks in.
pub(super) fn fixture() -> (tempfile::TempDir, Project) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    write(
        root,
        ".atomic/workflows/ralph.kdl",
        &workflow(
            "ralph",
            r#"alias "loop"
    input "prompt" type="string" description="What to work on"
    input "max_loops" type="integer" default=5 description="Most rounds"
    input "dry" type="boolean" default=#false"#,
        ),
    );
    write(
        root,
        ".atomic/workflows/model.kdl",
        &workflow("model", r#"input "x" type="string""#),
    );
    write(
        root,
        ".atomic/workflows/broken.kdl",
        "this is not { a workflow",
    );
    write(
        root,
        "home/.atomic/workflows/ranger.kdl",
        &workflow("ranger", ""),
    );
    write(
        root,
        ".claude/commands/review.md",
        "---\ndescription: Review a file\nargument-hint: [file] [focus]\n---\nReview $1 with a focus on $2.\nAll of it: $ARGUMENTS",
    );
    write(
        root,
        ".claude/commands/ralph.md",
        "---\ndescription: hidden by the workflow\n---\nnever",
    );
    write(
        root,
        ".claude/commands/greet.md",
        "---\ndescription: Say what the shell says\n---\nThe shell says: !`echo hi`, to \"$1\".",
    );
    write(
        root,
        ".claude/commands/fails.md",
        "Status: !`echo partial; echo 'no such branch' >&2; exit 4`",
    );
    write(root, ".claude/commands/explain.md", "Explain this code.\n");
    write(
        root,
        ".claude/commands/frontend/rap.md",
        "---\ndescription: A namespaced command\n---\nRap about $ARGUMENTS",
    );
    write(
        root,
        ".atomic/skills/pdf/SKILL.md",
        "---\ndescription: Read PDF files\n---\nUse pdftotext on $ARGUMENTS",
    );
    write(
        root,
        ".atomic/skills/review/SKILL.md",
        "---\ndescription: hidden by the command\n---\nnever",
    );
    let project = Project {
        root: root.to_path_buf(),
        home: Some(root.join("home")),
        adapter: None,
        model: None,
    };
    (dir, project)
}

async fn run(line: &str) -> Result<Action, SlashError> {
    let (_dir, project) = fixture();
    let catalogue = Catalogue::discover(&project);
    parse(line, &catalogue, &Shell::new(&project.root)).await
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

fn inputs(action: Action) -> Vec<(String, String)> {
    match action {
        Action::Workflow { inputs, .. } => inputs,
        other => panic!("not a workflow: {other:?}"),
    }
}

#[test]
fn the_catalogue_holds_every_kind_and_the_first_of_a_name_wins() {
    let (_dir, project) = fixture();
    let catalogue = Catalogue::discover(&project);
    let kind = |name: &str| catalogue.find(name).map(|entry| entry.kind);
    assert_eq!(kind("model"), Some(Kind::Builtin));
    assert_eq!(kind("quit"), Some(Kind::Builtin));
    assert_eq!(kind("ralph"), Some(Kind::Workflow));
    assert_eq!(kind("loop"), Some(Kind::Workflow));
    assert_eq!(kind("ranger"), Some(Kind::Workflow));
    // Built-in workflows too (and their aliases).
    assert_eq!(kind("sequential"), Some(Kind::Workflow));
    assert_eq!(
        kind("tasks"),
        None,
        "the built-in ralph is hidden by the project's"
    );
    assert_eq!(kind("review"), Some(Kind::Command));
    assert_eq!(kind("frontend:rap"), Some(Kind::Command));
    assert_eq!(kind("pdf"), Some(Kind::Skill));

    let ralph = catalogue.find("ralph").unwrap();
    assert_eq!(ralph.hint.as_deref(), Some("<prompt> [max_loops] [dry]"));
    assert_eq!(ralph.description.as_deref(), Some("the ralph workflow"));
    assert_eq!(
        catalogue.find("loop").unwrap().alias_of.as_deref(),
        Some("ralph")
    );
    let review = catalogue.find("review").unwrap();
    assert_eq!(review.hint.as_deref(), Some("[file] [focus]"));
    assert_eq!(review.description.as_deref(), Some("Review a file"));

    let hidden: Vec<(&str, Kind)> = catalogue
        .hidden()
        .map(|entry| (entry.name.as_str(), entry.kind))
        .collect();
    assert!(hidden.contains(&("model", Kind::Workflow)), "{hidden:?}");
    assert!(hidden.contains(&("ralph", Kind::Command)), "{hidden:?}");
    assert!(hidden.contains(&("review", Kind::Skill)), "{hidden:?}");

    let help = catalogue.help();
    assert!(help.contains("/ralph <prompt> [max_loops] [dry]"), "{help}");
    assert!(help.contains("(also /loop)"), "{help}");
    assert!(help.contains("/pdf"), "{help}");
}

#[tokio::test]
async fn plain_lines_and_double_slashes_are_prompts() {
    assert_eq!(
        run("fix the /model bug").await,
        Ok(Action::Prompt("fix the /model bug".to_owned()))
    );
    assert_eq!(
        run("//model is a path").await,
        Ok(Action::Prompt("/model is a path".to_owned()))
    );
    assert_eq!(
        run("/usr/lib/libx.so is missing").await,
        Ok(Action::Prompt("/usr/lib/libx.so is missing".to_owned()))
    );
}

#[tokio::test]
async fn built_ins_take_their_value() {
    assert_eq!(run("/model").await, Ok(Action::Model(None)));
    assert_eq!(
        run("/model opus").await,
        Ok(Action::Model(Some("opus".to_owned())))
    );
    assert_eq!(
        run("/provider codex").await,
        Ok(Action::Provider(Some("codex".to_owned())))
    );
    assert_eq!(run("/resume").await, Ok(Action::Resume(None)));
    assert_eq!(run("/clear").await, Ok(Action::Clear));
    assert_eq!(run("/compact").await, Ok(Action::Compact));
    assert_eq!(run("/help").await, Ok(Action::Help));
    assert_eq!(run("/exit").await, Ok(Action::Quit));
    assert_eq!(run("/quit  ").await, Ok(Action::Quit));

    let error = run("/provider claude").await.unwrap_err();
    assert_eq!(error.message, "there is no adapter `claude`");
    assert!(
        error
            .help
            .as_deref()
            .unwrap()
            .contains("did you mean `claude-code`?"),
        "{error}"
    );
    let error = run("/clear everything").await.unwrap_err();
    assert_eq!(
        error.message,
        "`/clear` takes nothing, but `everything` was given"
    );
    let error = run("/model a b").await.unwrap_err();
    assert_eq!(
        error.message,
        "`/model` takes one value, [MODEL], but `b` came after it"
    );
}

#[tokio::test]
async fn a_quoted_word_fills_the_first_input() {
    let (_dir, project) = fixture();
    let catalogue = Catalogue::discover(&project);
    let action = parse(
        r#"/ralph "build the parser""#,
        &catalogue,
        &Shell::new(&project.root),
    )
    .await
    .unwrap();
    assert_eq!(
        action,
        Action::Workflow {
            name: "ralph".to_owned(),
            path: project.root.join(".atomic/workflows/ralph.kdl"),
            inputs: pairs(&[("prompt", "build the parser")]),
        }
    );
    // Positional words go in declared order; an alias runs the workflow by its name.
    let action = run(r#"/loop 'build it' 3 true"#).await.unwrap();
    assert!(matches!(&action, Action::Workflow { name, .. } if name == "ralph"));
    assert_eq!(
        inputs(action),
        pairs(&[("prompt", "build it"), ("max_loops", "3"), ("dry", "true")])
    );
}

#[tokio::test]
async fn name_value_words_fill_inputs_by_name() {
    assert_eq!(
        inputs(run(r#"/ralph max_loops=2 "the parser""#).await.unwrap()),
        pairs(&[("prompt", "the parser"), ("max_loops", "2")])
    );
    assert_eq!(
        inputs(run(r#"/ralph dry=true prompt="a b" 7"#).await.unwrap()),
        pairs(&[("prompt", "a b"), ("max_loops", "7"), ("dry", "true")])
    );
    // A quoted `=` is text.
    assert_eq!(
        inputs(run(r#"/ralph "x=1 is wrong""#).await.unwrap()),
        pairs(&[("prompt", "x=1 is wrong")])
    );
    let error = run("/ralph maxloops=2 go").await.unwrap_err();
    assert_eq!(
        error.message,
        "the workflow `/ralph` has no input `maxloops`"
    );
    let help = error.help.unwrap();
    assert!(help.contains("did you mean `max_loops=…`?"), "{help}");
    assert!(help.contains(r#"quote it: "maxloops=2""#), "{help}");
    let error = run("/ralph prompt=a prompt=b").await.unwrap_err();
    assert_eq!(error.message, "input `prompt` of `/ralph` is given twice");
}

#[tokio::test]
async fn a_missing_required_input_is_named_with_the_hint() {
    let error = run("/ralph max_loops=3").await.unwrap_err();
    assert_eq!(
        error.message,
        "`/ralph` needs the input `prompt` (What to work on)"
    );
    assert_eq!(
        error.help.as_deref(),
        Some("type it as: /ralph <prompt> [max_loops] [dry]  (or by name: prompt=…)")
    );
}

#[tokio::test]
async fn too_many_words_or_a_wrong_type_say_to_quote() {
    let error = run("/ralph build the parser now").await.unwrap_err();
    assert_eq!(
        error.message,
        "`/ralph` takes 3 more inputs, `prompt` then `max_loops` then `dry`, but 4 words were given: `build`, `the`, `parser`, `now`"
    );
    assert_eq!(
        error.help.as_deref(),
        Some(
            r#"put text with spaces in quotes: /ralph "build the parser now"  (it takes: /ralph <prompt> [max_loops] [dry])"#
        )
    );
    let error = run("/ralph fix it").await.unwrap_err();
    assert_eq!(
        error.message,
        "input `max_loops` of `/ralph` is an integer: expected an integer, found `it`"
    );
    assert!(
        error
            .help
            .unwrap()
            .starts_with(r#"if the words are one text, quote them: /ralph "fix it""#)
    );
    let error = run("/ranger x").await.unwrap_err();
    assert!(
        error.message.starts_with("`/ranger` takes no inputs"),
        "{error}"
    );
    let error = run(r#"/ralph "open"#).await.unwrap_err();
    assert_eq!(
        error.message,
        r#"the quote `"` at column 8 is never closed in `/ralph`"#
    );
    let error = run("/ralph don't").await.unwrap_err();
    assert!(error.help.unwrap().contains("\"don't stop\""));
}

#[tokio::test]
async fn an_unknown_name_suggests_the_nearest() {
    let error = run("/reveiw src/lib.rs").await.unwrap_err();
    assert_eq!(error.message, "there is no command `/reveiw`");
    assert!(
        error
            .help
            .as_deref()
            .unwrap()
            .starts_with("did you mean `/review`?"),
        "{error}"
    );
    let error = run("/zzzzzz").await.unwrap_err();
    assert!(!error.help.unwrap().contains("did you mean"));
    let error = run("/").await.unwrap_err();
    assert_eq!(error.message, "a `/` alone names no command");
    let error = run("/broken").await.unwrap_err();
    assert_eq!(error.message, "the workflow `/broken` cannot be run");
    assert!(error.help.unwrap().contains("atomic check"));
}

#[tokio::test]
async fn commands_get_their_arguments_with_quotes_kept_whole() {
    assert_eq!(
        run(r#"/review "src/main parser.rs"  errors"#).await,
        Ok(Action::Prompt(
            "Review src/main parser.rs with a focus on errors.\nAll of it: \"src/main parser.rs\"  errors"
                .to_owned()
        ))
    );
    assert_eq!(
        run("/review").await,
        Ok(Action::Prompt(
            "Review  with a focus on .\nAll of it: ".to_owned()
        ))
    );
    // Only `$ARGUMENTS`: the text as typed, an apostrophe is no quote.
    assert_eq!(
        run("/frontend:rap don't stop").await,
        Ok(Action::Prompt("Rap about don't stop".to_owned()))
    );
    assert_eq!(
        run("/pdf report.pdf").await,
        Ok(Action::Prompt("Use pdftotext on report.pdf".to_owned()))
    );
    // A text that reads no arguments gets them after it.
    assert_eq!(
        run("/explain src/lib.rs").await,
        Ok(Action::Prompt(
            "Explain this code.\n\nARGUMENTS: src/lib.rs".to_owned()
        ))
    );
    assert_eq!(
        run("/explain").await,
        Ok(Action::Prompt("Explain this code.".to_owned()))
    );
}

#[tokio::test]
async fn shell_commands_in_a_command_are_run() {
    assert_eq!(
        run("/greet 'the team'").await,
        Ok(Action::Prompt(
            "The shell says: hi, to \"the team\".".to_owned()
        ))
    );
    let error = run("/fails").await.unwrap_err();
    assert_eq!(
        error.message,
        "`/fails` could not be expanded: the command `echo partial; echo 'no such branch' >&2; exit 4` failed: it exited with 4: no such branch"
    );
}

#[tokio::test]
async fn the_shell_of_a_project_is_in_its_configured_sandbox() {
    let (_dir, project) = fixture();
    let shell = Shell::for_project(&project).await.unwrap();
    assert!(!shell.is_sandboxed(), "no sandbox configured");
    write(
        &project.root,
        ".atomic/config.kdl",
        "sandbox { network \"example.com\"; }\n",
    );
    match Shell::for_project(&project).await {
        Ok(shell) => assert!(shell.is_sandboxed()),
        // No Landlock here: an error, never commands run unconfined.
        Err(error) => assert!(error.contains("cannot confine"), "{error}"),
    }
}
