//! The [`Store`] contract as tests, run against every store (`memory.rs`, `sqlite/`).

use serde_json::{Value, json};

use super::{
    Change, NewRun, PendingWait, RunAmend, RunFilter, RunId, RunStatus, State, StateDelta,
    StepCommit, StepStatus, Store, StoreError, Timestamp,
};

/// A run of workflow `flow` with state `{"n": 0, "log": [], "big": <text>}`.
pub(crate) fn new_run(id: &str, big: &str) -> NewRun {
    let state = json!({"n": 0, "log": [], "big": big});
    NewRun {
        id: RunId::new(id),
        workflow: "flow".to_owned(),
        path: "flow.kdl".to_owned(),
        hash: "h".to_owned(),
        inputs: json!({"target": "src"}),
        state: state.as_object().expect("an object").clone(),
    }
}

/// Step `seq`: `n` set to `seq`, `seq` appended to `log`, one event.
pub(crate) fn step(seq: u64) -> StepCommit {
    let mut delta = StateDelta::new();
    delta.record("n", Change::Set(json!(seq)), &json!(seq));
    delta.record(
        "log",
        Change::Append {
            items: vec![json!(seq)],
            keep_last: None,
        },
        &Value::Null,
    );
    let node = format!("node-{}", seq % 2);
    let mut outputs = State::new();
    outputs.insert(node.clone(), json!({"text": format!("reply {seq}")}));
    StepCommit {
        seq,
        scope: None,
        node_id: node,
        outputs,
        started_at: Timestamp(1000 + seq),
        finished_at: Timestamp(1001 + seq),
        status: StepStatus::Completed,
        attempts: 1,
        delta,
        cursor: json!({"next": seq + 1}).into(),
        events: vec![json!({"type": "step-finished", "seq": seq}).into()],
        error: None,
        run_status: RunStatus::Running,
        wait: None,
    }
}

/// The state after `steps` steps of [`step`].
pub(crate) fn expected_state(steps: u64, big: &str) -> State {
    let log: Vec<u64> = (1..=steps).collect();
    json!({"n": steps, "log": log, "big": big})
        .as_object()
        .expect("an object")
        .clone()
}

/// A reader following a run with [`Store::log_after`] while it is written — steps and loose
/// events in between — reads exactly [`Store::run_detail`]'s events, each once, in order.
pub(crate) async fn following_the_log_reads_each_event_once(store: &dyn Store) {
    let id = RunId::new("01ffffffffffff");
    store.create_run(new_run(id.as_str(), "x")).await.unwrap();
    let note = |text: String| vec![json!({"type": "note", "text": text})];
    let mut position = super::LogPosition::default();
    let mut read = Vec::new();
    let mut timed = Vec::new();
    let follow =
        async |position: &mut super::LogPosition, read: &mut Vec<_>, timed: &mut Vec<_>| {
            let tail = store.log_after(&id, *position).await.unwrap();
            *position = tail.position;
            read.extend(tail.events);
            timed.extend(tail.steps);
            tail.run
        };
    follow(&mut position, &mut read, &mut timed).await;
    assert!(read.is_empty(), "a new run has logged nothing");
    for seq in 1..=9 {
        if seq % 3 == 0 {
            store
                .log_events(&id, note(format!("before {seq}")))
                .await
                .unwrap();
        }
        store.commit_step(&id, step(seq)).await.unwrap();
        if seq % 2 == 0 {
            let run = follow(&mut position, &mut read, &mut timed).await;
            assert_eq!(run.steps, seq, "the record comes with the events");
        }
    }
    store
        .log_events(&id, note("after".to_owned()))
        .await
        .unwrap();
    follow(&mut position, &mut read, &mut timed).await;
    let nothing_new = store.log_after(&id, position).await.unwrap();
    assert!(nothing_new.events.is_empty());
    assert_eq!(nothing_new.position, position);
    let detail = store.run_detail(&id).await.unwrap();
    assert_eq!(read, detail.events);
    assert_eq!(position.events, detail.events.len() as u64);
    let times: Vec<_> = detail
        .steps
        .iter()
        .map(|step| {
            (
                step.seq,
                step.node_id.clone(),
                step.started_at,
                step.finished_at,
            )
        })
        .collect();
    let followed: Vec<_> = timed
        .into_iter()
        .map(|step| (step.seq, step.node_id, step.started_at, step.finished_at))
        .collect();
    assert_eq!(followed, times, "each step's times once");
}

pub(crate) async fn round_trip(store: &dyn Store) {
    let id = RunId::new("01aaaaaaaaaaaa");
    store.create_run(new_run(id.as_str(), "x")).await.unwrap();
    let log = |text: &str| vec![json!({"type": "note", "text": text})];
    store.log_events(&id, log("before")).await.unwrap();
    for seq in 1..=5 {
        store.commit_step(&id, step(seq)).await.unwrap();
        if seq == 2 {
            store.log_events(&id, log("between")).await.unwrap();
        }
    }
    store.log_events(&id, log("after")).await.unwrap();
    let checkpoint = store.checkpoint(&id).await.unwrap();
    assert_eq!(checkpoint.seq, 5);
    assert_eq!(checkpoint.state, expected_state(5, "x"));
    assert_eq!(checkpoint.cursor, Some(json!({"next": 6})));
    assert_eq!(
        checkpoint.outputs,
        *json!({"node-0": {"text": "reply 4"}, "node-1": {"text": "reply 5"}})
            .as_object()
            .expect("an object"),
        "the latest output of each node"
    );
    assert_eq!(checkpoint.run.status, RunStatus::Running);
    assert_eq!(checkpoint.run.inputs, json!({"target": "src"}));
    for upto in 0..=5 {
        assert_eq!(
            store.load_state(&id, upto).await.unwrap(),
            expected_state(upto, "x")
        );
    }
    let detail = store.run_detail(&id).await.unwrap();
    assert_eq!(detail.steps.len(), 5);
    assert_eq!(detail.steps[2], {
        let s = step(3);
        super::StepRecord {
            seq: 3,
            scope: None,
            node_id: s.node_id,
            started_at: s.started_at,
            finished_at: s.finished_at,
            status: s.status,
            attempts: 1,
            delta: s.delta,
            outputs: s.outputs,
            cursor: s.cursor.into_value(),
            error: None,
        }
    });
    // Events keep the order they were committed in, whether with a step or between steps.
    let seqs: Vec<(u64, u64)> = detail.events.iter().map(|e| (e.seq, e.step)).collect();
    assert_eq!(
        seqs,
        [
            (1, 0),
            (2, 1),
            (3, 2),
            (4, 0),
            (5, 3),
            (6, 4),
            (7, 5),
            (8, 0)
        ]
    );
    assert_eq!(detail.events[0].event, log("before")[0]);
    assert_eq!(detail.events[3].event, log("between")[0]);
    assert_eq!(
        detail.events[6].event,
        json!({"type": "step-finished", "seq": 5})
    );
    assert_eq!(detail.events[7].event, log("after")[0]);
}

pub(crate) async fn out_of_order_steps_conflict(store: &dyn Store) {
    let id = RunId::new("01bbbbbbbbbbbb");
    store.create_run(new_run(id.as_str(), "")).await.unwrap();
    store.commit_step(&id, step(1)).await.unwrap();
    let error = store.commit_step(&id, step(1)).await.unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::Conflict {
                expected: 2,
                got: 1,
                ..
            }
        ),
        "{error}"
    );
    let error = store.commit_step(&id, step(3)).await.unwrap_err();
    assert!(matches!(
        error,
        StoreError::Conflict {
            expected: 2,
            got: 3,
            ..
        }
    ));
    assert_eq!(
        store.checkpoint(&id).await.unwrap().seq,
        1,
        "nothing half-written"
    );
    let missing = RunId::new("nope");
    assert!(matches!(
        store.commit_step(&missing, step(1)).await,
        Err(StoreError::NotFound(_))
    ));
}

/// Many steps over a state with a large constant field: reconstruction at every point
/// equals replaying all deltas, whichever keyframe it starts from.
pub(crate) async fn keyframes_and_deltas_reconstruct(store: &dyn Store, steps: u64) {
    let id = RunId::new("01cccccccccccc");
    let big = "b".repeat(2000);
    store.create_run(new_run(id.as_str(), &big)).await.unwrap();
    for seq in 1..=steps {
        store.commit_step(&id, step(seq)).await.unwrap();
    }
    for upto in [0, 1, steps / 3, steps / 2, steps - 1, steps, steps + 10] {
        let state = store.load_state(&id, upto).await.unwrap();
        assert_eq!(state, expected_state(upto.min(steps), &big), "upto {upto}");
    }
    assert_eq!(
        store.checkpoint(&id).await.unwrap().state,
        expected_state(steps, &big)
    );
}

pub(crate) async fn pause_fail_and_list(store: &dyn Store) {
    let paused = RunId::new("01dddddddddddd");
    let failed = RunId::new("01eeeeeeeeeeee");
    store
        .create_run(new_run(paused.as_str(), ""))
        .await
        .unwrap();
    store
        .create_run(new_run(failed.as_str(), ""))
        .await
        .unwrap();
    let wait = PendingWait {
        node_id: "approve".to_owned(),
        header: Some("Release".to_owned()),
        prompt: "Ship it?".to_owned(),
        answer: "yes-no".to_owned(),
        choices: Vec::new(),
        schema: None,
        auto_answer: Some("no".to_owned()),
        auto_answer_at: Some(Timestamp(1_800_000_000_000)),
        scope: None,
        permission: None,
    };
    let mut pause = step(1);
    pause.status = StepStatus::Waiting;
    pause.run_status = RunStatus::Paused;
    pause.wait = Some(wait.clone());
    store.commit_step(&paused, pause).await.unwrap();
    assert_eq!(store.run(&paused).await.unwrap().waits, [wait]);

    let mut fail = step(1);
    fail.status = StepStatus::Failed;
    fail.error = Some("`review` failed: boom".to_owned());
    fail.run_status = RunStatus::Failed;
    store.commit_step(&failed, fail).await.unwrap();
    let record = store.run(&failed).await.unwrap();
    assert_eq!(
        (record.status, record.error.as_deref()),
        (RunStatus::Failed, Some("`review` failed: boom"))
    );

    let all = store.list_runs(&RunFilter::default()).await.unwrap();
    let ids: Vec<&str> = all.iter().map(|run| run.id.as_str()).collect();
    assert_eq!(ids, ["01eeeeeeeeeeee", "01dddddddddddd"], "newest first");
    assert_eq!(all[0].steps, 1);
    let filter = RunFilter {
        status: Some(RunStatus::Paused),
        ..RunFilter::default()
    };
    assert_eq!(store.list_runs(&filter).await.unwrap().len(), 1);
    let limited = RunFilter {
        limit: Some(1),
        ..RunFilter::default()
    };
    assert_eq!(store.list_runs(&limited).await.unwrap()[0].id, failed);

    // Answering the wait: the next commit clears it.
    let mut answer = step(2);
    answer.node_id = "approve".to_owned();
    store.commit_step(&paused, answer).await.unwrap();
    assert!(store.run(&paused).await.unwrap().waits.is_empty());
    store
        .set_status(&paused, RunStatus::Completed, None)
        .await
        .unwrap();
    assert_eq!(
        store.run(&paused).await.unwrap().status,
        RunStatus::Completed
    );

    store
        .log_events(&paused, vec![json!({"type": "run-finished"})])
        .await
        .unwrap();
    let events = store.run_detail(&paused).await.unwrap().events;
    assert_eq!((events.len(), events[2].step, events[2].seq), (3, 0, 3));
}

pub(crate) async fn resolves_prefixes_and_deletes(store: &dyn Store) {
    store
        .create_run(new_run("01ffaaaaaaaaaa", ""))
        .await
        .unwrap();
    store
        .create_run(new_run("01ffbbbbbbbbbb", ""))
        .await
        .unwrap();
    assert_eq!(
        store.resolve("01ffa").await.unwrap().as_str(),
        "01ffaaaaaaaaaa"
    );
    assert_eq!(
        store.resolve("01ffbbbbbbbbbb").await.unwrap().as_str(),
        "01ffbbbbbbbbbb"
    );
    assert!(matches!(
        store.resolve("01ff").await,
        Err(StoreError::Ambiguous { .. })
    ));
    assert!(matches!(
        store.resolve("zz").await,
        Err(StoreError::NotFound(_))
    ));
    let id = RunId::new("01ffaaaaaaaaaa");
    store.commit_step(&id, step(1)).await.unwrap();
    store.delete_run(&id).await.unwrap();
    assert!(matches!(store.run(&id).await, Err(StoreError::NotFound(_))));
    assert_eq!(
        store.resolve("01ff").await.unwrap().as_str(),
        "01ffbbbbbbbbbb"
    );
}

/// Progress of calls in flight: saved, replaced, read back by key, cleared, gone with
/// the run; a run that does not exist cannot take any.
pub(crate) async fn progress_is_kept_by_key(store: &dyn Store) {
    let id = RunId::new("progress-run");
    store
        .create_run(new_run("progress-run", ""))
        .await
        .expect("create");
    assert_eq!(
        store.load_progress(&id, "agent#0").await.expect("load"),
        None
    );
    store
        .save_progress(&id, "agent#0", json!({"messages": [1]}))
        .await
        .expect("save");
    store
        .save_progress(&id, "agent#0", json!({"messages": [1, 2]}))
        .await
        .expect("replace");
    store
        .save_progress(&id, "other#3", json!({"messages": []}))
        .await
        .expect("save another");
    assert_eq!(
        store.load_progress(&id, "agent#0").await.expect("load"),
        Some(json!({"messages": [1, 2]}))
    );
    store.clear_progress(&id, "agent#0").await.expect("clear");
    assert_eq!(
        store.load_progress(&id, "agent#0").await.expect("load"),
        None
    );
    assert_eq!(
        store.load_progress(&id, "other#3").await.expect("load"),
        Some(json!({"messages": []}))
    );
    let missing = RunId::new("no-such-run");
    assert!(matches!(
        store.save_progress(&missing, "k", json!(1)).await,
        Err(StoreError::NotFound(_))
    ));
    store.delete_run(&id).await.expect("delete");
    store
        .create_run(new_run("progress-run", ""))
        .await
        .expect("create again");
    assert_eq!(
        store.load_progress(&id, "other#3").await.expect("load"),
        None,
        "deleting a run deletes its progress"
    );
}

/// Steps inside blocks: kept in the history, their deltas out of the run's state, returned
/// as open until the next unscoped step; a run paused at waits in several blocks lists them
/// all.
pub(crate) async fn scoped_steps_stay_open_until_the_block_ends(store: &dyn Store) {
    let id = RunId::new("01ffffffffffff");
    store.create_run(new_run(id.as_str(), "")).await.unwrap();
    store.commit_step(&id, step(1)).await.unwrap();
    for (seq, scope) in [(2, "fan@2#0"), (3, "fan@2#1"), (4, "fan@2#0")] {
        let mut inner = step(seq);
        inner.scope = Some(scope.to_owned());
        inner.cursor = json!({"next": seq, "in": scope}).into();
        store.commit_step(&id, inner).await.unwrap();
    }
    let checkpoint = store.checkpoint(&id).await.unwrap();
    assert_eq!(checkpoint.seq, 4);
    assert_eq!(
        checkpoint.state,
        expected_state(1, ""),
        "scoped deltas are the block's"
    );
    assert_eq!(
        checkpoint.outputs,
        *json!({"node-1": {"text": "reply 1"}})
            .as_object()
            .expect("an object"),
        "and so are their outputs"
    );
    assert_eq!(
        checkpoint.cursor,
        Some(json!({"next": 2})),
        "the last unscoped cursor"
    );
    let open: Vec<(u64, &str)> = checkpoint
        .open
        .iter()
        .map(|step| (step.seq, step.scope.as_str()))
        .collect();
    assert_eq!(open, [(2, "fan@2#0"), (3, "fan@2#1"), (4, "fan@2#0")]);
    assert_eq!(
        checkpoint.open[1].cursor,
        json!({"next": 3, "in": "fan@2#1"})
    );
    assert_eq!(
        store.load_state(&id, 4).await.unwrap(),
        expected_state(1, "")
    );

    let wait = |node: &str, scope: &str| PendingWait {
        node_id: node.to_owned(),
        header: None,
        prompt: format!("{node}?"),
        answer: "string".to_owned(),
        choices: Vec::new(),
        schema: None,
        auto_answer: None,
        auto_answer_at: None,
        scope: Some(scope.to_owned()),
        permission: None,
    };
    let waits = vec![wait("a", "fan@2#0"), wait("b", "fan@2#1")];
    store.pause(&id, waits.clone()).await.unwrap();
    let record = store.run(&id).await.unwrap();
    assert_eq!(
        (record.status, record.waits.clone()),
        (RunStatus::Paused, waits)
    );
    assert_eq!(record.waits[1].key(), "fan@2#1/b");
    let checkpoint = store.checkpoint(&id).await.unwrap();
    assert_eq!(checkpoint.open.len(), 3, "pausing keeps the open steps");

    // The block ends: its step closes the open ones and changes the run's state.
    store.commit_step(&id, step(5)).await.unwrap();
    let checkpoint = store.checkpoint(&id).await.unwrap();
    assert!(checkpoint.open.is_empty());
    assert!(checkpoint.run.waits.is_empty());
    assert_eq!(checkpoint.state["n"], json!(5));
    let detail = store.run_detail(&id).await.unwrap();
    let scopes: Vec<Option<&str>> = detail.steps.iter().map(|s| s.scope.as_deref()).collect();
    assert_eq!(
        scopes,
        [
            None,
            Some("fan@2#0"),
            Some("fan@2#1"),
            Some("fan@2#0"),
            None
        ]
    );
}

/// [`Store::amend_run`]: a run's inputs and workflow file change as asked and stay so when
/// read back; what is not asked for stays; an unknown run is `NotFound`.
pub(crate) async fn amends_a_run(store: &dyn Store) {
    let run = RunId::new("01amendamendam");
    store.create_run(new_run(run.as_str(), "x")).await.unwrap();
    let before = store.run(&run).await.unwrap();
    store
        .amend_run(
            &run,
            RunAmend {
                inputs: Some(json!({"target": "docs"})),
                workflow: None,
            },
        )
        .await
        .unwrap();
    let amended = store.run(&run).await.unwrap();
    assert_eq!(amended.inputs, json!({"target": "docs"}));
    assert_eq!(
        (amended.path.as_str(), amended.hash.as_str()),
        (before.path.as_str(), before.hash.as_str())
    );
    store
        .amend_run(
            &run,
            RunAmend {
                inputs: None,
                workflow: Some(("edited.kdl".to_owned(), "h2".to_owned())),
            },
        )
        .await
        .unwrap();
    let amended = store.run(&run).await.unwrap();
    assert_eq!(amended.inputs, json!({"target": "docs"}));
    assert_eq!(
        (amended.path.as_str(), amended.hash.as_str()),
        ("edited.kdl", "h2")
    );
    let missing = store
        .amend_run(&RunId::new("01nosuchrunnnn"), RunAmend::default())
        .await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(_))),
        "{missing:?}"
    );
}

/// [`Store::copy_run`]: a copy up to a step has that step's state, cursor, outputs, steps
/// and events (a keyframe after it left behind), the status and origin given, and goes on
/// from the next step; the source is untouched; a copy of everything is the source under
/// another id. Run with keyframes every 2 steps, so one lies beyond the copied step.
pub(crate) async fn copies_a_run_up_to_a_step(store: &dyn Store) {
    let from = RunId::new("01copyfromfrom");
    store.create_run(new_run(from.as_str(), "x")).await.unwrap();
    let note = |text: &str| vec![json!({"type": "note", "text": text})];
    store.log_events(&from, note("before")).await.unwrap();
    for seq in 1..=5 {
        store.commit_step(&from, step(seq)).await.unwrap();
        if seq == 2 {
            store.log_events(&from, note("between")).await.unwrap();
        }
        if seq == 4 {
            store.log_events(&from, note("later")).await.unwrap();
        }
    }
    let source = store.run_detail(&from).await.unwrap();

    let to = RunId::new("01copytotototo");
    let origin = format!("{from}@3");
    store
        .copy_run(&from, &to, Some(3), RunStatus::Paused, Some(origin.clone()))
        .await
        .unwrap();
    let checkpoint = store.checkpoint(&to).await.unwrap();
    assert_eq!(checkpoint.seq, 3);
    assert_eq!(checkpoint.state, expected_state(3, "x"));
    assert_eq!(
        checkpoint.cursor,
        Some(json!({"next": 4})),
        "step 3's cursor"
    );
    assert_eq!(
        checkpoint.outputs,
        *json!({"node-0": {"text": "reply 2"}, "node-1": {"text": "reply 3"}})
            .as_object()
            .expect("an object"),
        "the outputs as of step 3"
    );
    let record = &checkpoint.run;
    assert_eq!(
        (record.status, record.origin.as_deref(), record.steps),
        (RunStatus::Paused, Some(origin.as_str()), 3)
    );
    assert_eq!(
        (record.error.as_ref(), record.waits.len()),
        (None, 0),
        "no error, no waits"
    );
    assert_eq!(
        (&record.workflow, &record.inputs, record.created_at),
        (
            &source.run.workflow,
            &source.run.inputs,
            source.run.created_at
        )
    );
    for upto in 0..=3 {
        assert_eq!(
            store.load_state(&to, upto).await.unwrap(),
            expected_state(upto, "x"),
            "the copy's state after step {upto}"
        );
    }
    let detail = store.run_detail(&to).await.unwrap();
    let seqs: Vec<u64> = detail.steps.iter().map(|step| step.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(detail.steps[..], source.steps[..3]);
    let events: Vec<(u64, u64)> = detail.events.iter().map(|e| (e.seq, e.step)).collect();
    assert_eq!(
        events,
        [(1, 0), (2, 1), (3, 2), (4, 0), (5, 3)],
        "only the events up to step 3"
    );
    assert_eq!(detail.events[3].event, note("between")[0]);
    assert_eq!(
        store.run_detail(&from).await.unwrap(),
        source,
        "the source is unchanged"
    );

    // The copy goes on from step 4, and only from there.
    assert!(matches!(
        store.commit_step(&to, step(5)).await,
        Err(StoreError::Conflict {
            expected: 4,
            got: 5,
            ..
        })
    ));
    let mut fourth = step(4);
    fourth.run_status = RunStatus::Completed;
    store.commit_step(&to, fourth).await.unwrap();
    assert_eq!(
        store.load_state(&to, 4).await.unwrap(),
        expected_state(4, "x")
    );
    assert_eq!(store.run(&to).await.unwrap().steps, 4);
    assert_eq!(
        store.run_detail(&from).await.unwrap(),
        source,
        "the source is still unchanged"
    );

    // Not onto a run that exists, not from one that does not.
    let error = store
        .copy_run(&from, &to, None, RunStatus::Paused, None)
        .await
        .unwrap_err();
    assert!(
        matches!(error, StoreError::AlreadyExists(ref id) if id == to.as_str()),
        "{error}"
    );
    let missing = RunId::new("01copymissing0");
    let error = store
        .copy_run(
            &missing,
            &RunId::new("01copyelsewhere"),
            None,
            RunStatus::Paused,
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::NotFound(_)), "{error}");

    // Everything: the source's detail under another id, status and origin.
    let all = RunId::new("01copyallallall");
    store
        .copy_run(&from, &all, None, RunStatus::Completed, None)
        .await
        .unwrap();
    let mut copied = store.run_detail(&all).await.unwrap();
    assert_eq!(
        (
            copied.run.id.as_str(),
            copied.run.status,
            &copied.run.origin
        ),
        (all.as_str(), RunStatus::Completed, &None)
    );
    copied.run.id = from.clone();
    copied.run.status = source.run.status;
    copied.run.updated_at = source.run.updated_at;
    assert_eq!(copied, source);
    let checkpoint = store.checkpoint(&all).await.unwrap();
    assert_eq!(
        (checkpoint.seq, checkpoint.state),
        (5, expected_state(5, "x"))
    );
    store.commit_step(&all, step(6)).await.unwrap();
    assert_eq!(
        store.load_state(&all, 6).await.unwrap(),
        expected_state(6, "x")
    );
}
