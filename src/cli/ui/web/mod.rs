//! `atomic ui --web`: a local web page over the project's runs (with `--temporal`, the runs
//! on a Temporal server), served by the binary itself (axum, HTTP/1): the runs with their
//! status, duration and cost; a run's graph with live step states, each step's output, the
//! state and the events, kept current over server-sent events; a form to answer a wait
//! and buttons to cancel and resume.
//!
//! Served on 127.0.0.1 unless `--bind` says otherwise. Every request must name this host
//! (no DNS rebinding), every action carries the server's token in a header (no other site
//! can post to it), and off loopback every page needs the token too (printed at start).

mod access;
mod assets;
mod graph;
mod routes;
mod summary;

use std::net::SocketAddr;

use crate::cli::Exit;
use crate::cli::args::UiArgs;

use super::Watch;
use access::Access;

/// Serves the web view until Ctrl-C.
pub(super) fn run(runtime: &tokio::runtime::Runtime, watch: &Watch, args: &UiArgs) -> Exit {
    runtime.block_on(serve(watch.clone(), args))
}

async fn serve(watch: Watch, args: &UiArgs) -> Exit {
    let address = SocketAddr::new(args.bind, args.port);
    let listener = match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!(
                "error: cannot serve on {address}: {error}; choose another `--port` (0 picks a free one)"
            );
            return Exit::Fatal;
        }
    };
    let local = match listener.local_addr() {
        Ok(local) => local,
        Err(error) => {
            eprintln!("error: cannot serve on {address}: {error}");
            return Exit::Fatal;
        }
    };
    let access = Access::new(local);
    let url = access.start_url();
    println!("atomic ui: {url}");
    if let Some(place) = watch.elsewhere() {
        eprintln!("atomic ui: runs on {place}");
    }
    if !local.ip().is_loopback() {
        eprintln!(
            "warning: serving on {} — anyone who can reach it and has the token in the link above can answer and cancel this project's runs",
            local.ip()
        );
    }
    let app = routes::router(watch, access);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
    {
        Ok(()) => Exit::Ok,
        Err(error) => {
            eprintln!("error: the web view stopped: {error}");
            Exit::Fatal
        }
    }
}
