//! The conversation driven end to end: against the `anthropic` adapter talking to a fake
//! Messages API on loopback, and against a scripted provider that stops at permission
//! requests and questions like Claude Code under `permission="ask"`.

mod fake_api;
mod scripted;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::backend::Backends;
use super::{ChatError, ChatHandle, Command, Conversation, Parts, Setup, list_sessions};
use crate::cli::chat::transcript::{Entry, Pending, Transcript};
use crate::cli::project::Project;
use crate::ir::PermissionMode;
use crate::providers::{
    Answered, Environment, PermissionAnswer, PermissionAsk, Provider, ProviderContext, Redactor,
};
use crate::source::{Span, Spanned};
use fake_api::{FakeApi, Reply};
use scripted::{Scripted, Step};

/// A secret of the environment: never saved.
const SECRET: &str = "sk-test-0123456789abcdef";

/// Builds the `anthropic` adapter against the fake server, or hands out a scripted one.
enum TestBackends {
    Api(String),
    Scripted(Arc<Scripted>),
}

impl Backends for TestBackends {
    fn build(&self, adapter: &str) -> Result<Arc<dyn Provider>, ChatError> {
        match self {
            Self::Api(url) => {
                let mut decl = super::backend::declaration(adapter);
                decl.base_url = Some(Spanned::new(url.clone(), Span::default()));
                decl.api_key_env = Some(Spanned::new("TEST_KEY".to_owned(), Span::default()));
                let env = Environment::default().with("TEST_KEY", SECRET);
                let dir = std::env::temp_dir();
                crate::providers::build(&decl, &ProviderContext::new(&dir, &env)).map_err(|error| {
                    ChatError::Provider {
                        adapter: adapter.to_owned(),
                        message: error.to_string(),
                    }
                })
            }
            Self::Scripted(provider) => Ok(Arc::clone(provider) as Arc<dyn Provider>),
        }
    }
}

fn project(root: &Path) -> Project {
    Project {
        root: root.to_path_buf(),
        home: None,
        adapter: None,
        model: None,
    }
}

fn open(
    root: &Path,
    backends: TestBackends,
    adapter: &str,
    resume: Option<String>,
) -> Result<ChatHandle, ChatError> {
    let setup = Setup {
        project: project(root),
        adapter: Some(adapter.to_owned()),
        model: (adapter == "anthropic").then(|| "claude-sonnet-4-5".to_owned()),
        resume,
    };
    let parts = Parts {
        backends: Arc::new(backends),
        redactor: Redactor::new().with_secret(SECRET),
        sandbox: None,
        configured_adapter: None,
        configured_model: None,
    };
    Conversation::start(setup, parts, &tokio::runtime::Handle::current())
}

/// Waits (at most 10 s) until the transcript satisfies `done`.
async fn until(handle: &ChatHandle, what: &str, done: impl Fn(&Transcript) -> bool) -> Transcript {
    let mut changed = handle.changed();
    let shared = handle.transcript();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        {
            let transcript = shared.lock().unwrap();
            if done(&transcript) {
                return transcript.clone();
            }
        }
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let woke = tokio::time::timeout(left, changed.changed()).await;
        assert!(
            matches!(woke, Ok(Ok(()))),
            "timed out waiting for {what}: {:#?}",
            shared.lock().unwrap().entries
        );
    }
}

fn replied(text: &str) -> impl Fn(&Transcript) -> bool + '_ {
    move |transcript: &Transcript| {
        !transcript.busy
            && transcript.entries.iter().any(
                |entry| matches!(entry, Entry::Assistant { text: said, done: true, .. } if said == text),
            )
    }
}

fn prompt(text: &str) -> Command {
    Command::Prompt {
        shown: text.to_owned(),
        told: text.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_continue_the_conversation_sum_usage_and_resume_after_saving() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeApi::start(vec![
        Reply::Text("Hello there", 10, 5),
        Reply::Text("Second answer", 20, 7),
        Reply::Text("Third answer", 30, 9),
    ])
    .await;
    let handle = open(
        dir.path(),
        TestBackends::Api(fake.url.clone()),
        "anthropic",
        None,
    )
    .unwrap();
    handle.send(prompt(&format!("first, with {SECRET}")));
    until(&handle, "the first reply", replied("Hello there")).await;
    handle.send(prompt("second"));
    let transcript = until(&handle, "the second reply", replied("Second answer")).await;
    assert_eq!(transcript.status.usage.input_tokens, 30);
    assert_eq!(transcript.status.usage.output_tokens, 12);
    assert!(transcript.status.cost_usd.is_some_and(|cost| cost > 0.0));
    assert_eq!(transcript.status.adapter, "anthropic");

    let bodies = fake.bodies();
    assert_eq!(bodies.len(), 2);
    let second = bodies[1].to_string();
    assert!(second.contains("Hello there"), "{second}");
    assert!(second.contains("first, with"), "{second}");
    assert!(!bodies[0].to_string().contains("Hello there"));
    let id = handle.session_id().to_owned();
    handle.close().await.unwrap();

    let sessions = list_sessions(&project(dir.path())).await.unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].id, id);
    assert_eq!(sessions[0].turns, 2);
    assert_eq!(sessions[0].adapter, "anthropic");
    assert!(
        sessions[0].title.starts_with("first, with"),
        "{}",
        sessions[0].title
    );
    let stored = std::fs::read(crate::store::project_db_path(dir.path())).unwrap();
    let wal = std::fs::read(dir.path().join(".atomic/atomic.db-wal")).unwrap_or_default();
    for bytes in [&stored, &wal] {
        assert!(
            !bytes
                .windows(SECRET.len())
                .any(|window| window == SECRET.as_bytes()),
            "the secret reached the store"
        );
    }

    let resumed = open(
        dir.path(),
        TestBackends::Api(fake.url.clone()),
        "anthropic",
        Some(id[..8].to_owned()),
    )
    .unwrap();
    assert_eq!(resumed.session_id(), id);
    let shown = until(&resumed, "the resumed transcript", replied("Second answer")).await;
    assert_eq!(shown.status.usage.input_tokens, 30, "usage carried");
    resumed.send(prompt("third"));
    until(&resumed, "the third reply", replied("Third answer")).await;
    let third = fake.bodies()[2].to_string();
    assert!(
        third.contains("Hello there") && third.contains("Second answer"),
        "{third}"
    );
    resumed.close().await.unwrap();
    assert_eq!(
        list_sessions(&project(dir.path())).await.unwrap()[0].turns,
        3
    );

    let unknown = open(
        dir.path(),
        TestBackends::Api(fake.url.clone()),
        "anthropic",
        Some("zzz".into()),
    )
    .unwrap_err();
    let message = unknown.to_string();
    assert!(
        message.contains("no saved chat session starts with `zzz`"),
        "{message}"
    );
    assert!(message.contains(&id), "lists the recent ones: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_drops_the_call_and_the_next_prompt_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeApi::start(vec![
        Reply::Hang("Thinking about it"),
        Reply::Text("Here", 3, 2),
    ])
    .await;
    let handle = open(
        dir.path(),
        TestBackends::Api(fake.url.clone()),
        "anthropic",
        None,
    )
    .unwrap();
    handle.send(prompt("slow one"));
    until(&handle, "the reply to start", |transcript| {
        transcript.busy
            && transcript.entries.iter().any(
                |entry| matches!(entry, Entry::Assistant { text, .. } if text == "Thinking about it"),
            )
    })
    .await;
    handle.send(Command::Interrupt);
    let transcript = until(&handle, "the interruption", |transcript| {
        !transcript.busy
            && transcript.entries.iter().any(
                |entry| matches!(entry, Entry::Notice { text, .. } if text.starts_with("Interrupted")),
            )
    })
    .await;
    assert!(transcript.entries.iter().any(
        |entry| matches!(entry, Entry::Assistant { text, done: true, .. } if text == "Thinking about it")
    ));
    handle.send(prompt("again"));
    until(&handle, "the reply after", replied("Here")).await;
    assert_eq!(fake.bodies().len(), 2);
    handle.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_is_asked_inline_and_allowed_for_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let bash = PermissionAsk {
        tool: "Bash".to_owned(),
        input: json!({"command": "ls"}),
    };
    let scripted = Scripted::new(vec![
        Step::Pause(bash.clone(), "s-1"),
        Step::Reply("Listed.", "s-1"),
        Step::Reply("Again.", "s-1"),
    ]);
    let handle = open(
        dir.path(),
        TestBackends::Scripted(Arc::clone(&scripted)),
        "claude-code",
        None,
    )
    .unwrap();
    handle.send(prompt("list the files"));
    let transcript = until(&handle, "the permission request", |transcript| {
        matches!(&transcript.pending, Some(Pending::Permission(_)))
    })
    .await;
    assert!(!transcript.busy);
    assert!(
        transcript
            .entries
            .iter()
            .any(|entry| matches!(entry, Entry::Permission { ask, answer: None } if *ask == bash))
    );
    handle.send(Command::Permission(PermissionAnswer::AllowRun));
    let transcript = until(&handle, "the reply after the answer", replied("Listed.")).await;
    assert!(transcript.pending.is_none());
    assert!(transcript.entries.iter().any(|entry| matches!(
        entry,
        Entry::Permission {
            answer: Some(PermissionAnswer::AllowRun),
            ..
        }
    )));
    handle.send(Command::Compact);
    handle.send(prompt("once more"));
    until(&handle, "the third reply", replied("Again.")).await;
    handle.close().await.unwrap();

    let requests = scripted.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].grants.permission, Some(PermissionMode::Ask));
    assert_eq!(requests[0].session.resume, None);
    let continued = &requests[1];
    assert_eq!(continued.session.resume.as_deref(), Some("s-1"));
    assert_eq!(
        continued.grants.approvals.answered,
        Some(Answered {
            ask: bash.clone(),
            answer: PermissionAnswer::AllowRun,
        })
    );
    assert_eq!(continued.grants.approvals.tools, ["Bash"]);
    assert!(
        continued
            .prompt
            .text
            .contains("approved your request to use `Bash`")
            && continued
                .prompt
                .text
                .contains("for the rest of this session"),
        "{}",
        continued.prompt.text
    );
    let later = &requests[2];
    assert_eq!(
        later.grants.approvals.tools,
        ["Bash"],
        "allowed for the session"
    );
    assert_eq!(later.grants.approvals.answered, None);
    assert_eq!(later.session.resume.as_deref(), Some("s-1"));
    assert_eq!(
        later.prompt.text, "once more",
        "a kept session is not told again"
    );
    assert!(later.session.compact, "/compact applies to the next call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_shown_and_its_answers_continue_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let asked = PermissionAsk {
        tool: "AskUserQuestion".to_owned(),
        input: json!({"questions": [{"question": "Which library?", "header": "Library",
            "multiSelect": false, "options": [
                {"label": "dayjs", "description": "Small"},
                {"label": "luxon", "description": "Time zones"}]}]}),
    };
    let scripted = Scripted::new(vec![
        Step::Pause(asked.clone(), "s-9"),
        Step::Reply("Using dayjs.", "s-9"),
    ]);
    let handle = open(
        dir.path(),
        TestBackends::Scripted(Arc::clone(&scripted)),
        "claude-code",
        None,
    )
    .unwrap();
    handle.send(prompt("format dates"));
    let transcript = until(&handle, "the question", |transcript| {
        matches!(&transcript.pending, Some(Pending::Question(_)))
    })
    .await;
    let Some(Pending::Question(question)) = &transcript.pending else {
        unreachable!()
    };
    assert_eq!(question.items[0].header.as_deref(), Some("Library"));
    assert_eq!(
        question.items[0].options[1].description.as_deref(),
        Some("Time zones")
    );
    handle.send(Command::Answer(vec!["dayjs".to_owned()]));
    let transcript = until(&handle, "the reply", replied("Using dayjs.")).await;
    assert!(
        transcript
            .entries
            .iter()
            .any(|entry| matches!(entry, Entry::Question { answers, .. } if answers == &["dayjs"]))
    );
    handle.close().await.unwrap();

    let continued = &scripted.requests()[1];
    assert_eq!(continued.session.resume.as_deref(), Some("s-9"));
    assert!(
        continued.prompt.text.contains("\"Which library?\": dayjs"),
        "{}",
        continued.prompt.text
    );
    let answered = continued.grants.approvals.answered.as_ref().unwrap();
    assert_eq!(
        answered.ask.input["answers"],
        json!({"Which library?": "dayjs"})
    );
    assert!(
        continued.grants.approvals.tools.is_empty(),
        "a question grants nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_adapter_lists_the_ones_that_chat() {
    let dir = tempfile::tempdir().unwrap();
    let error = open(dir.path(), TestBackends::Api(String::new()), "clod", None).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("no adapter `clod`") && message.contains("`claude-code`"),
        "{message}"
    );
    let error = open(dir.path(), TestBackends::Api(String::new()), "replay", None).unwrap_err();
    assert!(
        error.to_string().contains("cannot hold a conversation"),
        "{error}"
    );
}
