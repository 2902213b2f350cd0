use super::*;
use serde_json::json;

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")}})
}

#[tokio::test]
async fn writes_survive_reopen_and_rv_never_goes_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let res = ResKey::new("", "configmaps");
    {
        let store = Store::open(dir.path()).expect("open");
        for name in ["a", "b", "c"] {
            let w = store
                .write(&res, "default", name, false, |_| Ok(Outcome::Put(cm(name))))
                .await
                .expect("write");
            assert!(w.created);
        }
        let w = store
            .write(&res, "default", "b", false, |_| Ok(Outcome::Delete))
            .await
            .expect("delete");
        assert!(w.deleted);
        assert_eq!(w.object["metadata"]["resourceVersion"], "4");
        store.shutdown();
    }
    let store = Store::open(dir.path()).expect("reopen");
    assert_eq!(store.current_rv(), 4);
    let (rv, items) = store.list(&res, Some("default"));
    assert_eq!(rv, 4);
    let names: Vec<_> = items
        .iter()
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(names, vec!["a", "c"]);
    assert_eq!(store.by_uid("uid-c").map(|r| r.name), Some("c".to_string()));
    // A watch from before the restart is refused as too old; from now it is fine.
    assert!(matches!(
        store.watch(&res, None, Some(2)),
        Err(WatchRefused::TooOld(_))
    ));
    assert!(store.watch(&res, None, Some(4)).is_ok());
    assert!(matches!(
        store.watch(&res, None, Some(9)),
        Err(WatchRefused::TooNew(4))
    ));
    let w = store
        .write(&res, "default", "d", false, |_| Ok(Outcome::Put(cm("d"))))
        .await
        .expect("write");
    assert_eq!(w.object["metadata"]["resourceVersion"], "5");
}

#[tokio::test]
async fn closure_errors_and_dry_run_change_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let res = ResKey::new("", "configmaps");
    let e = store
        .write(&res, "default", "a", false, |_| {
            Err(ApiError::bad_request("no"))
        })
        .await;
    assert!(e.is_err());
    let w = store
        .write(&res, "default", "a", true, |_| Ok(Outcome::Put(cm("a"))))
        .await
        .expect("dry run");
    assert!(w.object["metadata"].get("resourceVersion").is_none());
    assert_eq!(store.current_rv(), 0);
    assert!(store.get(&res, "default", "a").is_none());
}

#[tokio::test]
async fn events_arrive_after_commit_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let res = ResKey::new("", "configmaps");
    let Ok(mut start) = store.watch(&res, None, None) else {
        panic!("watch refused")
    };
    assert_eq!(start.initial.as_ref().map(Vec::len), Some(0));
    let mut handles = Vec::new();
    let store2 = store.clone();
    for i in 0..20 {
        let s = store2.clone();
        let res = res.clone();
        handles.push(tokio::spawn(async move {
            let name = format!("o{i}");
            s.write(&res, "default", &name, false, |_| {
                Ok(Outcome::Put(cm(&name)))
            })
            .await
        }));
    }
    for h in handles {
        h.await.expect("join").expect("write");
    }
    let mut last = 0;
    for _ in 0..20 {
        let ev = start.rx.recv().await.expect("event");
        assert!(ev.rv > last);
        last = ev.rv;
    }
    assert_eq!(last, 20);
}

#[tokio::test]
async fn snapshot_rewinds_history() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let res = ResKey::new("", "configmaps");
    for name in ["a", "b"] {
        store
            .write(&res, "default", name, false, |_| Ok(Outcome::Put(cm(name))))
            .await
            .expect("write");
    }
    let at = store.current_rv();
    store
        .write(&res, "default", "c", false, |_| Ok(Outcome::Put(cm("c"))))
        .await
        .expect("write");
    store
        .write(&res, "default", "a", false, |_| Ok(Outcome::Delete))
        .await
        .expect("delete");
    let mut b2 = cm("b");
    b2["data"] = json!({"x": "y"});
    store
        .write(&res, "default", "b", false, move |_| Ok(Outcome::Put(b2)))
        .await
        .expect("update");
    let snap = store.snapshot(&res, None, at).await.unwrap_or_default();
    let names: Vec<_> = snap
        .iter()
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(names, vec!["a", "b"]);
    assert!(snap[1].get("data").is_none());
}

/// What a crash leaves behind: records in the log that redb never got. Opening replays them, checkpoints
/// them into redb and removes the log, so a second open reads the same state from redb alone.
#[tokio::test]
async fn log_left_by_a_crash_is_replayed_then_checkpointed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let res = ResKey::new("", "configmaps");
    {
        let store = Store::open(dir.path()).expect("open");
        for name in ["a", "b"] {
            store
                .write(&res, "default", name, false, |_| Ok(Outcome::Put(cm(name))))
                .await
                .expect("write");
        }
        store.shutdown();
    }
    // Records after redb's counter (2): c is created and a deleted; a record at or below it is ignored.
    let log_dir = dir.path().join("wal");
    let mut w = wal::Writer::create(&log_dir, 9).expect("segment");
    let mut buf = Vec::new();
    let stale = serde_json::to_vec(&cm("stale")).expect("json");
    wal::encode(
        &mut buf,
        2,
        [("ignored", Some(stale.as_slice()))].into_iter(),
    )
    .expect("encode");
    let c = serde_json::to_vec(&cm("c")).expect("json");
    let key_c = storage_key(&res, "default", "c");
    let key_a = storage_key(&res, "default", "a");
    wal::encode(
        &mut buf,
        4,
        [(key_c.as_str(), Some(c.as_slice())), (key_a.as_str(), None)].into_iter(),
    )
    .expect("encode");
    w.append(&buf).expect("append");
    w.append(&buf[..10]).expect("a torn tail");
    drop(w);
    for _ in 0..2 {
        let store = Store::open(dir.path()).expect("reopen");
        assert_eq!(store.current_rv(), 4);
        let names: Vec<String> = store
            .list(&res, Some("default"))
            .1
            .iter()
            .map(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["b", "c"]);
        assert!(wal::segments(&log_dir).expect("list").is_empty());
        store.shutdown();
    }
}
