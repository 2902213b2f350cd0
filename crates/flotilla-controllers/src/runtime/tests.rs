//! The runtime's guarantees: requests fold per object, an object is reconciled by one task at a time and a
//! request meanwhile runs once afterwards, coalescing windows, the error policy's backoff, graceful
//! shutdown, and the change handlers' view of a watch (including relists).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::informer::{Change, Informer};
use super::{Action, Backoff, Controller, Trigger};
use crate::error::{Error, Result};
use crate::metrics::Metrics;

fn mk_config_map(name: &str, version: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("ns".to_owned()),
            resource_version: Some(version.to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// What the test reconciler saw and what it should answer.
struct Script {
    /// Start times of each object's reconciles.
    runs: Mutex<HashMap<String, Vec<Instant>>>,
    /// Every reconcile's object, in the order they started.
    order: Mutex<Vec<String>>,
    /// Errors to answer with, per object, first to last.
    errors: Mutex<HashMap<String, Vec<Error>>>,
    /// Reconciles of `gate:` objects wait for a permit here.
    gate: Semaphore,
    /// How many reconciles run at this moment.
    running: Mutex<usize>,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            runs: Mutex::default(),
            order: Mutex::default(),
            errors: Mutex::default(),
            gate: Semaphore::new(0),
            running: Mutex::default(),
        }
    }
}

impl Script {
    fn runs(&self, name: &str) -> Vec<Instant> {
        self.runs
            .lock()
            .unwrap()
            .get(name)
            .cloned()
            .unwrap_or_default()
    }

    async fn reconcile(self: Arc<Self>, obj: Arc<ConfigMap>) -> Result<Action> {
        let name = obj.metadata.name.clone().unwrap_or_default();
        self.runs
            .lock()
            .unwrap()
            .entry(name.clone())
            .or_default()
            .push(Instant::now());
        self.order.lock().unwrap().push(name.clone());
        *self.running.lock().unwrap() += 1;
        if name.starts_with("gate") {
            self.gate.acquire().await.unwrap().forget();
        }
        *self.running.lock().unwrap() -= 1;
        let error = self.errors.lock().unwrap().get_mut(&name).and_then(|e| {
            if e.is_empty() {
                None
            } else {
                Some(e.remove(0))
            }
        });
        error.map_or(Ok(Action::await_change()), Err)
    }
}

const BACKOFF: Backoff = Backoff {
    base: Duration::from_secs(1),
    max: Duration::from_secs(4),
};

/// A store holding `names` (synced), a controller over it with `workers`, and the running controller.
fn start(
    names: &[&str],
    workers: usize,
    script: &Arc<Script>,
) -> (
    Trigger<ConfigMap>,
    CancellationToken,
    tokio::task::JoinHandle<()>,
) {
    start_with(names, workers, script, |controller| controller)
}

/// As [`start`], with the controller adjusted by `configure` before it runs.
fn start_with(
    names: &[&str],
    workers: usize,
    script: &Arc<Script>,
    configure: impl FnOnce(Controller<ConfigMap>) -> Controller<ConfigMap>,
) -> (
    Trigger<ConfigMap>,
    CancellationToken,
    tokio::task::JoinHandle<()>,
) {
    let mut writer: Writer<ConfigMap> = Writer::default();
    writer.apply_watcher_event(&Event::Init);
    for name in names {
        writer.apply_watcher_event(&Event::InitApply(mk_config_map(name, "1")));
    }
    writer.apply_watcher_event(&Event::InitDone);
    let metrics = Metrics::new().unwrap();
    let controller = configure(Controller::with_store(
        "test",
        writer.as_reader(),
        (),
        workers,
        BACKOFF,
        metrics,
    ));
    let trigger = controller.trigger();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn({
        let (shutdown, script) = (shutdown.clone(), script.clone());
        async move {
            // The writer must outlive the controller: the store is ready only while it lives.
            let _writer = writer;
            controller
                .run(shutdown, script, |script, obj| script.reconcile(obj))
                .await;
        }
    });
    (trigger, shutdown, task)
}

/// Waits (in paused time: lets every task run) until `check` holds, failing after a minute of test time.
async fn until(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn key(trigger: &Trigger<ConfigMap>, name: &str) -> kube::runtime::reflector::ObjectRef<ConfigMap> {
    trigger.object_ref("ns", name)
}

#[test]
fn backoff_doubles_and_caps() {
    let backoff = Backoff {
        base: Duration::from_millis(100),
        max: Duration::from_secs(1),
    };
    assert_eq!(backoff.delay(1), Duration::from_millis(100));
    assert_eq!(backoff.delay(2), Duration::from_millis(200));
    assert_eq!(backoff.delay(4), Duration::from_millis(800));
    assert_eq!(backoff.delay(5), Duration::from_secs(1));
    assert_eq!(backoff.delay(100), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn requests_fold_and_a_request_while_running_runs_once_afterwards() {
    let script = Arc::new(Script::default());
    let (trigger, shutdown, task) = start(&["gate-a", "b"], 5, &script);
    trigger.reconcile_ref(key(&trigger, "gate-a"));
    trigger.reconcile_ref(key(&trigger, "b"));
    until("both to start", || {
        script.runs("gate-a").len() == 1 && script.runs("b").len() == 1
    })
    .await;
    // Requested three times while it runs: not run concurrently, and once more after it ends.
    for _ in 0..3 {
        trigger.reconcile_ref(key(&trigger, "gate-a"));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(script.runs("gate-a").len(), 1);
    assert_eq!(
        *script.running.lock().unwrap(),
        1,
        "b finished while gate-a still runs"
    );
    script.gate.add_permits(1);
    until("the rerun", || script.runs("gate-a").len() == 2).await;
    script.gate.add_permits(1);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(script.runs("gate-a").len(), 2);
    assert_eq!(script.runs("b").len(), 1);
    shutdown.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn reconciles_take_their_turn_in_the_order_they_were_requested() {
    let script = Arc::new(Script::default());
    let names = ["gate", "x3", "x1", "x5", "x2", "x4"];
    let (trigger, shutdown, task) = start(&names, 1, &script);
    for name in names {
        trigger.reconcile_ref(key(&trigger, name));
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    until("the gate to run", || script.runs("gate").len() == 1).await;
    script.gate.add_permits(1);
    until("every run", || {
        names.iter().all(|n| script.runs(n).len() == 1)
    })
    .await;
    assert_eq!(
        script.order.lock().unwrap().as_slice(),
        names,
        "first come, first served"
    );
    shutdown.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_partition_whose_reconciles_hang_does_not_hold_the_others() {
    let script = Arc::new(Script::default());
    // Partitioned by the part of the name before `-`: `gate-1` and `gate-2` hang in partition `gate`.
    let names = ["gate-1", "gate-2", "member2-a", "member2-b", "member3-a"];
    let (trigger, shutdown, task) = start_with(&names, 1, &script, |controller| {
        controller.per_partition(|key| key.name.split('-').next().unwrap_or_default().to_owned())
    });
    for name in names {
        trigger.reconcile_ref(key(&trigger, name));
    }
    until("the other partitions' reconciles", || {
        names[2..].iter().all(|n| script.runs(n).len() == 1)
    })
    .await;
    assert_eq!(
        script.runs("gate-1").len(),
        1,
        "the first of the hung partition runs"
    );
    assert!(
        script.runs("gate-2").is_empty(),
        "one worker per partition: gate-2 waits for gate-1"
    );
    script.gate.add_permits(2);
    until("the hung partition's second reconcile", || {
        script.runs("gate-2").len() == 1
    })
    .await;
    shutdown.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn with_one_pool_a_hanging_reconcile_holds_the_rest() {
    // The contrast that makes partitions worth having: one worker, shared by all.
    let script = Arc::new(Script::default());
    let names = ["gate-1", "member2-a"];
    let (trigger, shutdown, task) = start(&names, 1, &script);
    for name in names {
        trigger.reconcile_ref(key(&trigger, name));
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    until("the gate to run", || script.runs("gate-1").len() == 1).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(script.runs("member2-a").is_empty());
    script.gate.add_permits(1);
    until("the rest", || script.runs("member2-a").len() == 1).await;
    shutdown.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn coalesced_requests_fold_into_one_run_at_the_end_of_the_first_window() {
    let script = Arc::new(Script::default());
    let (trigger, shutdown, task) = start(&["a"], 5, &script);
    let window = Duration::from_millis(300);
    let first = Instant::now();
    trigger.reconcile_within(key(&trigger, "a"), window);
    tokio::time::sleep(Duration::from_millis(100)).await;
    trigger.reconcile_within(key(&trigger, "a"), window);
    until("the run", || script.runs("a").len() == 1).await;
    let ran = script.runs("a")[0];
    assert!(ran >= first + window, "not before the window ends");
    assert!(
        ran < first + window + Duration::from_millis(100),
        "the later request does not extend it"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(script.runs("a").len(), 1, "the burst gave one run");
    // A request without a window while one waits runs at once.
    trigger.reconcile_within(key(&trigger, "a"), Duration::from_secs(10));
    trigger.reconcile_ref(key(&trigger, "a"));
    until("the immediate run", || script.runs("a").len() == 2).await;
    assert!(script.runs("a")[1] < ran + Duration::from_secs(3));
    shutdown.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn transient_failures_back_off_per_object_and_permanent_ones_wait_for_a_change() {
    let script = Arc::new(Script::default());
    script.errors.lock().unwrap().insert(
        "flaky".to_owned(),
        (0..4)
            .map(|i| Error::waiting(format!("attempt {i}")))
            .collect(),
    );
    script.errors.lock().unwrap().insert(
        "broken".to_owned(),
        vec![Error::invalid("ConfigMap ns/broken", "data: bad")],
    );
    let (trigger, shutdown, task) = start(&["flaky", "broken"], 5, &script);
    trigger.reconcile_ref(key(&trigger, "flaky"));
    trigger.reconcile_ref(key(&trigger, "broken"));
    until("four retries", || script.runs("flaky").len() == 5).await;
    let runs = script.runs("flaky");
    let gaps: Vec<u64> = runs.windows(2).map(|w| (w[1] - w[0]).as_secs()).collect();
    assert_eq!(gaps, [1, 2, 4, 4], "doubling from 1 s, capped at 4 s");
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(script.runs("flaky").len(), 5, "a success ends the retries");
    assert_eq!(
        script.runs("broken").len(),
        1,
        "a permanent error waits for a change"
    );
    trigger.reconcile_ref(key(&trigger, "broken"));
    until("the change's run", || script.runs("broken").len() == 2).await;
    shutdown.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn shutdown_starts_nothing_new_and_lets_running_reconciles_finish() {
    let script = Arc::new(Script::default());
    let (trigger, shutdown, task) = start(&["gate-a", "b"], 1, &script);
    trigger.reconcile_ref(key(&trigger, "gate-a"));
    until("the first run", || script.runs("gate-a").len() == 1).await;
    // One worker: b waits for gate-a.
    trigger.reconcile_ref(key(&trigger, "b"));
    shutdown.cancel();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!task.is_finished(), "the running reconcile is waited for");
    script.gate.add_permits(1);
    tokio::time::timeout(Duration::from_secs(60), task)
        .await
        .expect("the controller stops once the running reconcile ends")
        .unwrap();
    assert!(
        script.runs("b").is_empty(),
        "nothing new starts after shutdown"
    );
}

#[test]
fn handlers_see_changes_with_the_previous_state_and_relists_as_differences() {
    let (informer, mut writer) = Informer::<ConfigMap>::detached((), "test");
    informer.apply(&mut writer, &Event::Apply(mk_config_map("a", "1")));
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    informer.add_handler(move |change| {
        let version = |c: &ConfigMap| c.metadata.resource_version.clone().unwrap_or_default();
        let name = |c: &ConfigMap| c.metadata.name.clone().unwrap_or_default();
        log.lock().unwrap().push(match change {
            Change::Added(obj) => format!("added {} {}", name(obj), version(obj)),
            Change::Updated { old, new } => {
                format!("updated {} {}->{}", name(new), version(old), version(new))
            }
            Change::Deleted(obj) => format!("deleted {} {}", name(obj), version(obj)),
        });
    });
    informer.apply(&mut writer, &Event::Apply(mk_config_map("a", "2")));
    informer.apply(&mut writer, &Event::Apply(mk_config_map("b", "3")));
    informer.apply(&mut writer, &Event::Delete(mk_config_map("b", "4")));
    informer.apply(&mut writer, &Event::Apply(mk_config_map("c", "5")));
    // A relist that finds a changed, d new and c gone.
    informer.apply(&mut writer, &Event::Init);
    informer.apply(&mut writer, &Event::InitApply(mk_config_map("a", "6")));
    informer.apply(&mut writer, &Event::InitApply(mk_config_map("d", "7")));
    informer.apply(&mut writer, &Event::InitDone);
    let mut relist = seen.lock().unwrap().split_off(5);
    relist.sort();
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [
            "added a 1",
            "updated a 1->2",
            "added b 3",
            "deleted b 3",
            "added c 5"
        ]
    );
    assert_eq!(relist, ["added d 7", "deleted c 5", "updated a 2->6"]);
    assert!(informer.is_synced());
    assert_eq!(
        informer
            .get("ns", "a")
            .unwrap()
            .metadata
            .resource_version
            .as_deref(),
        Some("6")
    );
    assert!(informer.get("ns", "c").is_none());
    assert_eq!(informer.list_namespace("ns").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_waiter_sees_the_first_sync() {
    // Several controllers wait for one shared informer (kube-runtime 5.0.0's `Store::wait_until_ready`
    // woke only the last of three such waiters).
    let (informer, mut writer) = Informer::<ConfigMap>::detached((), "test");
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let informer = informer.clone();
            tokio::spawn(async move { informer.wait_synced().await })
        })
        .collect();
    tokio::task::yield_now().await;
    assert!(!informer.is_synced());
    informer.apply(&mut writer, &Event::Init);
    informer.apply(&mut writer, &Event::InitDone);
    for waiter in waiters {
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("every waiter wakes")
            .unwrap();
    }
}

/// A ConfigMap as the watcher hands it, with `data` of a type a ConfigMap cannot have.
fn unreadable_config_map(
    name: &str,
    version: &str,
) -> flotilla_client::lenient::Lenient<ConfigMap> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": version},
        "data": ["not", "a", "map"],
    }))
    .unwrap()
}

#[test]
fn a_relist_keeps_the_last_readable_version_of_an_object_that_became_unreadable() {
    let (informer, mut writer) = Informer::<ConfigMap>::detached((), "test");
    let readable = |event| informer.readable(event);
    let apply = |writer: &mut Writer<ConfigMap>, event: Option<Event<ConfigMap>>| {
        if let Some(event) = event {
            informer.apply(writer, &event);
        }
    };
    apply(&mut writer, Some(Event::Apply(mk_config_map("a", "1"))));
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    informer.add_handler(move |change| {
        if !matches!(change, Change::Added(_)) {
            log.lock().unwrap().push(format!("{change:?}"));
        }
    });
    // An update that cannot be read changes nothing; nor does a relist that finds it still unreadable, or an
    // object never readable.
    assert!(readable(Event::Apply(unreadable_config_map("a", "2"))).is_none());
    apply(&mut writer, Some(Event::Init));
    apply(
        &mut writer,
        readable(Event::InitApply(unreadable_config_map("a", "2"))),
    );
    apply(
        &mut writer,
        readable(Event::InitApply(unreadable_config_map("never", "3"))),
    );
    apply(&mut writer, Some(Event::InitDone));
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );
    let kept = informer.get("ns", "a").unwrap();
    assert_eq!(kept.metadata.resource_version.as_deref(), Some("1"));
    assert!(informer.get("ns", "never").is_none());
    // Deleted while unreadable, the cached version goes.
    apply(
        &mut writer,
        readable(Event::Delete(unreadable_config_map("a", "4"))),
    );
    assert!(informer.get("ns", "a").is_none());
    assert_eq!(seen.lock().unwrap().len(), 1);
}

/// With `ControllerPriorityQueue`, reconciles requested while an informer tells of its first list wait behind
/// those requested for changes; without, all take turns in the order they came.
#[tokio::test(start_paused = true)]
async fn objects_of_a_first_list_wait_behind_changes_when_prioritised() {
    for prioritised in [true, false] {
        let script = Arc::new(Script::default());
        let (trigger, shutdown, task) = start_with(
            &["gate", "listed-1", "listed-2", "changed"],
            1,
            &script,
            |controller| controller.prioritised(prioritised),
        );
        trigger.reconcile_ref(key(&trigger, "gate"));
        until("the gate holds the only permit", || {
            *script.running.lock().unwrap() == 1
        })
        .await;
        super::informer::listing(|| {
            trigger.reconcile_ref(key(&trigger, "listed-1"));
            trigger.reconcile_ref(key(&trigger, "listed-2"));
        });
        // Each waits for the permit before the next is requested.
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.reconcile_ref(key(&trigger, "changed"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        script.gate.add_permits(1);
        until("every object reconciled", || {
            script.order.lock().unwrap().len() == 4
        })
        .await;
        let expected = if prioritised {
            ["gate", "changed", "listed-1", "listed-2"]
        } else {
            ["gate", "listed-1", "listed-2", "changed"]
        };
        assert_eq!(
            *script.order.lock().unwrap(),
            expected,
            "prioritised: {prioritised}"
        );
        shutdown.cancel();
        task.await.unwrap();
    }
}

/// Handlers are told which additions belong to a first list: those of the informer's first list and the
/// cached objects a late handler is shown, not additions seen later or after a relist.
#[test]
fn additions_of_a_first_list_are_marked_as_listing() {
    let (informer, mut writer) = Informer::<ConfigMap>::detached((), "test");
    let seen: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let log = seen.clone();
    informer.add_handler(move |change| {
        if let Change::Added(obj) = change {
            let name = obj.metadata.name.clone().unwrap_or_default();
            log.lock()
                .unwrap()
                .push((name, super::informer::is_listing()));
        }
    });
    informer.apply(&mut writer, &Event::Init);
    informer.apply(&mut writer, &Event::InitApply(mk_config_map("listed", "1")));
    informer.apply(&mut writer, &Event::InitDone);
    informer.apply(&mut writer, &Event::Apply(mk_config_map("created", "2")));
    // A relist after a watch restart brings an object created meanwhile: a change, not a first list.
    informer.apply(&mut writer, &Event::Init);
    for (name, version) in [("listed", "1"), ("created", "2"), ("relisted", "3")] {
        informer.apply(&mut writer, &Event::InitApply(mk_config_map(name, version)));
    }
    informer.apply(&mut writer, &Event::InitDone);
    let late: Arc<Mutex<Vec<bool>>> = Arc::default();
    let late_log = late.clone();
    informer.add_handler(move |_| late_log.lock().unwrap().push(super::informer::is_listing()));
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("listed".to_owned(), true),
            ("created".to_owned(), false),
            ("relisted".to_owned(), false)
        ]
    );
    assert_eq!(*late.lock().unwrap(), [true, true, true]);
    assert!(!super::informer::is_listing());
}
