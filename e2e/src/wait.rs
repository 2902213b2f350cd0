//! Waiting on conditions with a deadline, reporting the last observed state when it passes.

use std::future::Future;
use std::time::Duration;

/// The deadline of one wait: `E2E_TIMEOUT` seconds, default 30.
pub fn patience() -> Duration {
    std::env::var("E2E_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(Duration::from_secs(30), Duration::from_secs)
}

/// Polls `probe` until it returns `Ok`, for at most [`patience`]. `probe` returns `Err(state)` describing what
/// it saw while the condition does not hold yet; the last such description is in the timeout error.
///
/// # Errors
/// When the deadline passes.
pub async fn wait_for<T, F, Fut>(what: &str, probe: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    wait_within(what, patience(), probe).await
}

/// [`wait_for`] with an explicit deadline.
///
/// # Errors
/// When the deadline passes.
pub async fn wait_within<T, F, Fut>(
    what: &str,
    timeout: Duration,
    mut probe: F,
) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let started = tokio::time::Instant::now();
    let deadline = started + timeout;
    let mut delay = Duration::from_millis(10);
    loop {
        match probe().await {
            Ok(value) => {
                // Shown with the test's output (failures, --nocapture): where a slow scenario spends its time.
                eprintln!(
                    "e2e: {} ms waiting for {what}",
                    started.elapsed().as_millis()
                );
                return Ok(value);
            }
            Err(state) if tokio::time::Instant::now() >= deadline => {
                anyhow::bail!(
                    "timed out after {}s waiting for {what}; last seen: {state}",
                    timeout.as_secs()
                )
            }
            Err(_) => {}
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_millis(200));
    }
}
