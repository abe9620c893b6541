//! Reading a command's output while waiting for it to exit, without waiting on processes
//! it left behind.

use std::future::Future;
use std::time::Duration;

/// How long a command's output is still read once it has exited: what it wrote is in the
/// pipe already, and a process it left running (`server &`) may hold the pipe open for
/// ever — that is not waited for.
pub const OUTPUT_DRAIN: Duration = Duration::from_millis(500);

/// Runs `reading` (the command's output read to its end) and `waiting` (feeding its input,
/// then its exit) together, and returns what `waiting` gave. Once the command has exited,
/// its output is read for at most [`OUTPUT_DRAIN`] more; what was read stays with the
/// reader. The group the command started, a left-behind process included, is ended by its
/// `Child`.
pub async fn read_until_exit<T>(
    reading: impl Future<Output = ()>,
    waiting: impl Future<Output = T>,
) -> T {
    let (mut reading, mut waiting) = (std::pin::pin!(reading), std::pin::pin!(waiting));
    let mut read = false;
    let exited = loop {
        tokio::select! {
            () = &mut reading, if !read => read = true,
            exited = &mut waiting => break exited,
        }
    };
    if !read {
        let _ = tokio::time::timeout(OUTPUT_DRAIN, &mut reading).await;
    }
    exited
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn output_held_open_after_the_exit_is_not_waited_for_and_what_came_is_kept() {
        let mut seen = Vec::new();
        let exited = read_until_exit(
            async {
                seen.push("written before the exit");
                // A process left behind holds the pipe: the end never comes.
                std::future::pending::<()>().await;
            },
            async { 7 },
        )
        .await;
        assert_eq!(exited, 7);
        assert_eq!(seen, ["written before the exit"]);
    }

    #[tokio::test]
    async fn output_ending_first_is_read_whole_and_the_exit_still_awaited() {
        let mut read = false;
        let exited = read_until_exit(async { read = true }, async {
            tokio::task::yield_now().await;
            "exited"
        })
        .await;
        assert!(read);
        assert_eq!(exited, "exited");
    }
}
