//! Helpers shared by the tests that start `flotilla` processes.
#![allow(clippy::unwrap_used, clippy::panic, dead_code)]

use std::path::Path;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// A client for `context` of the kubeconfig at `path`.
pub async fn client(path: &Path, context: &str) -> Client {
    let file = Kubeconfig::read_from(path).unwrap();
    let options = KubeConfigOptions {
        context: Some(context.into()),
        ..KubeConfigOptions::default()
    };
    Client::try_from(
        Config::from_custom_kubeconfig(file, &options)
            .await
            .unwrap(),
    )
    .unwrap()
}

/// Polls `f` until it returns `Some`, failing the test after 30 s (two cores shared with other tests).
pub async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
