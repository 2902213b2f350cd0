#![allow(clippy::unwrap_used)]

use super::*;

use std::convert::Infallible;

use tower::ServiceExt;

fn fenced(
    fence: &Fence,
) -> impl Service<http::Request<()>, Response = &'static str, Error = BoxError> {
    fence
        .layer()
        .layer(tower::service_fn(|_: http::Request<()>| async {
            Ok::<_, Infallible>("sent")
        }))
}

fn request(method: http::Method) -> http::Request<()> {
    http::Request::builder()
        .method(method)
        .uri("/api/v1/namespaces/default/configmaps")
        .body(())
        .unwrap()
}

#[tokio::test]
async fn a_closed_fence_refuses_writes_and_passes_reads() {
    let fence = Fence::default();
    for method in [
        http::Method::POST,
        http::Method::PUT,
        http::Method::PATCH,
        http::Method::DELETE,
    ] {
        let refused = fenced(&fence)
            .oneshot(request(method.clone()))
            .await
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!(
                "refused to send {method} /api/v1/namespaces/default/configmaps: this process does not hold the leader lease"
            )
        );
    }
    for method in [http::Method::GET, http::Method::HEAD, http::Method::OPTIONS] {
        assert_eq!(
            fenced(&fence).oneshot(request(method)).await.unwrap(),
            "sent"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_open_fence_passes_writes_until_its_instant() {
    let fence = Fence::default();
    fence.open_until(Instant::now() + Duration::from_secs(10));
    assert_eq!(
        fenced(&fence)
            .oneshot(request(http::Method::POST))
            .await
            .unwrap(),
        "sent"
    );
    tokio::time::advance(Duration::from_secs(10)).await;
    assert!(!fence.allows_writes());
    assert!(
        fenced(&fence)
            .oneshot(request(http::Method::POST))
            .await
            .is_err()
    );
    fence.open_until(Instant::now() + Duration::from_secs(1));
    assert!(fence.allows_writes());
    fence.close();
    assert!(!fence.allows_writes());
}

#[test]
fn timings_that_could_split_are_refused() {
    let mut election = LeaderElection::new("karmada-system", "lease", "me");
    assert_eq!(election.validate(), Ok(()));
    election.renew_deadline = election.lease_duration;
    assert!(matches!(
        election.validate(),
        Err(TimingError::RenewDeadline { .. })
    ));
    election.renew_deadline = Duration::from_secs(10);
    election.retry_period = Duration::from_secs(10);
    assert!(matches!(
        election.validate(),
        Err(TimingError::RetryPeriod { .. })
    ));
    election.retry_period = Duration::ZERO;
    assert!(matches!(
        election.validate(),
        Err(TimingError::RetryPeriod { .. })
    ));
}
