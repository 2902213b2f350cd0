use super::*;

fn queue() -> SchedulingQueue<&'static str> {
    SchedulingQueue::new(QueueTiming::default())
}

/// Takes the next key (which must be ready now) and marks it done.
async fn take(queue: &SchedulingQueue<&'static str>) -> &'static str {
    let key = tokio::time::timeout(Duration::ZERO, queue.next())
        .await
        .expect("a key is ready")
        .expect("queue open");
    queue.done(&key);
    key
}

#[tokio::test(start_paused = true)]
async fn higher_priority_first_and_fifo_among_equals() {
    let queue = queue();
    queue.add("low-1", 0);
    queue.add("high-1", 10);
    queue.add("low-2", 0);
    queue.add("mid", 5);
    queue.add("high-2", 10);
    // Re-adding with the same priority keeps the place.
    queue.add("low-1", 0);
    assert_eq!(queue.len(), 5);
    let mut order = Vec::new();
    for _ in 0..5 {
        order.push(take(&queue).await);
    }
    assert_eq!(order, ["high-1", "high-2", "mid", "low-1", "low-2"]);
    assert!(queue.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_queued_key_keeps_its_place_and_priority() {
    let queue = queue();
    queue.add("a", 0);
    queue.add("b", 0);
    queue.add("b", 3);
    assert_eq!(take(&queue).await, "a");
    assert_eq!(take(&queue).await, "b");
    // Added again once taken, the new priority counts.
    queue.add("a", 0);
    queue.add("b", 3);
    assert_eq!(take(&queue).await, "b");
}

#[tokio::test(start_paused = true)]
async fn without_priorities_the_queue_is_fifo_and_every_failure_backs_off() {
    let queue = SchedulingQueue::new(QueueTiming::rate_limited());
    queue.add("low", 0);
    queue.add("high", 10);
    assert_eq!(take(&queue).await, "low");
    let key = queue.next().await.expect("queue open");
    assert_eq!(key, "high");
    // No unschedulable queue: an Unschedulable result backs off 5 ms, doubling.
    queue.add_unschedulable(key, 10);
    queue.done(&key);
    let start = Instant::now();
    assert_eq!(queue.next().await, Some("high"));
    assert_eq!(start.elapsed(), Duration::from_millis(5));
    assert_eq!(queue.add_backoff("high", 10), Duration::from_millis(10));
    queue.done(&"high");
    let timing = QueueTiming::rate_limited();
    assert_eq!(timing.backoff(u32::MAX), Duration::from_secs(1000));
}

#[test]
fn backoff_doubles_from_one_second_and_caps_at_ten() {
    let timing = QueueTiming::default();
    let delays: Vec<u64> = (1..=6).map(|n| timing.backoff(n).as_secs()).collect();
    assert_eq!(delays, [1, 2, 4, 8, 10, 10]);
    assert_eq!(timing.backoff(u32::MAX), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn failed_keys_back_off_growing_then_capped_and_forget_resets() {
    let queue = queue();
    queue.add("a", 0);
    let mut waits = Vec::new();
    for _ in 0..5 {
        let key = queue.next().await.unwrap();
        let delay = queue.add_backoff(key, 0);
        queue.done(&key);
        assert!(queue.is_empty(), "a backing-off key is not active");
        let start = Instant::now();
        assert_eq!(queue.next().await.unwrap(), "a");
        let waited = start.elapsed();
        assert_eq!(waited, delay);
        waits.push(waited.as_secs());
        queue.done(&"a");
        queue.add("a", 0);
    }
    assert_eq!(waits, [1, 2, 4, 8, 10]);
    let key = queue.next().await.unwrap();
    queue.forget(&key);
    assert_eq!(queue.add_backoff(key, 0), Duration::from_secs(1));
    queue.done(&key);
}

#[tokio::test(start_paused = true)]
async fn an_event_moves_a_backing_off_key_to_the_active_queue_at_once() {
    let queue = queue();
    queue.add("a", 0);
    let key = queue.next().await.unwrap();
    queue.add_backoff(key, 0);
    queue.done(&key);
    queue.add("a", 0);
    assert_eq!(take(&queue).await, "a");
    // Not handed out again when the old backoff would have ended.
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!(
        tokio::time::timeout(Duration::from_secs(30), queue.next())
            .await
            .is_err()
    );
}

#[tokio::test(start_paused = true)]
async fn unschedulable_keys_return_after_five_minutes_or_on_flush() {
    let queue = queue();
    queue.add("u", 7);
    queue.add("other", 0);
    let key = queue.next().await.unwrap();
    assert_eq!(key, "u");
    queue.add_unschedulable(key, 7);
    queue.done(&key);
    assert_eq!(take(&queue).await, "other");
    let start = Instant::now();
    assert_eq!(queue.next().await.unwrap(), "u");
    assert_eq!(start.elapsed(), Duration::from_secs(300));
    queue.add_unschedulable("u", 7);
    queue.done(&"u");

    // A flush (or an event for the key) brings it back before the five minutes.
    tokio::time::advance(Duration::from_secs(10)).await;
    assert!(queue.is_empty());
    queue.flush_unschedulable();
    assert_eq!(take(&queue).await, "u");
}

#[tokio::test(start_paused = true)]
async fn adds_while_processing_rerun_once_after_done() {
    let queue = queue();
    queue.add("a", 0);
    let key = queue.next().await.unwrap();
    queue.add("a", 0);
    queue.add("a", 1);
    assert!(queue.is_empty());
    // The newer event wins over the failure's backoff.
    queue.add_backoff(key, 0);
    queue.done(&key);
    assert_eq!(take(&queue).await, "a");
    assert!(queue.is_empty());
}

#[tokio::test]
async fn close_releases_waiting_workers() {
    let queue = std::sync::Arc::new(queue());
    let waiter = tokio::spawn({
        let queue = queue.clone();
        async move { queue.next().await }
    });
    tokio::task::yield_now().await;
    queue.close();
    assert_eq!(waiter.await.unwrap(), None);
}

#[test]
fn errors_are_classified_as_karmada_handles_them() {
    use kube::core::response::Status;
    let unschedulable = Error::Schedule {
        object: "ResourceBinding default/a".into(),
        reason: flotilla_api::names::conditions::REASON_UNSCHEDULABLE,
        message: "no room".into(),
    };
    assert_eq!(retry_of(&unschedulable), Retry::Unschedulable);
    let scheduler_error = Error::Schedule {
        object: "ResourceBinding default/a".into(),
        reason: "SchedulerError",
        message: "boom".into(),
    };
    assert_eq!(retry_of(&scheduler_error), Retry::Backoff);
    let status: Status = serde_json::from_value(serde_json::json!({
        "status": "Failure",
        "message": "namespace default is being terminated",
        "reason": "Forbidden",
        "code": 403,
        "details": {"causes": [{"reason": "NamespaceTerminating"}]},
    }))
    .unwrap();
    let terminating = Error::kube(
        "patch",
        "ResourceBinding default/a",
        kube::Error::Api(Box::new(status)),
    );
    assert_eq!(retry_of(&terminating), Retry::Drop);
    let conflict = Error::kube(
        "patch",
        "ResourceBinding default/a",
        kube::Error::Api(Box::new(
            Status::failure("conflict", "Conflict").with_code(409),
        )),
    );
    assert_eq!(retry_of(&conflict), Retry::Backoff);
}
