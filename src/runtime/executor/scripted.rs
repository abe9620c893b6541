//! [`ScriptedExecutor`]: the interpreter's effects answered from a script, for tests that
//! must be exact. Agent calls are answered by node id and commands by program, each from
//! its own queue in order; a script step can return, fail, or hang (never finish, as a
//! call in flight when the process is killed). Every effect asked for is recorded in order
//! ([`Call`]), timers run on a [`ManualClock`], files the run keeps its work in stay in
//! memory, and jitter is a fixed draw, so what a test sees depends on the script alone.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::Notify;

use super::manual_clock::ManualClock;
use super::{Clock, CommandError, CommandOutput, CommandSpec, Executor, LineSink};
use crate::providers::{AgentReply, AgentRequest, EventSink, ProviderError, ProviderFuture};
use crate::runtime::RunContext;
use crate::store::Timestamp;

/// What one scripted effect does.
#[derive(Debug)]
pub(crate) enum Scripted<T, E> {
    /// It finishes with this.
    Returns(T),
    /// It fails with this.
    Fails(E),
    /// It never finishes: the test drops the run, as a crash would, once
    /// [`ScriptedExecutor::hung`] says the call is in flight.
    Hangs,
}

/// One effect the interpreter asked for, in the order asked.
#[derive(Clone, Debug)]
pub(crate) enum Call {
    /// An agent call, with the request as the provider would get it (boxed: a request
    /// is several times the size of the other calls).
    Agent(Box<AgentRequest>),
    /// A command, fully rendered.
    Command(CommandSpec),
    /// A timer, with its duration.
    Timer(Duration),
}

/// The executor tests drive; see the module docs.
#[derive(Debug)]
pub(crate) struct ScriptedExecutor {
    clock: Arc<ManualClock>,
    agents: Mutex<HashMap<String, VecDeque<Scripted<AgentReply, ProviderError>>>>,
    commands: Mutex<HashMap<String, VecDeque<Scripted<CommandOutput, CommandError>>>>,
    calls: Mutex<Vec<Call>>,
    files: Mutex<HashMap<PathBuf, String>>,
    /// Holds a permit for each scripted hang reached and not yet waited for.
    hung: Notify,
}

/// The draw [`Executor::random_unit`] always gives: jitter scales a back-off by `0.5 +
/// draw`, so with this draw a jittered back-off is exactly the policy's nominal delay.
const JITTER_DRAW: f64 = 0.5;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ScriptedExecutor {
    /// An executor with an empty script on `clock`.
    pub(crate) fn new(clock: Arc<ManualClock>) -> Self {
        Self {
            clock,
            agents: Mutex::default(),
            commands: Mutex::default(),
            calls: Mutex::default(),
            files: Mutex::default(),
            hung: Notify::new(),
        }
    }

    /// Queues what the next unanswered call of the agent `node` does.
    pub(crate) fn agent(&self, node: &str, step: Scripted<AgentReply, ProviderError>) -> &Self {
        lock(&self.agents)
            .entry(node.to_owned())
            .or_default()
            .push_back(step);
        self
    }

    /// Queues a reply of `text` for the agent `node`.
    pub(crate) fn reply(&self, node: &str, text: &str) -> &Self {
        self.agent(
            node,
            Scripted::Returns(AgentReply {
                text: text.to_owned(),
                ..AgentReply::default()
            }),
        )
    }

    /// Queues what the next unanswered run of the program `program` (`argv[0]`) does.
    pub(crate) fn command(
        &self,
        program: &str,
        step: Scripted<CommandOutput, CommandError>,
    ) -> &Self {
        lock(&self.commands)
            .entry(program.to_owned())
            .or_default()
            .push_back(step);
        self
    }

    /// Queues an exit of `program` with `code` and `stdout`.
    pub(crate) fn exits(&self, program: &str, code: i32, stdout: &str) -> &Self {
        self.command(
            program,
            Scripted::Returns(CommandOutput {
                stdout: stdout.to_owned(),
                stderr: String::new(),
                code: Some(code),
            }),
        )
    }

    /// Every effect asked for so far, in order.
    pub(crate) fn calls(&self) -> Vec<Call> {
        lock(&self.calls).clone()
    }

    /// The agent requests made so far, in order.
    pub(crate) fn agent_calls(&self) -> Vec<AgentRequest> {
        self.calls()
            .into_iter()
            .filter_map(|call| match call {
                Call::Agent(request) => Some(*request),
                _ => None,
            })
            .collect()
    }

    /// The node ids of the agent calls and the programs of the commands run so far, in
    /// order: the shape most tests assert on.
    pub(crate) fn trace(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .filter_map(|call| match call {
                Call::Agent(request) => Some(request.call.node_id),
                Call::Command(spec) => spec.argv.first().cloned(),
                Call::Timer(_) => None,
            })
            .collect()
    }

    /// The durations of the timers started so far, in order.
    pub(crate) fn timers(&self) -> Vec<Duration> {
        self.calls()
            .into_iter()
            .filter_map(|call| match call {
                Call::Timer(duration) => Some(duration),
                _ => None,
            })
            .collect()
    }

    /// Resolves once a call scripted to hang is in flight (each hang is waited for once).
    pub(crate) async fn hung(&self) {
        self.hung.notified().await;
    }

    /// A hanging call: in flight forever, announced to [`hung`](Self::hung).
    fn hang<T: Send + 'static>(&self) -> BoxFuture<'static, T> {
        self.hung.notify_one();
        std::future::pending().boxed()
    }
}

impl Executor for ScriptedExecutor {
    fn call_agent<'a>(
        &'a self,
        _ctx: &'a RunContext,
        _provider: &'a str,
        request: &'a AgentRequest,
        _events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        lock(&self.calls).push(Call::Agent(Box::new(request.clone())));
        let step = lock(&self.agents)
            .get_mut(&request.call.node_id)
            .and_then(VecDeque::pop_front);
        match step {
            Some(Scripted::Returns(reply)) => Box::pin(std::future::ready(Ok(reply))),
            Some(Scripted::Fails(error)) => Box::pin(std::future::ready(Err(error))),
            Some(Scripted::Hangs) => self.hang(),
            // A test that did not script a call is wrong, not the interpreter.
            None => panic!(
                "the script has no reply for call {} of agent `{}`",
                request.call.index, request.call.node_id
            ),
        }
    }

    fn can_compact(&self, _ctx: &RunContext, _provider: &str) -> bool {
        false
    }

    fn run_command<'a>(
        &'a self,
        command: &'a CommandSpec,
        _lines: Option<&'a LineSink<'a>>,
    ) -> BoxFuture<'a, Result<CommandOutput, CommandError>> {
        lock(&self.calls).push(Call::Command(command.clone()));
        let program = command.argv.first().cloned().unwrap_or_default();
        let step = lock(&self.commands)
            .get_mut(&program)
            .and_then(VecDeque::pop_front);
        match step {
            Some(Scripted::Returns(output)) => std::future::ready(Ok(output)).boxed(),
            Some(Scripted::Fails(error)) => std::future::ready(Err(error)).boxed(),
            Some(Scripted::Hangs) => self.hang(),
            None => panic!("the script has no run of `{program}`: {:?}", command.argv),
        }
    }

    fn timer(&self, duration: Duration) -> BoxFuture<'static, ()> {
        lock(&self.calls).push(Call::Timer(duration));
        self.clock.timer(duration)
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    fn read_text<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>> {
        let text = lock(&self.files)
            .get(path)
            .cloned()
            .ok_or_else(|| format!("no file `{}`", path.display()));
        std::future::ready(text).boxed()
    }

    fn write_text<'a>(&'a self, path: &'a Path, text: String) -> BoxFuture<'a, Result<(), String>> {
        lock(&self.files).insert(path.to_path_buf(), text);
        std::future::ready(Ok(())).boxed()
    }

    fn random_unit(&self) -> f64 {
        JITTER_DRAW
    }
}
