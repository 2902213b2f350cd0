use std::sync::Mutex;

use flotilla_store::{Change, Expect};
use serde_json::json;

use super::*;

#[test]
fn a_key_asked_for_while_it_waits_is_taken_once() {
    let mut q = Queue::new();
    q.push("a");
    q.push("b");
    q.push("a");
    assert_eq!((q.pop(), q.pop(), q.pop()), (Some("a"), Some("b"), None));
}

#[test]
fn an_ask_now_replaces_a_timed_wakeup_and_a_later_wakeup_does_not_delay_an_earlier_one() {
    let mut q = Queue::new();
    let now = Instant::now();
    q.push_at("a", now + Duration::from_secs(5));
    q.push_at("a", now + Duration::from_secs(9));
    assert_eq!(q.next_due(), Some(now + Duration::from_secs(5)));
    q.push_at("a", now + Duration::from_secs(1));
    assert_eq!(q.next_due(), Some(now + Duration::from_secs(1)));
    q.push("a");
    assert_eq!(q.next_due(), None, "the ask now takes the wake-up's place");
    assert_eq!(q.pop(), Some("a"));
    q.push_at("b", now);
    q.promote(now);
    assert_eq!(q.pop(), Some("b"));
}

#[test]
fn failures_back_off_doubling_to_ten_seconds_and_a_success_starts_again() {
    let mut q = Queue::new();
    let delays: Vec<u128> = (0..10).map(|_| q.failed(&"a").as_millis()).collect();
    assert_eq!(
        delays,
        [100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000, 10000]
    );
    q.succeeded(&"a");
    assert_eq!(q.failed(&"a"), BACKOFF_START);
}

#[test]
fn only_refusals_a_retry_cannot_mend_wait_for_a_change() {
    for code in [400, 403, 422] {
        assert!(permanent(&ApiError::new(code, "Invalid", "no")), "{code}");
    }
    for code in [404, 409, 429, 500, 503, 504] {
        assert!(!permanent(&ApiError::new(code, "X", "maybe")), "{code}");
    }
}

/// Records every reconcile of a ConfigMap name and fails each name as often as `fail` says.
struct Probe {
    calls: Arc<Mutex<Vec<String>>>,
    fail: Arc<Mutex<HashMap<String, usize>>>,
}

impl Reconciler for Probe {
    type Key = String;

    fn name(&self) -> &'static str {
        "probe"
    }

    fn watches(&self) -> Watches {
        Watches::Resources(vec![ResKey::new("", "configmaps")])
    }

    fn resync(&mut self, ctx: &Ctx) -> Vec<String> {
        ctx.store
            .list(&ResKey::new("", "configmaps"), None)
            .1
            .iter()
            .filter_map(|o| crate::meta::meta_str(o, "name").map(str::to_string))
            .collect()
    }

    fn observe(&mut self, _ctx: &Ctx, ev: &Event) -> Vec<String> {
        crate::meta::meta_str(&ev.object, "name")
            .map(str::to_string)
            .into_iter()
            .collect()
    }

    async fn reconcile(&self, _ctx: &Arc<Ctx>, key: &String) -> Result<Next, ApiError> {
        self.calls.lock().unwrap().push(key.clone());
        let mut fail = self.fail.lock().unwrap();
        match fail.get_mut(key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                Err(ApiError::internal("injected"))
            }
            _ => Ok(Next::Done),
        }
    }
}

async fn put(ctx: &Ctx, name: &str) {
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}});
    ctx.store
        .commit(
            &ResKey::new("", "configmaps"),
            "default",
            name,
            Expect::Absent,
            Change::Put(obj),
        )
        .await
        .unwrap();
}

async fn wait_for(calls: &Arc<Mutex<Vec<String>>>, what: impl Fn(&[String]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !what(&calls.lock().unwrap()) {
        assert!(
            Instant::now() < deadline,
            "reconciles so far: {:?}",
            calls.lock().unwrap()
        );
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn existing_objects_are_resynced_changes_are_reconciled_and_a_failure_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = Ctx::for_test(dir.path());
    put(&ctx, "before").await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let fail = Arc::new(Mutex::new(HashMap::from([("flaky".to_string(), 2)])));
    let probe = Probe {
        calls: calls.clone(),
        fail,
    };
    let task = tokio::spawn(run(ctx.clone(), probe));
    wait_for(&calls, |c| c.contains(&"before".to_string())).await;
    put(&ctx, "flaky").await;
    wait_for(&calls, |c| c.iter().filter(|k| *k == "flaky").count() == 3).await;
    put(&ctx, "after").await;
    wait_for(&calls, |c| c.contains(&"after".to_string())).await;
    assert_eq!(
        calls
            .lock()
            .unwrap()
            .iter()
            .filter(|k| *k == "flaky")
            .count(),
        3,
        "two failures, one success, nothing more"
    );
    ctx.shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the loop ends at shutdown")
        .unwrap();
}
