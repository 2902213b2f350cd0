use super::*;
use serde_json::json;

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}")}})
}

/// Commits `change` to `default/name` over whatever is stored.
async fn commit(store: &Store, res: &ResKey, name: &str, change: Change) -> Written {
    let expect = Expect::of(store.get(res, "default", name).as_deref());
    store
        .commit(res, "default", name, expect, change)
        .await
        .expect("commit")
}

#[tokio::test]
async fn writes_survive_reopen_and_rv_never_goes_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let res = ResKey::new("", "configmaps");
    {
        let store = Store::open(dir.path()).expect("open");
        for name in ["a", "b", "c"] {
            let w = commit(&store, &res, name, Change::Put(cm(name))).await;
            assert!(w.created);
        }
        let w = commit(&store, &res, "b", Change::Delete).await;
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
    let w = commit(&store, &res, "d", Change::Put(cm("d"))).await;
    assert_eq!(w.object["metadata"]["resourceVersion"], "5");
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
            s.commit(
                &res,
                "default",
                &name,
                Expect::Absent,
                Change::Put(cm(&name)),
            )
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
        commit(&store, &res, name, Change::Put(cm(name))).await;
    }
    let at = store.current_rv();
    commit(&store, &res, "c", Change::Put(cm("c"))).await;
    commit(&store, &res, "a", Change::Delete).await;
    let mut b2 = cm("b");
    b2["data"] = json!({"x": "y"});
    commit(&store, &res, "b", Change::Put(b2)).await;
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
            commit(&store, &res, name, Change::Put(cm(name))).await;
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

/// A commit whose expectation no longer holds changes nothing.
#[tokio::test]
async fn commits_compare_and_swap_on_the_resource_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let res = ResKey::new("", "configmaps");
    let put = |v: &str| {
        let mut obj = cm("a");
        obj["data"] = json!({"k": v});
        Change::Put(obj)
    };
    let first = store
        .commit(&res, "default", "a", Expect::Absent, put("1"))
        .await
        .expect("create");
    assert!(matches!(
        store
            .commit(&res, "default", "a", Expect::Absent, put("2"))
            .await,
        Err(Error::Conflict)
    ));
    let at = Expect::of(Some(first.object.as_ref()));
    store
        .commit(&res, "default", "a", at, put("3"))
        .await
        .expect("update from the version read");
    assert!(matches!(
        store.commit(&res, "default", "a", at, put("4")).await,
        Err(Error::Conflict)
    ));
    assert!(matches!(
        store.commit(&res, "default", "a", at, Change::Delete).await,
        Err(Error::Conflict)
    ));
    let stored = store.get(&res, "default", "a").expect("stored");
    assert_eq!(stored["data"]["k"], "3");
    assert_eq!(store.current_rv(), 2);
}
