//! The web view's routes: two pages, their JSON, a run's server-sent events, a step's
//! diff, three actions.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Json, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use serde::Deserialize;

use super::access::{self, Access};
use super::summary::{RunRow, RunSummary};
use super::{assets, graph};
use crate::cli::ui::{Watch, actions};
use crate::store::{RunId, StoreError};
use crate::view::RunPhase;
use crate::workspace::snapshot::Snapshots;

/// How often a run's stream looks at the store.
const POLL: Duration = Duration::from_millis(200);

/// The most runs the list shows.
const LIST_LIMIT: usize = 100;

/// The most of a step's diff the page is sent, in bytes (the rest is left out, saying so).
const PATCH_LIMIT: usize = 4 << 20;

/// What every handler shares.
#[derive(Clone)]
struct App {
    watch: Watch,
    access: Access,
    /// The project's root, where the runs' snapshots of their files are.
    root: Arc<PathBuf>,
}

/// The router.
pub(super) fn router(watch: Watch, access: Access) -> Router {
    let root = Arc::new(watch.actions().project);
    let app = App {
        watch,
        access: access.clone(),
        root,
    };
    Router::new()
        .route("/", get(runs_page))
        .route("/runs/{id}", get(run_page))
        .route("/assets/{file}", get(asset))
        .route("/api/runs", get(runs_json))
        .route("/api/runs/{id}", get(run_json))
        .route("/api/runs/{id}/graph.svg", get(run_graph))
        .route("/api/runs/{id}/steps/{key}", get(step_json))
        .route("/api/runs/{id}/files/{key}", get(step_patch))
        .route("/api/runs/{id}/stream", get(run_stream))
        .route("/api/runs/{id}/answer", post(answer))
        .route("/api/runs/{id}/cancel", post(cancel))
        .route("/api/runs/{id}/resume", post(resume))
        .with_state(app)
        .layer(axum::middleware::from_fn_with_state(access, access::guard))
}

/// A failure as a response: a missing run is 404, anything else 500, said in plain text.
struct Failure(StatusCode, String);

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound(_) | StoreError::Ambiguous { .. } => {
                Self(StatusCode::NOT_FOUND, error.to_string())
            }
            other => Self(StatusCode::INTERNAL_SERVER_ERROR, other.to_string()),
        }
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        (self.0, self.1).into_response()
    }
}

async fn runs_page(State(app): State<App>) -> Html<String> {
    Html(assets::runs_page(app.access.token()))
}

async fn run_page(State(app): State<App>, Path(id): Path<String>) -> Result<Html<String>, Failure> {
    let run = app.watch.resolve(Some(&id)).await?;
    Ok(Html(assets::run_page(app.access.token(), run.as_str())))
}

async fn asset(Path(file): Path<String>) -> Response {
    match assets::file(&file) {
        Some((kind, body)) => ([(header::CONTENT_TYPE, kind)], body).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn runs_json(State(app): State<App>) -> Result<Json<Vec<RunRow>>, Failure> {
    let runs = app.watch.runs(LIST_LIMIT).await?;
    let mut rows = Vec::with_capacity(runs.len());
    for run in &runs {
        let cost = app.watch.cost(run).await;
        rows.push(RunRow::of(run, cost));
    }
    Ok(Json(rows))
}

async fn run_id(app: &App, id: &str) -> Result<RunId, Failure> {
    Ok(app.watch.resolve(Some(id)).await?)
}

async fn run_json(State(app): State<App>, Path(id): Path<String>) -> Result<Response, Failure> {
    let run = run_id(&app, &id).await?;
    let json = app
        .watch
        .read(&run, |view, _| serde_json::to_string(&RunSummary::of(view)))
        .await?;
    json_response(json)
}

async fn run_graph(State(app): State<App>, Path(id): Path<String>) -> Result<Response, Failure> {
    let run = run_id(&app, &id).await?;
    let outline = app.watch.graph(&run).await?;
    Ok((
        [(header::CONTENT_TYPE, "image/svg+xml")],
        graph::svg(&outline),
    )
        .into_response())
}

async fn step_json(
    State(app): State<App>,
    Path((id, key)): Path<(String, String)>,
) -> Result<Response, Failure> {
    let run = run_id(&app, &id).await?;
    let json = app
        .watch
        .read(&run, |view, _| {
            let node = view.nodes.iter().find(|node| node.key == key)?;
            Some(serde_json::to_string(node))
        })
        .await?;
    match json {
        Some(json) => json_response(json),
        None => Err(Failure(
            StatusCode::NOT_FOUND,
            format!("run `{run}` has no step `{key}`"),
        )),
    }
}

/// The unified diff of what step `key` last changed, as plain text (never to be read as
/// a page: a file's content is the step's, not ours); 404 for an unknown run or step, or a
/// step with no files recorded.
async fn step_patch(
    State(app): State<App>,
    Path((id, key)): Path<(String, String)>,
) -> Result<Response, Failure> {
    let run = run_id(&app, &id).await?;
    let files = app
        .watch
        .read(&run, |view, _| {
            let node = view.nodes.iter().find(|node| node.key == key)?;
            Some(node.files.clone())
        })
        .await?;
    let files = match files {
        Some(Some(files)) => files,
        Some(None) => {
            return Err(Failure(
                StatusCode::NOT_FOUND,
                format!("step `{key}` of run `{run}` has no recorded files"),
            ));
        }
        None => {
            return Err(Failure(
                StatusCode::NOT_FOUND,
                format!("run `{run}` has no step `{key}`"),
            ));
        }
    };
    let root = Arc::clone(&app.root);
    let patch = tokio::task::spawn_blocking(move || {
        Snapshots::open(&root)
            .and_then(|snapshots| snapshots.patch(&files.before, &files.after, false))
    })
    .await
    .map_err(|error| Failure(StatusCode::INTERNAL_SERVER_ERROR, error.to_string()))?
    .map_err(|error| {
        Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot read the snapshots of run `{run}`: {error}"),
        )
    })?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        limited(patch, PATCH_LIMIT),
    )
        .into_response())
}

/// `patch` cut after its last whole line within `limit` bytes, saying how much was left out.
fn limited(mut patch: String, limit: usize) -> String {
    if patch.len() <= limit {
        return patch;
    }
    let mut end = limit;
    while !patch.is_char_boundary(end) {
        end -= 1;
    }
    let end = patch[..end].rfind('\n').map_or(0, |at| at + 1);
    let left = patch.len() - end;
    patch.truncate(end);
    patch.push_str(&format!("… {left} more bytes of the diff are not shown\n"));
    patch
}

/// JSON text as a response.
fn json_response(json: serde_json::Result<String>) -> Result<Response, Failure> {
    match json {
        Ok(json) => Ok(([(header::CONTENT_TYPE, "application/json")], json).into_response()),
        Err(error) => Err(Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            error.to_string(),
        )),
    }
}

/// The run's summary whenever it changes; the stream ends once the run has stopped
/// (finished, failed, cancelled or paused) and that was sent.
async fn run_stream(
    State(app): State<App>,
    Path(id): Path<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Failure> {
    let run = run_id(&app, &id).await?;
    // The summary is made again only when the view changed (its version moved on).
    let stream = futures_util::stream::unfold(
        (app, run, None::<u64>, false),
        |(app, run, sent, done)| async move {
            if done {
                return None;
            }
            let mut interval = tokio::time::interval(POLL);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                let read = app
                    .watch
                    .read(&run, |view, version| {
                        if sent == Some(version) {
                            return None;
                        }
                        let json = serde_json::to_string(&RunSummary::of(view)).ok()?;
                        Some((json, version, view.phase != RunPhase::Running))
                    })
                    .await;
                if let Ok(Some((json, version, stopped))) = read {
                    let event = Event::default().event("view").data(json);
                    return Some((Ok(event), (app, run, Some(version), stopped)));
                }
            }
        },
    );
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// An answer from the page's form.
#[derive(Debug, Deserialize)]
struct AnswerForm {
    /// The wait (its node id) when the run waits at several.
    wait: Option<String>,
    /// The answer.
    answer: String,
}

async fn answer(
    State(app): State<App>,
    Path(id): Path<String>,
    Json(form): Json<AnswerForm>,
) -> Result<Response, Failure> {
    let run = run_id(&app, &id).await?;
    let actions = app.watch.actions();
    act(move || {
        let wait = form.wait.as_deref().filter(|wait| !wait.is_empty());
        actions.answer(run.as_str(), wait, &form.answer)
    })
    .await
}

async fn cancel(State(app): State<App>, Path(id): Path<String>) -> Result<Response, Failure> {
    let run = run_id(&app, &id).await?;
    let actions = app.watch.actions();
    act(move || actions.cancel(run.as_str())).await
}

async fn resume(State(app): State<App>, Path(id): Path<String>) -> Result<Response, Failure> {
    let run = run_id(&app, &id).await?;
    let actions = app.watch.actions();
    act(move || actions.resume(run.as_str())).await
}

/// Runs an action off the async threads (it waits a moment to see a refusal): 202 when it
/// goes on, 422 with the command's own words when it refused.
async fn act(
    action: impl FnOnce() -> Result<(), actions::ActionError> + Send + 'static,
) -> Result<Response, Failure> {
    match tokio::task::spawn_blocking(action).await {
        Ok(Ok(())) => Ok(StatusCode::ACCEPTED.into_response()),
        Ok(Err(actions::ActionError::Refused(said))) => {
            Err(Failure(StatusCode::UNPROCESSABLE_ENTITY, said))
        }
        Ok(Err(error)) => Err(Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            error.to_string(),
        )),
        Err(error) => Err(Failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            error.to_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_diff_is_cut_after_a_whole_line() {
        let patch = "+one\n+two\n+thrée\n".to_owned();
        assert_eq!(limited(patch.clone(), 100), patch);
        assert_eq!(
            limited(patch.clone(), 12),
            "+one\n+two\n… 8 more bytes of the diff are not shown\n"
        );
        // Never inside a character.
        assert!(limited(patch, 15).starts_with("+one\n+two\n…"));
    }
}
